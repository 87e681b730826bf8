"""A racer: one seat of a race, with their game, their times and their standing; and the
ranking of a race's racers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.game import Game
from engine.moves import RESIGN, Move
from engine.view import Status
from server.core.said import MoveMade
from server.core.views import pile_model
from wire.protocol import MoveAccepted, ProgressEvent, RankEntry, SeatInfo, SeatStatus


def ms(seconds: float) -> int:
    return round(seconds * 1000)


FINISHED_AS: dict[Status, SeatStatus] = {
    Status.WON: "won",
    Status.LOST: "lost",
    Status.RESIGNED: "resigned",
}
"""A seat's status once the rules have ended its game."""


@dataclass(slots=True)
class Racer:
    player_id: str
    name: str
    bot: bool = False
    """A bot account's seat (``Hello.bot``), marked on the room's seats and in the ranking."""
    ready: bool = False
    connected: bool = True
    away_since: float | None = None
    game: Game | None = None
    status: SeatStatus = "waiting"
    finished_at: float | None = None
    reached: int = 0
    reached_at: float | None = None
    move_times: list[float] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return self.finished_at is not None

    def last_moved(self, started_at: float) -> float:
        """When the racer last moved, or the race started if they have not."""
        return self.move_times[-1] if self.move_times else started_at

    def deal(self, game: Game, started_at: float) -> Game:
        """Take the game dealt. The cards the deal itself puts home (the Octagon's aces, Hidden
        Cards' cards dealt onto their own heaps) count as reached at the start, so a racer who
        never moves ranks with them. A racer never takes a move back, so the game keeps no
        undo records (one per move, of every racer's game)."""
        self.game = game
        self.reached, self.reached_at = game.foundation_count(), started_at
        return game

    def play(
        self, move: Move, now: float, started_at: float, request_id: str | None, seq: int
    ) -> tuple[MoveAccepted, MoveMade]:
        """Play a move (``IllegalMoveError`` if it is not legal) at ``now``: the reply to the
        mover, with the ``seq`` of the progress event the room hears of it, and the move to
        store. A move that ends the game finishes the racer."""
        game = self.game
        assert game is not None
        events = game.play(move)
        made = self._made(now, started_at)
        # Only the piles the engine says the move changed are turned into what the player sees
        # (the profile showed whole views, then whole tables compared, as the largest cost).
        changed = [pile_model(pile.seen()) for pile in game.changed_piles()]
        progress, outcome = game.progress(), game.outcome()
        if progress.on_foundations > self.reached:
            self.reached, self.reached_at = progress.on_foundations, now
        if outcome.is_over:
            self.status, self.finished_at = FINISHED_AS[outcome.status], now
        return MoveAccepted(
            id=request_id,
            move=str(move),
            events=[str(event) for event in events],
            changed=changed,
            legal_moves=[str(m) for m in game.legal_moves()],
            status=outcome.status.value,
            reason=outcome.reason,
            on_foundations=progress.on_foundations,
            moves=progress.moves,
            notes=game.notes(),
            seq=seq,
        ), made

    def resign(self, now: float, started_at: float) -> list[MoveMade]:
        """Resign a game still going (a racer who leaves, or whom a deadline finishes): the
        resignation to store, if there was a game to resign."""
        if self.game is None or self.game.outcome().is_over:
            return []
        self.game.play(RESIGN)
        return [self._made(now, started_at)]

    def _made(self, now: float, started_at: float) -> MoveMade:
        """The move just played, at ``now``: noted, and to store."""
        assert self.game is not None
        self.move_times.append(now)
        return MoveMade(
            self.player_id,
            len(self.move_times) - 1,
            str(self.game.history[-1]),
            ms(now - started_at),
        )

    def progress_event(self, seq: int) -> ProgressEvent:
        assert self.game is not None
        progress = self.game.progress()
        return ProgressEvent(
            seq=seq,
            player_id=self.player_id,
            on_foundations=progress.on_foundations,
            total=progress.total,
            moves=progress.moves,
            status=self.status,
        )

    def seat_info(self) -> SeatInfo:
        progress = self.game.progress() if self.game else None
        return SeatInfo(
            player_id=self.player_id,
            name=self.name,
            ready=self.ready,
            connected=self.connected,
            on_foundations=progress.on_foundations if progress else 0,
            total=progress.total if progress else 0,
            moves=progress.moves if progress else 0,
            status=self.status,
            bot=self.bot,
        )


def ranking(racers: Iterable[Racer], started_at: float) -> list[RankEntry]:
    """Winners by time; then by cards home, then by who reached that count first. Racers who
    did not win, with as many cards home reached at the same millisecond (or never: neither
    moved a card home), share a place (1, 1, 3), listed in seat order; a winner's place is
    their own."""
    start = started_at

    def key(racer: Racer) -> tuple[int, float, int, float]:
        if racer.status == "won":
            return (0, (racer.finished_at or 0) - start, 0, 0.0)
        reached_at = racer.reached_at - start if racer.reached_at is not None else 0.0
        return (1, 0.0, -racer.reached, reached_at)

    entries: list[RankEntry] = []
    for place, racer in enumerate(sorted(racers, key=key), start=1):
        entry = RankEntry(
            rank=place,
            player_id=racer.player_id,
            name=racer.name,
            status=racer.status,
            time_ms=None if racer.finished_at is None else ms(racer.finished_at - start),
            on_foundations=racer.reached,
            reached_at_ms=None if racer.reached_at is None else ms(racer.reached_at - start),
            moves=len(racer.move_times),
            bot=racer.bot,
        )
        if entries and _equal_without_a_win(entries[-1], entry):
            entry = entry.model_copy(update={"rank": entries[-1].rank})
        entries.append(entry)
    return entries


def _equal_without_a_win(above: RankEntry, entry: RankEntry) -> bool:
    """Neither won, and their results are equal as published (``reached_at_ms`` in ms)."""
    return (
        "won" not in (above.status, entry.status)
        and above.on_foundations == entry.on_foundations
        and above.reached_at_ms == entry.reached_at_ms
    )
