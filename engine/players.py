"""Simple automatic players: for the benchmark, the property tests and practice bots.

A player sees only what a person would: the legal moves and how many cards are home. So the same
player drives a ``Game`` in the engine (``choose_in``) and a bot over the protocol, which has
only the legal moves and the count a server sends (``choose``). Neither looks ahead. Both give
up the way a person would when moves only shuffle cards about: after ``patience`` moves that
brought no card home they redeal if they may, else resign. That matters for the Four Corners
games, whose rules let top cards travel back and forth for ever.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.game import Game
from engine.moves import REDEAL, RESIGN, Move

HOME_KINDS = frozenset({"foundation", "ace", "king", "kings"})
"""Pile kinds where a card counts as home (foundations, the king row)."""


@dataclass
class Player:
    """Picks uniformly among the legal moves, never resigning while it has patience left."""

    rng: random.Random
    patience: int = 1000
    _last_move: Move | None = field(default=None, init=False)
    _idle: int = field(default=0, init=False)
    _home: int = field(default=-1, init=False)

    def choose_in(self, game: Game) -> Move:
        return self.choose(game.legal_moves(), game.foundation_count())

    def choose(self, legal_moves: Sequence[Move], home: int) -> Move:
        """A move among ``legal_moves``, given how many cards are home now."""
        self._idle = 0 if home != self._home else self._idle + 1
        self._home = home
        moves = [move for move in legal_moves if not move.is_resign]
        if not moves:
            return RESIGN
        if self._idle > self.patience:
            self._idle = 0
            return REDEAL if REDEAL in moves else RESIGN
        candidates = [move for move in moves if not self._undoes(move)] or moves
        move = self._pick(candidates)
        self._last_move = move
        return move

    def _undoes(self, move: Move) -> bool:
        last = self._last_move
        return (
            last is not None
            and move.card == last.card
            and move.source == last.target
            and move.target == last.source
        )

    def _pick(self, moves: list[Move]) -> Move:
        return self.rng.choice(moves)


class RandomPlayer(Player):
    """Any legal move, uniformly."""


class GreedyPlayer(Player):
    """A card home whenever it can; otherwise anything but a redeal, which it keeps for when it
    has nothing else to do."""

    def _pick(self, moves: list[Move]) -> Move:
        home = [
            move for move in moves if move.target is not None and move.target.kind in HOME_KINDS
        ]
        if home:
            return self.rng.choice(home)
        others = [move for move in moves if move != REDEAL]
        return self.rng.choice(others or moves)


STRATEGIES: dict[str, type[Player]] = {"random": RandomPlayer, "greedy": GreedyPlayer}


def play_out(game: Game, player: Player, max_moves: int = 20_000) -> Game:
    """Let ``player`` play ``game`` to its end (validated moves); return the game."""
    for _ in range(max_moves):
        if game.outcome().is_over:
            return game
        game.play(player.choose_in(game))
    raise RuntimeError(f"{game.name} seed {game.seed}: no end after {max_moves} moves")
