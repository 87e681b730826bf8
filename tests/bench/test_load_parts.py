"""The parts of bench/load.py that decide what is measured: which servers, and who sits where."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bench.load_bots import SEATS, Matchmaker
from bench.load_servers import ServerSpec


def test_a_server_spec_names_its_checkout_workers_seating_and_settings() -> None:
    spec = ServerSpec.parse("w2,checkout=/tmp/x,workers=2,seating=local,event_loop=uvloop")
    assert spec == ServerSpec(
        "w2", Path("/tmp/x").resolve(), 2, (("EVENT_LOOP", "uvloop"),), "local"
    )
    assert ServerSpec.parse("ours") == ServerSpec()
    with pytest.raises(ValueError):
        ServerSpec.parse("echo")


async def test_local_seating_fills_a_room_per_worker_and_mixed_one_for_all() -> None:
    matchmaker = Matchmaker(["klondike"])
    local = [matchmaker.seat(worker=index % 2, queue=index % 2) for index in range(2 * SEATS)]
    rooms = {id(seat): seat for seat, _ in local}
    assert len(rooms) == 2 and {seat.worker for seat in rooms.values()} == {0, 1}
    assert all(seat.worker == index % 2 for index, (seat, _) in enumerate(local))
    mixed = [matchmaker.seat(worker=index % 2) for index in range(SEATS)]
    assert len({id(seat) for seat, _ in mixed}) == 1 and [host for _, host in mixed] == [
        True,
        False,
        False,
        False,
    ]
    await asyncio.sleep(0)
