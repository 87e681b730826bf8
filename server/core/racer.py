"""A racer: one seat of a race, with their game, their times and their standing; and the
ranking of a race's racers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from engine.game import Game
from engine.view import Status
from wire.protocol import RankEntry, SeatInfo, SeatStatus


def ms(seconds: float) -> int:
    return round(seconds * 1000)


FINISHED_AS: dict[Status, SeatStatus] = {
    Status.WON: "won", Status.LOST: "lost", Status.RESIGNED: "resigned"}
"""A seat's status once the rules have ended its game."""


@dataclass(slots=True)
class Racer:
    player_id: str
    name: str
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

    def seat_info(self) -> SeatInfo:
        progress = self.game.progress() if self.game else None
        return SeatInfo(
            player_id=self.player_id, name=self.name, ready=self.ready, connected=self.connected,
            on_foundations=progress.on_foundations if progress else 0,
            total=progress.total if progress else 0, moves=progress.moves if progress else 0,
            status=self.status)


def ranking(racers: Iterable[Racer], started_at: float) -> list[RankEntry]:
    """Winners by time; then by cards home, then by who reached that count first."""
    start = started_at

    def key(racer: Racer) -> tuple[int, float, int, float]:
        if racer.status == "won":
            return (0, (racer.finished_at or 0) - start, 0, 0.0)
        reached_at = racer.reached_at - start if racer.reached_at is not None else 0.0
        return (1, 0.0, -racer.reached, reached_at)

    ordered = sorted(racers, key=key)
    return [RankEntry(
        rank=place, player_id=racer.player_id, name=racer.name, status=racer.status,
        time_ms=None if racer.finished_at is None else ms(racer.finished_at - start),
        on_foundations=racer.reached,
        reached_at_ms=None if racer.reached_at is None else ms(racer.reached_at - start),
        moves=len(racer.move_times)) for place, racer in enumerate(ordered, start=1)]
