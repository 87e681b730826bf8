"""The fair-play signals (``server.core.fairplay``) of players whose play is known, for
docs/fair-play.md: the project's bot (``clients/bot.py``) with each strategy at its default
pace, a greedy player replying as fast as acknowledgements come, a human-like player that
must not be flagged, and a hint follower (the solver's move at every turn, at a person's pace).

    python bench/fairplay_figures.py [--games 10] [--rule-set octagon] [--seed 1]

Deals are those the solver proves winnable within 2 s, as a rated quick race deals them.
Each game is a deal of the rule set played through the engine by the player's choices
(``engine.players``, the bot's own), each move stamped with the time it would reach the
server: the bot waits its pace (``patience-race bot``'s default, 1 s) after each
acknowledgement, which comes back a round trip after its move (``--round-trip-ms``, drawn
uniformly up to that); the greedy player waits for nothing but the round trip; the human-like
player thinks for a lognormal time around 1.5 s (median 1.5 s, sigma 0.6, at least 0.3 s) and
makes a mistake now and then (a random move instead of a greedy one, one time in
``--mistakes``); the hint follower thinks as the human-like player does. Then the signals are
measured as the server measures them after a rated race (the solver's agreement within
``--within`` seconds a game) and judged.
"""

from __future__ import annotations

import argparse
import random
import statistics
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from engine.game import Game
from engine.moves import Move
from engine.players import STRATEGIES, GreedyPlayer, Player
from engine.registry import find_rule_set
from engine.solver import Budget, Result, solve
from server.core.fairplay import Verdict, agreement_of, judge, timing, with_agreement

BOT_PACE_MS = 1000
"""``patience-race bot``'s default ``--pace`` (clients/cli.py)."""
HUMAN_MEDIAN_MS = 1500
HUMAN_SIGMA = 0.6
HUMAN_FASTEST_MS = 300
MAX_MOVES = 400
DEAL_SEARCH_S = 2.0
HINT_BUDGET = Budget(seconds=0.1)
"""A hint's search where the compiled core answers (``engine.hints.FAST_HINT_BUDGET``)."""


class HintFollower(GreedyPlayer):
    """A racer who asks a solver at every move and plays the first move of its line (a
    greedy move where it finds none): what the agreement signal is for."""

    def choose_in(self, game: Game) -> Move:
        line = solve(game, HINT_BUDGET).line
        return line[0] if line else super().choose_in(game)


@dataclass(frozen=True)
class Style:
    """How a kind of player chooses its moves and how long it takes over each."""

    name: str
    player: Callable[[random.Random], Player]
    think_ms: Callable[[random.Random], float]
    mistakes: int = 0
    """One move in this many is a random one instead (0: never)."""


def styles(round_trip_ms: float, mistakes: int) -> list[Style]:
    def round_trip(rng: random.Random) -> float:
        return rng.uniform(1, round_trip_ms)

    def human(rng: random.Random) -> float:
        thought = rng.lognormvariate(0, HUMAN_SIGMA) * HUMAN_MEDIAN_MS
        return max(HUMAN_FASTEST_MS, thought) + round_trip(rng)

    return [
        Style("bot greedy, pace 1 s", STRATEGIES["greedy"], lambda r: BOT_PACE_MS + round_trip(r)),
        Style("bot random, pace 1 s", STRATEGIES["random"], lambda r: BOT_PACE_MS + round_trip(r)),
        Style("greedy player, no pause", STRATEGIES["greedy"], round_trip),
        Style("human-like", STRATEGIES["greedy"], human, mistakes),
        Style("hint follower, human pace", HintFollower, human),
    ]


def play(game: Game, style: Style, rng: random.Random) -> Iterator[tuple[Move, int]]:
    """The style's moves on the game, each with the ms from the start it reaches the server."""
    player, wild, at = style.player(rng), random.Random(rng.random()), 0.0
    for _ in range(MAX_MOVES):
        if game.outcome().is_over:
            return
        move = player.choose_in(game)
        if style.mistakes and wild.randrange(style.mistakes) == 0:
            move = wild.choice([m for m in game.legal_moves() if not m.is_resign] or [move])
        if move.is_resign:
            return
        at += style.think_ms(rng)
        game.play(move)
        yield move, round(at)


def winnable_seeds(rule_set: str, rng: random.Random) -> Iterator[int]:
    """Deals the solver proves winnable within ``DEAL_SEARCH_S``: a rated quick race's kind
    (``server.rooms.pool``), and the only deals where the agreement says anything."""
    while True:
        seed = rng.getrandbits(64)
        if solve(find_rule_set(rule_set)(seed), Budget(seconds=DEAL_SEARCH_S)).result is Result.WON:
            yield seed


def verdict(rule_set: str, seed: int, style: Style, rng: random.Random, within: float) -> Verdict:
    game = find_rule_set(rule_set)(seed)
    played = list(play(game, style, rng))
    signals = timing([at for _, at in played])
    found = agreement_of(
        rule_set, seed, game.algorithm, game.rules, [str(move) for move, _ in played], within
    )
    return judge(with_agreement(signals, found))


def figure(values: list[float | None]) -> str:
    known = [value for value in values if value is not None]
    if not known:
        return "-"
    return f"{statistics.median(known):.2f} ({min(known):.2f}-{max(known):.2f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--rule-set", default="octagon")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--round-trip-ms", type=float, default=40)
    parser.add_argument("--mistakes", type=int, default=8)
    parser.add_argument("--within", type=float, default=20.0)
    args = parser.parse_args()
    print(
        f"{args.games} games of {args.rule_set} each; figures: median (lowest-highest)\n"
        f"{'player':26} {'flagged':>7}  {'moves':>5}  {'fast share':17}  {'interval CV':17}  "
        f"{'agreement':17}  {'kept':17}  judged"
    )
    for style in styles(args.round_trip_ms, args.mistakes):
        rng = random.Random(args.seed)
        seeds = winnable_seeds(args.rule_set, random.Random(args.seed))
        verdicts = [
            verdict(args.rule_set, next(seeds), style, rng, args.within) for _ in range(args.games)
        ]
        s = [v.signals for v in verdicts]
        print(
            f"{style.name:26} {sum(v.flagged for v in verdicts):>3}/{len(verdicts):<3}  "
            f"{statistics.median(x.moves for x in s):>5.0f}  "
            f"{figure([x.fast_share for x in s]):17}  {figure([x.interval_cv for x in s]):17}  "
            f"{figure([x.agreement for x in s]):17}  "
            f"{figure([x.kept for x in s]):17}  "
            f"{statistics.median(x.judged for x in s):.0f}"
        )


if __name__ == "__main__":
    main()
