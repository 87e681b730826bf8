"""Move logs (docs/move-log.md) and replay: re-deal from the seed and re-apply every move.

A log names the rule set, the seed, the deal algorithm version, the rules version and the moves
in order, and may claim an outcome. A log without a rules version was recorded under version 1,
and is replayed under it, so it keeps the outcome it had. ``replay`` validates every move (so a
forged log is caught at the first illegal move); ``replay_trusted`` skips validation for logs
that were validated when they were recorded.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.deal import DEAL_ALGORITHMS, deal_number
from engine.errors import EngineError, IllegalMoveError, InvalidLogError
from engine.game import RULES_VERSION, RULES_VERSIONS, Game
from engine.moves import Move
from engine.registry import find_rule_set
from engine.view import Outcome, Status

LOG_FORMAT = "patience-race/move-log"
LOG_VERSION = 1


@dataclass(frozen=True)
class MoveLog:
    rule_set: str
    seed: int
    algorithm: int
    moves: tuple[Move, ...]
    claimed_status: Status | None = None
    times_ms: tuple[int, ...] | None = field(default=None, compare=False)
    """Milliseconds from the start of the game to each move, when the log was recorded live."""
    rules: int = RULES_VERSION

    @classmethod
    def of(cls, game: Game, times_ms: list[int] | None = None) -> MoveLog:
        """The log of a dealt game; a game set up from a position has no deal to replay."""
        if game.seed is None:
            raise InvalidLogError(
                "a game set up from a position has no move log: it has no "
                "deal to replay from (save its position instead)"
            )
        outcome = game.outcome()
        return cls(
            game.name,
            game.seed,
            game.algorithm,
            tuple(game.history),
            outcome.status,
            None if times_ms is None else tuple(times_ms),
            game.rules,
        )

    def to_json(self) -> dict[str, Any]:
        if self.times_ms is None:
            moves: list[Any] = [str(move) for move in self.moves]
        else:
            moves = [
                {"move": str(move), "time_ms": time}
                for move, time in zip(self.moves, self.times_ms, strict=True)
            ]
        data: dict[str, Any] = {
            "format": LOG_FORMAT,
            "version": LOG_VERSION,
            "rule_set": self.rule_set,
            "seed": str(self.seed),
            "algorithm": self.algorithm,
            "rules": self.rules,
            "moves": moves,
        }
        if self.claimed_status is not None:
            data["outcome"] = self.claimed_status.value
        return data

    @classmethod
    def from_json(cls, data: Any) -> MoveLog:
        if not isinstance(data, dict):
            raise InvalidLogError("a move log is a JSON object")
        if data.get("format") != LOG_FORMAT or data.get("version") != LOG_VERSION:
            raise InvalidLogError(
                f"not a move log: expected format {LOG_FORMAT!r} version {LOG_VERSION}"
            )
        try:
            rule_set = data["rule_set"]
            seed_text = data["seed"]
            algorithm = data["algorithm"]
            raw_moves = data["moves"]
        except KeyError as error:
            raise InvalidLogError(
                f"a move log needs rule_set, seed, algorithm and moves (no {error})"
            ) from None
        find_rule_set(rule_set)
        try:
            seed = deal_number(seed_text if isinstance(seed_text, str) else "")
        except ValueError:
            raise InvalidLogError(
                f"the seed is a 64-bit deal number written as a string of the "
                f"digits 0-9, not {seed_text!r}"
            ) from None
        if algorithm not in DEAL_ALGORITHMS:
            raise InvalidLogError(f"unknown deal algorithm version {algorithm!r}")
        rules = data.get("rules", 1)
        if type(rules) is not int or rules not in RULES_VERSIONS:
            raise InvalidLogError(f"unknown rules version {rules!r}")
        if not isinstance(raw_moves, list):
            raise InvalidLogError("moves is a list")
        moves, times = [], []
        for number, entry in enumerate(raw_moves, start=1):
            text, time = (entry, None) if isinstance(entry, str) else _timed(entry, number)
            try:
                moves.append(Move.parse(text))
            except EngineError as error:
                raise InvalidLogError(f"move {number}: {error}") from None
            times.append(time)
        claimed = data.get("outcome")
        try:
            status = None if claimed is None else Status(claimed)
        except ValueError:
            raise InvalidLogError(f"unknown outcome {claimed!r}") from None
        timed = all(time is not None for time in times) and bool(times)
        return cls(
            rule_set,
            seed,
            algorithm,
            tuple(moves),
            status,
            tuple(t for t in times if t is not None) if timed else None,
            rules,
        )

    @classmethod
    def load(cls, path: str | Path) -> MoveLog:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
            raise InvalidLogError(f"cannot read {path}: {error}") from None
        return cls.from_json(data)

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=2) + "\n", encoding="utf-8")


def _timed(entry: Any, number: int) -> tuple[str, int | None]:
    if not (isinstance(entry, dict) and isinstance(entry.get("move"), str)):
        raise InvalidLogError(f'move {number}: a move is a text or {{"move": text, ...}}')
    time = entry.get("time_ms")
    if time is not None and not isinstance(time, int):
        raise InvalidLogError(f"move {number}: time_ms is a whole number")
    return entry["move"], time


class ReplayError(EngineError):
    """A log move was refused during replay; ``index`` is 0-based."""

    def __init__(self, index: int, error: IllegalMoveError) -> None:
        super().__init__(f"move {index + 1} ({error.move}) is illegal: {error.reason}")
        self.index = index
        self.error = error


def new_game(log: MoveLog) -> Game:
    return find_rule_set(log.rule_set)(log.seed, log.algorithm, rules=log.rules)


def replay(log: MoveLog) -> Game:
    """Re-deal and re-apply every move with validation; raise ``ReplayError`` at the first
    illegal one."""
    game = new_game(log)
    for index, move in enumerate(log.moves):
        try:
            game.play(move)
        except IllegalMoveError as error:
            raise ReplayError(index, error) from None
    return game


def replay_trusted(log: MoveLog) -> Game:
    """Re-deal and re-apply every move without validation (logs validated when recorded)."""
    game = new_game(log)
    for move in log.moves:
        game.push(move)
    return game


def check_claim(log: MoveLog, outcome: Outcome) -> str | None:
    """A sentence if the outcome the log claims differs from the replayed one, else None."""
    if log.claimed_status is not None and log.claimed_status is not outcome.status:
        return f"the log claims {log.claimed_status}, the replay gives {outcome.status}"
    return None
