"""A rematch offer: who has accepted it, whom it waits for, and how each answer changes it.

An ``Offer`` is a value: each answer (an acceptance, a decline, a racer leaving or dropping)
makes the next one, and the last says how it ended. It knows nothing of the race it follows;
``server.core.rematch`` feeds it and says each change in the room.

Who is asked: every racer of the finished race still connected in the room; spectators are not.
The racer who makes the offer has accepted it. A racer not asked (one who came back after it
was made) may accept it too. The offer is agreed once nobody is waited for and somebody has
accepted; it ends without a rematch when a racer declines, or when every racer who had accepted
has left (the last of them is then named as declining, as withdrawing is).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from wire.protocol import RematchOffer, RematchPending


@dataclass(frozen=True, slots=True)
class Offer:
    accepted: tuple[str, ...]
    """The racers who have accepted, in the order they did."""
    waiting: tuple[str, ...]
    """The racers asked who have not answered, in seat order."""
    declined_by: str | None = None
    """Who ended the offer by declining it (or by leaving as the last to have accepted)."""

    @classmethod
    def made(cls, by: str, asked: Iterable[str]) -> Offer:
        """The offer ``by`` makes to the racers ``asked`` (those still in the room)."""
        return cls((by,), tuple(player for player in asked if player != by))

    @property
    def agreed(self) -> bool:
        """Everyone asked has accepted (or gone): the rematch is on."""
        return self.declined_by is None and not self.waiting and bool(self.accepted)

    @property
    def open(self) -> bool:
        """Still waiting for answers."""
        return self.declined_by is None and not self.agreed

    def accept(self, player_id: str) -> Offer:
        if player_id in self.accepted:
            return self
        return Offer(
            (*self.accepted, player_id),
            tuple(player for player in self.waiting if player != player_id),
        )

    def decline(self, player_id: str) -> Offer:
        return Offer(self.accepted, self.waiting, declined_by=player_id)

    def without(self, player_id: str) -> Offer:
        """The racer left the room or their connection dropped: nobody waits for them, and an
        acceptance of theirs no longer counts (a racer gone is not seated again)."""
        accepted = tuple(player for player in self.accepted if player != player_id)
        waiting = tuple(player for player in self.waiting if player != player_id)
        if not accepted:
            return Offer(accepted, waiting, declined_by=player_id)
        return Offer(accepted, waiting)

    def concerns(self, player_id: str) -> bool:
        return player_id in self.accepted or player_id in self.waiting

    def event(self, seq: int) -> RematchOffer:
        """The room event that says the offer as it is now."""
        return RematchOffer(
            seq=seq,
            accepted=list(self.accepted),
            waiting=list(self.waiting),
            declined_by=self.declined_by,
        )

    def pending(self) -> RematchPending:
        """The offer as the room's snapshot shows it while it is open."""
        return RematchPending(accepted=list(self.accepted), waiting=list(self.waiting))
