"""A rematch: the next race of a room whose race is over, as pure as the race itself.

Who may ask, and what the next race keeps, are decided here; the shell (``server.rooms.host``)
draws the new deal, stores the new race and puts it in the room. The new race has the room's
code, rule set and options (seats, time limit, deal kind, a winnable deal asked for, listed or
not), a new race id and deal (a new secret seed and so a new commitment, or the same chosen
number), and its lobby: every racer not ready. Spectators stay.

A racer of the finished race still in the room (connected) keeps their seat. One who left the
room or whose connection dropped is not seated again: their seat is free, and they may join the
new lobby like anyone (or spectate). The host stays host if still in the room; otherwise the
racer who asked for the rematch is (or, should they be gone too by then, the first racer still
there).

The new race goes on numbering the room's events (``server.core.room_events``): its first is the
``room`` event in phase ``lobby``, one ``seq`` after the finished race's last.
"""

from __future__ import annotations

from dataclasses import replace

from server.core.errors import RaceError
from server.core.race import Phase, Race
from server.core.racer import Racer
from server.core.said import Said
from wire.protocol import ErrorCode


def may_rematch(race: Race, player_id: str) -> None:
    """Raise the ``RaceError`` that refuses the player's rematch, if any."""
    if player_id not in race.racers:
        raise RaceError(
            ErrorCode.NOT_IN_ROOM, "only a racer seated in this room may ask for a rematch"
        )
    if race.terms.deal_kind == "daily":
        raise RaceError(ErrorCode.NO_REMATCH, "the daily deal is played once a day: no rematch")
    if race.phase is not Phase.FINISHED:
        raise RaceError(ErrorCode.NOT_OVER, "a rematch is for once the race is over")


def rematch(
    race: Race, player_id: str, *, race_id: str, seed: int, algorithm: int, winnable: bool | None
) -> tuple[Race, Said]:
    """The room's next race, asked for by ``player_id``, and the room event that says so.
    ``seed`` is the new deal's (the same number for a chosen deal); ``winnable`` what drawing
    it found, as for a new room (``RoomState.winnable``)."""
    may_rematch(race, player_id)
    staying = [racer for racer in race.racers.values() if racer.connected]
    if not staying:
        raise RaceError(ErrorCode.NOT_IN_ROOM, "no racer is left in this room")
    host = next(
        racer
        for racer in sorted(
            staying,
            key=lambda racer: (racer.player_id != race.host_id, racer.player_id != player_id),
        )
    )
    following = Race(
        replace(race.terms, race_id=race_id, seed=seed, algorithm=algorithm, winnable=winnable),
        host_id=host.player_id,
        host_name=host.name,
        events=race.events,
    )
    for racer in staying:
        if racer.player_id not in following.racers:
            following.racers[racer.player_id] = Racer(racer.player_id, racer.name)
    following.spectators = set(race.spectators)
    return following, following.announce()
