"""Fair-play signals on a rated race's racer, and the verdict they give (issue 27): pure, fed a
racer's stored moves and the times they were made.

Three signals, each counted only from a minimum of evidence (a short game says nothing):

- **fast replies** (``fast_share``): the share of moves made within ``FAST_REPLY_MS`` of the last
  frame the server sent the racer before it. That frame is the acknowledgement of their
  previous move (or, for the first move, the race's start); it is sent once the previous move
  is committed, a few milliseconds after the time stored with it, so the interval between two
  stored moves is what is measured: it is never shorter than the racer's true reply time, so
  the share is, if anything, an undercount. A person sees the cards move, decides and moves
  the mouse: a reply within 150 ms now and then (a move planned ahead), but not most of them;
  a program replies in the round trip.
- **interval spread** (``interval_cv``, the coefficient of variation of the intervals, with
  their median for the record): a person's intervals spread widely (a card found at once, a
  long look at the table: roughly lognormal, CV 0.5 and above); a program waiting a fixed pace
  between moves barely varies.
- **solver agreement** (``agreement``, from ``agreement_of``): of the positions where the
  deal was still winnable (by the solver's search, seeing the hidden cards) and more than one
  move was open, the share where the racer's move was the solver's own (the first move of the
  winning line it found). Beside it, ``kept``: the share where the racer's move kept the deal
  winnable, whatever move it was. Only the first is judged: in the Octagon nearly every move
  out of a winnable position keeps it winnable (random and greedy play kept it in 98-100 % of
  them, docs/fair-play.md), so ``kept`` tells a solver from a person only in the rare deals where
  a misplay loses, while a racer who plays the solver's line agrees with it at every move and
  a player who sends every card home it can about four times in five.

``judge`` turns the signals into a ``Verdict``: flagged when any signal counted passes its
threshold. The thresholds and the figures behind them are in docs/fair-play.md
(``bench/fairplay_figures.py`` measures them).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from engine.moves import Move
from engine.registry import find_rule_set
from engine.solver import Budget, Result, solve

FAST_REPLY_MS = 150
"""A reply this soon after the server's last frame is a fast one."""
MIN_TIMED_MOVES = 20
"""The timing signals count from this many timed moves (resignations left out)."""
FAST_SHARE_LIMIT = 0.5
"""Flagged when at least this share of the moves are fast replies."""
SPREAD_LIMIT = 0.2
"""Flagged when the intervals' coefficient of variation is below this."""
MIN_JUDGED = 20
"""Solver agreement counts from this many positions judged."""
AGREEMENT_LIMIT = 0.95
"""Flagged when at least this share of the judged moves were the solver's own."""
SEARCH_S = 0.25
"""The solver's budget for each position searched for the agreement."""


@dataclass(frozen=True, slots=True)
class Agreement:
    """What the solver says of a racer's moves: ``judged`` positions (winnable, several moves
    open, and the position after the move decided), of which the move ``kept`` the deal
    winnable in so many, and was the first move of the solver's own line in ``followed``."""

    judged: int
    kept: int
    followed: int


