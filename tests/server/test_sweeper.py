"""When the sweeper closes a connection (server.sweeper.overdue), for each kind of room it can
be in; the sweeps themselves are exercised end to end in test_abuse.py."""

from __future__ import annotations

from typing import Any, cast

from server.net.connection import Client, Elsewhere
from server.settings import Settings
from server.sweeper import HELLO_CLOSE, IDLE_CLOSE, longest_room_s, overdue

SETTINGS = Settings(hello_deadline_s=5, idle_timeout_s=60, lobby_max_s=600, countdown_s=3,
                    max_race_s=3600)


def client(room: Any = None, player_id: str | None = "p1", active: float = 0.0) -> Client:
    """Only what ``overdue`` reads: a client opened at 0 that last spoke at ``active``."""
    return cast(Client, _Fake(player_id=player_id, since=0.0, active=active, room=room))


class _Fake:
    def __init__(self, **fields: Any) -> None:
        self.__dict__.update(fields)


def test_no_hello_in_time() -> None:
    assert overdue(client(player_id=None), SETTINGS, 4.9) is None
    assert overdue(client(player_id=None), SETTINGS, 5.1) == HELLO_CLOSE


def test_idle_outside_a_room() -> None:
    assert overdue(client(active=10), SETTINGS, 69) is None
    assert overdue(client(active=10), SETTINGS, 71) == IDLE_CLOSE


def test_idle_in_a_room_of_another_worker_is_closed_once_no_room_can_still_be_on() -> None:
    """This worker cannot see the phase of another worker's room, so a silent connection there
    is kept as long as that room could still be racing, and no longer."""
    elsewhere = client(room=Elsewhere("ABCDE", "w2"))
    longest = longest_room_s(SETTINGS)
    assert longest == 600 + 3 + 3600
    assert overdue(elsewhere, SETTINGS, 61) is None
    assert overdue(elsewhere, SETTINGS, 60 + longest - 1) is None
    assert overdue(elsewhere, SETTINGS, 60 + longest + 1) == IDLE_CLOSE
