"""When a connection or a lobby is past its time (server.core.deadlines), for each kind of room
a connection can be in; the sweeps themselves are exercised end to end in test_abuse.py."""

from __future__ import annotations

from server.core.deadlines import HELLO_CLOSE, IDLE_CLOSE, Deadlines, Whereabouts
from server.settings import Settings
from server.sweeper import deadlines

RULES = deadlines(
    Settings(
        hello_deadline_s=5,
        idle_timeout_s=60,
        lobby_max_s=600,
        lobby_empty_s=120,
        countdown_s=3,
        max_race_s=3600,
    )
)


def close(
    now: float,
    active: float = 0.0,
    said_hello: bool = True,
    where: Whereabouts = Whereabouts.NO_ROOM,
) -> tuple[int, str] | None:
    """For a connection opened at 0 that last spoke at ``active``."""
    return RULES.connection_close(
        said_hello=said_hello, since=0.0, active=active, where=where, now=now
    )


def test_no_hello_in_time() -> None:
    assert close(4.9, said_hello=False) is None
    assert close(5.1, said_hello=False) == HELLO_CLOSE


def test_idle_outside_a_room_and_in_a_quiet_one() -> None:
    for where in (Whereabouts.NO_ROOM, Whereabouts.QUIET_ROOM):
        assert close(69, active=10, where=where) is None
        assert close(71, active=10, where=where) == IDLE_CLOSE


def test_a_racer_is_never_closed_for_thinking() -> None:
    assert close(10_000, active=10, where=Whereabouts.RACING_ROOM) is None


def test_idle_in_a_room_of_another_worker_is_closed_once_no_room_can_still_be_on() -> None:
    """This worker cannot see the phase of another worker's room, so a silent connection there
    is kept as long as that room could still be racing, and no longer."""
    longest = RULES.longest_room_s
    assert longest == 600 + 3 + 3600
    assert close(61, where=Whereabouts.ELSEWHERE) is None
    assert close(60 + longest - 1, where=Whereabouts.ELSEWHERE) is None
    assert close(60 + longest + 1, where=Whereabouts.ELSEWHERE) == IDLE_CLOSE


def test_a_lobby_expires_when_too_old_or_empty_too_long() -> None:
    assert not RULES.lobby_expired(opened=0, empty_since=None, now=599)
    assert RULES.lobby_expired(opened=0, empty_since=None, now=601)
    assert not RULES.lobby_expired(opened=0, empty_since=100, now=219)
    assert RULES.lobby_expired(opened=0, empty_since=100, now=221)


def test_the_sweep_looks_often_enough() -> None:
    assert RULES.interval() == 1.0
    assert (
        Deadlines(
            hello_s=0.2, idle_s=60, lobby_empty_s=60, lobby_max_s=60, longest_room_s=60
        ).interval()
        == 0.05
    )
