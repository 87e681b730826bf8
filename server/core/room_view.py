"""What a player may ask of a race without changing it: the room as it is now, their own
view of their game, what to send one who missed too much, and a move named in text."""

from __future__ import annotations

from engine.moves import Move
from server.core.race import Phase, Race
from server.core.views import view_model
from wire.protocol import Message, RoomState, YourView


def room_state(race: Race, request_id: str | None = None) -> RoomState:
    """The room as it is now, for one player (not a room event: its ``seq`` is the latest
    event's)."""
    return race.snapshot(request_id, race.events.seq)


def own_view(race: Race, player_id: str, request_id: str | None = None) -> YourView | None:
    """The player's view of their game, if they have one."""
    racer = race.racers.get(player_id)
    if racer is None or racer.game is None:
        return None
    return YourView(id=request_id, view=view_model(racer.game.view()))


def catch_up_state(race: Race) -> list[Message]:
    """Everything a player who missed too much needs: the room as it is now, and the result
    if the race is over."""
    return [room_state(race), *([race.result] if race.result else [])]


def legal_move_named(race: Race, player_id: str, text: str) -> Move | None:
    """The racer's legal move written ``text``, if they are racing and there is one
    (``Game.legal_move_named``): ``Race.move`` takes it as it would the parsed text."""
    racer = race.racers.get(player_id)
    if racer is None or racer.game is None or race.phase is not Phase.RACING:
        return None
    return racer.game.legal_move_named(text)