@dataclass(frozen=True, slots=True)
class Signals:
    """A racer's signals in one race (None: not measurable, e.g. fewer than two moves)."""

    moves: int
    """Timed moves (resignations left out)."""
    fast_share: float | None
    interval_cv: float | None
    median_ms: float | None
    judged: int = 0
    agreement: float | None = None
    """The share of the judged moves that were the solver's own."""
    kept: float | None = None
    """The share of the judged moves that kept the deal winnable."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Signals:
        return cls(**data)


@dataclass(frozen=True, slots=True)
class Verdict:
    """The signals, and those that passed their threshold (``reasons``: ``fast_replies``,
    ``even_intervals``, ``solver_agreement``); flagged when any did."""

    signals: Signals
    reasons: tuple[str, ...]

    @property
    def flagged(self) -> bool:
        return bool(self.reasons)


def timing(at_ms: Sequence[int]) -> Signals:
    """The timing signals of a racer's moves made at these times (ms from the race's start,
    in order, resignations left out). Each move's reply time is counted from the previous
    move's time, the first move's from the start (0)."""
    intervals = [later - earlier for earlier, later in zip([0, *at_ms], at_ms, strict=False)]
    if not intervals:
        return Signals(0, None, None, None)
    fast = sum(interval <= FAST_REPLY_MS for interval in intervals) / len(intervals)
    mean = statistics.fmean(intervals)
    cv = statistics.pstdev(intervals) / mean if len(intervals) > 1 and mean > 0 else None
    return Signals(len(intervals), fast, cv, statistics.median(intervals))


def with_agreement(signals: Signals, agreement: Agreement) -> Signals:
    return Signals(
        signals.moves,
        signals.fast_share,
        signals.interval_cv,
        signals.median_ms,
        agreement.judged,
        agreement.followed / agreement.judged if agreement.judged else None,
        agreement.kept / agreement.judged if agreement.judged else None,
    )


def judge(signals: Signals) -> Verdict:
    """The verdict on a racer's signals: each counted from its minimum of evidence."""
    reasons: list[str] = []
    if signals.moves >= MIN_TIMED_MOVES:
        if signals.fast_share is not None and signals.fast_share >= FAST_SHARE_LIMIT:
            reasons.append("fast_replies")
        if signals.interval_cv is not None and signals.interval_cv < SPREAD_LIMIT:
            reasons.append("even_intervals")
    if (
        signals.judged >= MIN_JUDGED
        and signals.agreement is not None
        and signals.agreement >= AGREEMENT_LIMIT
    ):
        reasons.append("solver_agreement")
    return Verdict(signals, tuple(reasons))


def agreement_of(
    rule_set: str,
    seed: int,
    algorithm: int,
    rules: int,
    moves: Sequence[str],
    within_s: float,
    search_s: float = SEARCH_S,
) -> Agreement:
    """Replay the racer's moves on the deal and ask the solver, within ``within_s`` in all,
    whether each kept the deal winnable where it was and several moves were open.

    Searches are saved the way ``engine.hints.Foresight`` saves them: while the racer follows
    the winning line last found, every position on it is winnable; only a move off the line
    needs a search of the position it leads to (the first move out of a winnable position
    that proves lost is a miss, and every position after it is lost). A position left
    undecided (the search's budget ran out) is not judged, nor is the move out of it."""
    game = find_rule_set(rule_set)(seed, algorithm, rules=rules)
    deadline = time.monotonic() + within_s

    def search() -> tuple[Result, list[Move]]:
        if time.monotonic() >= deadline:
            return Result.UNKNOWN, []
        verdict = solve(game, Budget(seconds=search_s))
        return verdict.result, list(verdict.line)

    status, line = search()
    judged = kept = followed = 0
    for text in moves:
        move = Move.parse(text)
        if move.is_resign:
            break
        choices = sum(not legal.is_resign for legal in game.legal_moves())
        game.play(move)
        on_line = bool(line) and line[0] == move
        if on_line:
            line = line[1:]
            after = Result.WON
        elif status is Result.LOST:
            after = Result.LOST
        else:
            after, line = search()
        if status is Result.WON and choices > 1 and after is not Result.UNKNOWN:
            judged += 1
            kept += after is Result.WON
            followed += on_line
        status = after
        if game.outcome().is_over:
            break
    return Agreement(judged, kept, followed)


def check_racer(
    rule_set: str,
    seed: int,
    algorithm: int,
    rules: int,
    moves: Sequence[tuple[str, int]],
    within_s: float,
) -> dict[str, Any]:
    """A racer's signals as JSON, from their stored moves (text, ms from the start): what a
    server's solver process runs after a rated race (plain data in and out)."""
    played = [(text, at_ms) for text, at_ms in moves if not Move.parse(text).is_resign]
    signals = timing([at_ms for _, at_ms in played])
    found = agreement_of(rule_set, seed, algorithm, rules, [text for text, _ in played], within_s)
    return with_agreement(signals, found).to_json()
