"""A race rebuilt from what was stored, after a restart or a dead worker's: its racers' moves
replayed with their times (``server.rooms.room.restore_race`` reads them)."""

from __future__ import annotations

from collections.abc import Collection, Sequence

from engine.moves import Move
from server.core.race import Phase, Race
from server.core.racer import FINISHED_AS, Racer
from server.core.room_events import EVENTS_KEPT, RoomEvents
from server.core.terms import RaceTerms


def resume_race(
    terms: RaceTerms,
    *,
    host_id: str,
    host_name: str,
    started_at: float | None,
    racers: list[tuple[str, str, list[tuple[str, int]]]],
    now: float,
    bots: Collection[str] = (),
    events_kept: int = EVENTS_KEPT,
    invited: Sequence[str] | None = None,
    join_by: float | None = None,
) -> Race:
    """A race rebuilt after a restart from what was stored: each racer's moves replayed
    with their times; ``bots``, the racers (and host) whose accounts are bots. Everyone counts
    as away since ``now`` (the grace period applies); a race that never started reopens its
    lobby with the host alone, a quick race's with nobody seated and the same players
    ``invited``, until ``join_by``. Call its ``catch_up`` next."""
    # Its room events are numbered on from the time of the rebuilding, in ms: above any
    # number the race's earlier life gave (it made fewer than one event a millisecond), so a
    # client resuming with a last_seq of that life gets a full resync, never wrong events.
    race = Race(
        terms,
        host_id=host_id,
        host_name=host_name,
        host_bot=host_id in bots,
        events=RoomEvents(events_kept, first_seq=round(now * 1000)),
        invited=invited if started_at is None else None,
        join_by=join_by,
    )
    for racer in race.racers.values():
        racer.connected, racer.away_since = False, now
    if started_at is None:
        return race
    race.phase = Phase.RACING
    race.starts_at = race.started_at = started_at
    race.racers = {}
    for player_id, name, moves in racers:
        racer = race.racers[player_id] = Racer(
            player_id,
            name,
            player_id in bots,
            connected=False,
            away_since=now,
            status="racing",
        )
        game = racer.deal(terms.new_game(), started_at)
        for text, at_ms in moves:
            when = started_at + at_ms / 1000
            game.push(Move.parse(text))
            racer.move_times.append(when)
            if game.foundation_count() > racer.reached:
                racer.reached, racer.reached_at = game.foundation_count(), when
        # What the replay changed is no news: a racer who comes back is sent their whole
        # view, and their next move only the piles it changes.
        game.changed_piles()
        outcome = game.outcome()
        if outcome.is_over:
            racer.status = FINISHED_AS[outcome.status]
            racer.finished_at = racer.move_times[-1] if racer.move_times else started_at
    return race
