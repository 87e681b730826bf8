"""Which lobbies the list of open public rooms shows, and in what order: pure.

A room is listed while its host has made it public (``create_room.public``), it is in its lobby
and it has a free seat. The list shows at most ``LISTED``, the addresses they were opened from
in turn (``in_turn``): the newest lobby of each address, newest first, then the second newest of
each, and so on. One address holding many lobbies cannot fill the list (60 lobbies of one
address's 10 players hid every other room), and how many it may hold is bounded besides
(``server.rooms.room.public_lobbies``, ``settings.public_lobbies_per_*``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from server.core.race import Phase, Race

LISTED = 50
"""The most rooms the list shows."""


def entry(race: Race) -> dict[str, Any] | None:
    """The room as the list shows it, or None when it is not to be listed."""
    host = race.racers.get(race.host_id)
    if (
        not race.terms.public
        or race.phase is not Phase.LOBBY
        or host is None
        or len(race.racers) >= race.terms.seats_max
    ):
        return None
    return {
        "code": race.terms.code,
        "rule_set": race.terms.rule_set,
        "host": host.name,
        "racers": len(race.racers),
        "seats": race.terms.seats_max,
        "deal_kind": race.terms.deal_kind,
        "time_limit_s": race.terms.time_limit_s,
    }


def in_turn(listed: Iterable[tuple[float, str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Entries (when opened, by whom, the entry) in the list's order, at most ``LISTED``:
    each address's newest first, newest first; then each address's second newest, and so on.
    An honest room is shown while fewer than ``LISTED`` addresses have a newer one, however
    many lobbies each holds."""
    turns: Counter[str] = Counter()
    ranked = []
    for _, by, listing in sorted(listed, key=lambda item: item[0], reverse=True):
        ranked.append((turns[by], listing))
        turns[by] += 1
    ranked.sort(key=lambda item: item[0])  # stable: newest first within a turn
    return [listing for _, listing in ranked[:LISTED]]
