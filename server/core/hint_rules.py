"""Who may have a hint (or the live verdict), pure: ``refusal``.

A hint is for practice alone, never during a race with others, on a secret deal (ranked) or on
the daily deal (ranked); the server refuses with ``no_hints`` and says why. The solver sees the
hidden cards, so a hint is given with full knowledge; it is a move the player can make now, and
reveals no card. The solver processes that search hints are ``server.rooms.solver``'s.
"""

from __future__ import annotations

from server.core.errors import Refusal
from server.core.race import Phase, Race
from wire.protocol import ErrorCode


def refusal(race: Race, player_id: str) -> Refusal | None:
    """Why ``player_id`` may not have a hint in ``race`` now, or None."""
    racer = race.racers.get(player_id)
    if racer is None:
        return Refusal(ErrorCode.NOT_IN_ROOM, "you have no seat in this room's race")
    if race.terms.deal_kind == "daily":
        return Refusal(ErrorCode.NO_HINTS, "no hints on the daily deal: it is ranked")
    if len(race.racers) > 1:
        return Refusal(ErrorCode.NO_HINTS, "no hints in a race with others")
    if race.terms.deal_kind != "number":
        return Refusal(
            ErrorCode.NO_HINTS,
            "no hints on a secret deal: it is ranked; "
            "practise alone on a chosen deal number to have hints",
        )
    if race.phase is not Phase.RACING or racer.game is None or racer.finished:
        return Refusal(ErrorCode.NOT_RACING, "your game is not on")
    return None
