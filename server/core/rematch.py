"""A rematch: an offer the racers of a finished race answer, then the room's next race, as pure
as the race itself.

A racer seated in the finished race makes the offer (``rematch``); every racer still in the room
is asked (``server.core.offer``), and each answer, and each racer asked who leaves or drops, is
said to everyone in the room as a ``rematch_offer`` event. The offer open is in the room's
snapshot (``RoomState.rematch``). Once everyone asked has accepted, the shell
(``server.rooms.opening``) draws the new deal, stores the new race and puts it in the room.

The new race has the room's code, rule set and options (seats, time limit, deal kind, a winnable
deal asked for, listed or not), a new race id and deal (a new secret seed and so a new
commitment, or the same chosen number), and its lobby: every racer not ready. Spectators stay.

A racer who accepted and is still in the room (connected) keeps their seat. One who left the
room or whose connection dropped is not seated again: their seat is free, and they may join the
new lobby like anyone (or spectate). The host stays host if seated again; otherwise the racer
who made the offer is (or, should they be gone by then, the first racer seated).

The new race goes on numbering the room's events (``server.core.room_events``): its first is the
``room`` event in phase ``lobby``, one ``seq`` after the finished race's last.
"""

from __future__ import annotations

from dataclasses import replace

from server.core.errors import RaceError
from server.core.offer import Offer
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


def answer(race: Race, player_id: str, accept: bool) -> tuple[Said, Offer | None]:
    """A racer's ``rematch``: make the offer, or accept or decline the one open. What it said in
    the room, and the offer if that made it agreed (the rematch is then the shell's to make). A
    decline with no offer open changes nothing."""
    may_rematch(race, player_id)
    offer = race.offer
    if offer is None:
        if not accept:
            return Said(), None
        asked = (racer.player_id for racer in race.racers.values() if racer.connected)
        return _changed(race, Offer.made(player_id, asked))
    answered = offer.accept(player_id) if accept else offer.decline(player_id)
    return (Said(), None) if answered is offer else _changed(race, answered)


def racer_gone(race: Race, player_id: str) -> tuple[Said, Offer | None]:
    """The racer left the room or their connection dropped: the offer open, if it concerns
    them, no longer does (and may be agreed by that, or over)."""
    offer = race.offer
    if offer is None or not offer.concerns(player_id):
        return Said(), None
    return _changed(race, offer.without(player_id))


def _changed(race: Race, offer: Offer) -> tuple[Said, Offer | None]:
    race.offer = offer if offer.open else None
    said = Said([race.events.say(offer.event(race.events.next_seq))])
    return said, offer if offer.agreed else None


def rematch(
    race: Race, offer: Offer, *, race_id: str, seed: int, algorithm: int, winnable: bool | None
) -> tuple[Race, Said]:
    """The room's next race, agreed by ``offer``, and the room event that says so. ``seed`` is
    the new deal's (the same number for a chosen deal); ``winnable`` what drawing it found, as
    for a new room (``RoomState.winnable``)."""
    if race.phase is not Phase.FINISHED:
        raise RaceError(ErrorCode.NOT_OVER, "a rematch is for once the race is over")
    staying = [
        racer
        for racer in race.racers.values()
        if racer.connected and racer.player_id in offer.accepted
    ]
    if not staying:
        raise RaceError(ErrorCode.NOT_IN_ROOM, "no racer who accepted is left in this room")
    maker = offer.accepted[0]
    host = next(
        racer
        for racer in sorted(
            staying,
            key=lambda racer: (racer.player_id != race.host_id, racer.player_id != maker),
        )
    )
    following = Race(
        replace(race.terms, race_id=race_id, seed=seed, algorithm=algorithm, winnable=winnable),
        host_id=host.player_id,
        host_name=host.name,
        host_bot=host.bot,
        events=race.events,
    )
    for racer in staying:
        if racer.player_id not in following.racers:
            following.racers[racer.player_id] = Racer(racer.player_id, racer.name, racer.bot)
    following.spectators = set(race.spectators)
    return following, following.announce()
