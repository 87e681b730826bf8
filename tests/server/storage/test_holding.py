"""Who holds each race, in the database (server/storage/holding.py): taking races, leases, and the
fence every write of a race passes, on SQLite and PostgreSQL."""

from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import func, select

from server.core.said import MoveMade
from server.storage import holding
from server.storage.engine import make_engine
from server.storage.models import MoveRow, RaceRow
from server.storage.moves import MoveRecorder
from server.storage.races import create_race, record_start
from server.storage.results import record_results
from tests.server.storage.test_store import NOW, new_players, new_race, rank_entry
from tests.server.test_server import Sessions


async def held(sessions: Sessions, race_id: str) -> tuple[str | None, int]:
    async with sessions() as session:
        race = await session.get_one(RaceRow, race_id)
        return race.holder, race.holder_epoch


async def test_a_new_race_is_held_by_whoever_opened_it_at_epoch_1(sessions: Sessions) -> None:
    (ann,) = await new_players(sessions, "Ann")
    await create_race(
        sessions,
        race_id="r1",
        code="ABCD1234",
        rule_set="octagon",
        deal_kind="secret",
        seed=7,
        algorithm=1,
        rules=2,
        host_id=ann,
        seats_max=2,
        time_limit_s=None,
        holder="worker a",
    )
    assert await held(sessions, "r1") == ("worker a", 1)


async def test_a_race_leased_by_a_live_holder_is_not_taken_until_its_lease_runs_out(
    sessions: Sessions,
) -> None:
    (ann,) = await new_players(sessions, "Ann")
    race_id = await new_race(sessions, ann)
    [taken] = await holding.take(sessions, ["ABCD1234"], "worker a", NOW)
    assert (taken.id, taken.holder_epoch) == (race_id, 2)
    assert await holding.take(sessions, ["ABCD1234"], "worker b", NOW) == []
    assert await holding.holders(sessions, ["ABCD1234"]) == {"ABCD1234": "worker a"}

    assert await holding.renew(sessions, "worker a", NOW + timedelta(seconds=3)) == {race_id}
    later = NOW + timedelta(seconds=holding.LEASE_S + 1)
    assert await holding.take(sessions, ["ABCD1234"], "worker b", later) == []  # renewed
    [taken] = await holding.take(
        sessions, ["ABCD1234"], "worker b", later + timedelta(seconds=holding.LEASE_S)
    )
    assert taken.holder == "worker b" and taken.holder_epoch == 3
    assert await holding.epochs(sessions, [race_id]) == {race_id: 3}
    assert await holding.renew(sessions, "worker a", later) == set()  # a's room is taken

    await holding.release(sessions, "worker b")  # b stops: the race may be taken at once
    [taken] = await holding.take(sessions, ["ABCD1234"], "worker c", later)
    assert taken.holder == "worker c" and taken.holder_epoch == 4


async def test_the_only_server_takes_every_race_in_progress_whatever_the_leases(
    sessions: Sessions,
) -> None:
    (ann,) = await new_players(sessions, "Ann")
    race_id = await new_race(sessions, ann)
    await holding.take(sessions, None, "the server before", NOW)
    [taken] = await holding.take(sessions, None, "the server now", NOW, force=True)
    assert (taken.id, taken.holder, taken.holder_epoch) == (race_id, "the server now", 3)


async def test_moves_of_a_stale_epoch_are_not_stored_and_the_others_are(
    sessions: Sessions, database_url: str
) -> None:
    ann, bob = await new_players(sessions, "Ann", "Bob")
    kept, lost = await new_race(sessions, ann), await new_race(sessions, bob)
    for race_id, player in ((kept, ann), (lost, bob)):
        await record_start(sessions, race_id, NOW, [player], epoch=1)
    await holding.take(sessions, None, "another worker", NOW)  # both at epoch 2 now
    engine = make_engine(database_url)
    recorder = MoveRecorder(engine)
    try:
        fenced = await recorder(
            {
                kept: [MoveMade(player_id=ann, index=0, text="a", at_ms=1)],
                lost: [MoveMade(player_id=bob, index=0, text="b", at_ms=1)],
            },
            {kept: 2, lost: 1},
        )
    finally:
        await recorder.close()
        await engine.dispose()
    assert fenced == {lost}
    async with sessions() as session:
        stored = (
            await session.execute(select(MoveRow.race_id, func.count()).group_by(MoveRow.race_id))
        ).all()
    assert dict(stored) == {kept: 1}


async def test_a_start_or_result_of_a_stale_epoch_is_refused(sessions: Sessions) -> None:
    (ann,) = await new_players(sessions, "Ann")
    race_id = await new_race(sessions, ann)
    await record_start(sessions, race_id, NOW, [ann], epoch=1)
    await holding.take(sessions, None, "another worker", NOW)
    with pytest.raises(holding.Fenced):
        await record_start(sessions, race_id, NOW, [ann], epoch=1)
    with pytest.raises(holding.Fenced):
        await record_results(
            sessions,
            race_id,
            NOW + timedelta(minutes=1),
            [rank_entry(1, ann, "resigned", 60_000, 3)],
            epoch=1,
        )
    await record_results(
        sessions,
        race_id,
        NOW + timedelta(minutes=1),
        [rank_entry(1, ann, "resigned", 60_000, 3)],
        epoch=2,
    )
