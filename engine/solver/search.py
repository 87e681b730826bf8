"""Depth-first search for a winning line, driving the engine's own moves.

The engine stays the judge: the search takes its moves from ``legal_moves()``, makes them with
``push`` and takes them back with ``pop``; it never decides on its own what is legal or what a
move does. The line it finds is then replayed through a fresh game of the same deal (or of the
position searched from) with the validated ``play`` before it is reported (``check_line``).

The search sees the face-down and undealt cards: "thoughtful" solitaire. A win found is an upper
bound for a player who cannot see them (verdict.FULL_KNOWLEDGE).

**Soundness.** The question is reachability: is a won position reachable from the start? The
search is a depth-first walk of the graph of positions, where a move leads from a position to
the one the engine makes of it (forced steps included). Its only reductions:

- *The table of positions seen*, keyed by ``solver_key`` (engine/solver/symmetry.py): the
  exact ``Game.state_key``, or for the Octagon and Puss in the Corner that key with a symmetry
  of the rules applied (foundations that take the same cards in either order; Puss in the
  Corner's corner heaps in the second pass). A position reached again (or a mirror image of one)
  is not searched again: when it was first reached, either its search has finished and found no
  win (else the search would have stopped), so none is reachable from it (nor from its mirror
  image, whose moves are the same moves renamed), or it is on the current path and its search
  will go on. Reversible moves (heap to heap) and independent moves made in another order reach
  positions already seen, which is where the table earns its keep. The key is exact (no hashing
  into fewer bits), so a position is never taken for another one.
- *Bounds* (engine/solver/bounds.py): a position a bound proves lost is searched no further.
  The Octagon and Puss in the Corner (in its last pass, once no seven is left) have bounds so
  far; each is argued in that module and in docs/solver.md.
- *Move ordering*: moves home first, redeals and afresh last. Four Corners and Cornerstones
  order moves between heaps by how soon they uncover a card wanted home (``_heap_order``); Puss
  in the Corner places a turned card on the heap whose top is the nearest rank above it
  (``_puss_order``); the others by how many moves home the position after them offers (a
  one-move look-ahead made with the engine's own ``push``/``pop``). Order changes which win is
  found first and how soon, never whether one is found: every move is still tried.
- *Resigning* is never searched: it ends the game lost.

No move is ever left untried (no dominance or "safe automatic move" pruning: none has been
proved for these rules here). So "lost" means every reachable position was searched, or shown
lost by a bound, up to the symmetries.
``solve(..., table=False)`` keeps only the current path's positions (to avoid going round a
cycle), the plain exhaustive search the tests check the table against on small positions.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

from engine.cards import ACE, KING, Card
from engine.errors import IllegalMoveError
from engine.game import Game
from engine.moves import REDEALS, Move
from engine.players import HOME_KINDS
from engine.rulesets.corners_common import STEP, next_rank
from engine.solver.bounds import bound_function
from engine.solver.symmetry import key_function
from engine.solver.verdict import Budget, Effort, Result, Verdict
from engine.view import Status

CHECK_EVERY = 64
"""Nodes between looks at the clock (and at whether to report progress)."""
PROGRESS_EVERY_S = 1.0


class SolverError(RuntimeError):
    """The search found a line the engine does not accept: a bug in the solver or the engine,
    never reported as a win."""


def ordered_moves(game: Game) -> list[Move]:
    """The legal moves, resign left out, in the order the search tries them: moves home first,
    then the others, those after which more moves home are open first (each made and taken
    back to see), then redeals; the engine's order among equals. Puss in the Corner places a
    turned card by ``_puss_order`` instead. The order decides only which win is found first:
    every move is tried."""
    if game.name == "puss-in-the-corner" and game.turned is not None:  # type: ignore[attr-defined]
        return _puss_order(game)
    if game.name in HEAP_GAMES and not game.turned:  # type: ignore[attr-defined]
        return _heap_order(game)
    home: list[Move] = []
    others: list[Move] = []
    last: list[Move] = []
    for move in game.legal_moves():
        if move.is_resign:
            continue
        if move in REDEALS:
            last.append(move)
        elif move.target is not None and move.target.kind in HOME_KINDS:
            home.append(move)
        else:
            others.append(move)
    if len(others) > 1:
        opened = {}
        for move in others:
            game.push(move)
            opened[move] = _moves_home(game)
            game.pop()
        others.sort(key=opened.__getitem__, reverse=True)
    return home + others + last


def _puss_order(game: Any) -> list[Move]:
    """Puss in the Corner, a card turned: home first; then onto the corner heap whose top is
    the nearest rank above the card (so the card will be wanted before the card it covers),
    then an empty heap, then onto lower tops, the highest first (PC-4, PC-5). Without this the
    engine's order piles every card on corner:1."""
    card = game.turned
    home: list[Move] = []
    placed: list[tuple[int, Move]] = []
    for move in game.legal_moves():
        if move.is_resign:
            continue
        if move.target is not None and move.target.kind in HOME_KINDS:
            home.append(move)
            continue
        heap = game.corners[move.target.index - 1] if move.target is not None else []
        if not heap:
            score = 14
        elif heap[-1].rank > card.rank:
            score = heap[-1].rank - card.rank
        else:
            score = 28 - heap[-1].rank
        placed.append((score, move))
    placed.sort(key=lambda pair: pair[0])
    return home + [move for _, move in placed]


HEAP_GAMES = frozenset({"four-corners", "cornerstones", "cornerstones-arnold"})
FAR = 40
"""More than any card's distance from its foundation plus its depth."""


def _need(game: Any, card: Card) -> int:
    """How many cards of its suit must go home before ``card`` can (FC-9, CS foundations):
    the fewer, the sooner it is wanted; ``FAR`` when no foundation of its suit wants it."""
    if game.name == "four-corners":
        places: tuple[int, ...] = (card.suit.value, card.suit.value + 4)
    else:
        if card.suit not in game.line_suits:
            return min(card.rank - ACE, KING - card.rank)
        line = game.line_suits.index(card.suit)
        places = (line, line + 4)
    best = FAR
    for place in places:
        gap = (card.rank - next_rank(game.foundations[place], place)) * STEP[place]
        if 0 <= gap < best:
            best = gap
    return best


def _soonest(game: Any, pile: list[Card], covered: int) -> int:
    """How soon a card of ``pile`` (its top ``covered`` cards taken off, or one card added
    when -1) could be wanted home: its distance from its foundation plus the cards above it."""
    cards = pile[: len(pile) - covered] if covered > 0 else pile
    extra = 1 if covered < 0 else 0
    best = FAR
    top = len(cards) - 1
    for index, card in enumerate(cards):
        value = top - index + extra + _need(game, card)
        if value < best:
            best = value
    return best


def _heap_order(game: Any) -> list[Move]:
    """Four Corners and Cornerstones after a deal: home first, then moves between heaps that
    uncover the card soonest wanted home and bury nothing wanted soon, then redeals. Cheaper
    than the one-move look-ahead and it looks deeper than the top card."""
    piles = game.heaps if game.name == "four-corners" else game.piles
    index_of = {pile: index for index, pile in enumerate(game.pile_ids)}
    first = index_of[game.pile_ids[0]]
    home: list[Move] = []
    others: list[tuple[int, Move]] = []
    last: list[Move] = []
    for move in game.legal_moves():
        if move.is_resign:
            continue
        if move in REDEALS or move.source is None or move.target is None:
            last.append(move)
        elif move.target.kind in HOME_KINDS:
            home.append(move)
        else:
            source = piles[index_of[move.source] - first]
            target = piles[index_of[move.target] - first]
            score = 2 * _soonest(game, source, 1) - min(_soonest(game, target, -1), 10)
            others.append((score, move))
    others.sort(key=lambda pair: pair[0])
    return home + [move for _, move in others] + last


def _moves_home(game: Game) -> int:
    return sum(
        1
        for move in game.legal_moves()
        if move.target is not None and move.target.kind in HOME_KINDS
    )


def plain_moves(game: Game) -> list[Move]:
    """The legal moves, resign left out, in the engine's order: the plain search's."""
    return [move for move in game.legal_moves() if not move.is_resign]


NO_LIMIT = Budget()
"""Search until decided: only for small positions."""


def solve(
    game: Game,
    budget: Budget = NO_LIMIT,
    *,
    table: bool = True,
    progress: Callable[[Effort], None] | None = None,
    symmetry: bool = True,
    bounds: bool = True,
) -> Verdict:
    """Search ``game``'s position (the game itself is left as it is) for a winning line within
    ``budget``; return won (with the line, checked through the engine), lost (the search was
    exhaustive) or unknown. ``progress`` is called about once a second with the effort so far.
    ``table=False`` remembers only the current path and takes the moves in the engine's order:
    the plain search, for tests. ``symmetry=False`` keys the table by the exact ``state_key``
    instead of ``solver_key`` (engine/solver/symmetry.py), and ``bounds=False`` leaves out the
    proofs of loss (engine/solver/bounds.py), for tests; the plain search uses neither."""
    start = time.perf_counter()
    work = game.copy() if game.keeps_undo else type(game).from_position(game.position())
    deadline = None if budget.seconds is None else start + budget.seconds
    max_nodes = budget.nodes
    state_key = key_function(work) if table and symmetry else type(work).state_key
    seen: set[Any] = {state_key(work)}
    nodes = 0
    next_report = start + PROGRESS_EVERY_S
    won = _won(work)
    order = ordered_moves if table else plain_moves
    dead = bound_function(work) if table and bounds else None
    stack: list[Iterator[Move]] = (
        [] if won or (dead is not None and dead(work)) else [iter(order(work))]
    )
    line: list[Move] = []
    path_keys: list[Any] = []
    stopped = False
    while stack:
        move = next(stack[-1], None)
        if move is None:
            stack.pop()
            if line:
                work.pop()
                line.pop()
                if not table:
                    seen.discard(path_keys.pop())
            continue
        if nodes % CHECK_EVERY == 0 and nodes:
            now = time.perf_counter()
            if (deadline is not None and now >= deadline) or (
                max_nodes is not None and nodes >= max_nodes
            ):
                stopped = True
                break
            if progress is not None and now >= next_report:
                next_report = now + PROGRESS_EVERY_S
                progress(Effort(nodes, len(seen) - 1, now - start))
        elif max_nodes is not None and nodes >= max_nodes:
            stopped = True
            break
        nodes += 1
        work.push(move)
        if _won(work):
            line.append(move)
            won = True
            break
        key = state_key(work)
        if key in seen:
            work.pop()
            continue
        seen.add(key)
        moves = [] if dead is not None and dead(work) else order(work)
        if not moves:
            if not table:
                seen.discard(key)
            work.pop()
            continue
        line.append(move)
        path_keys.append(key)
        stack.append(iter(moves))
    # The table holds the start, reached by no move, and not the won position that ended it.
    effort = Effort(nodes, len(seen) - 1 + (won and nodes > 0), time.perf_counter() - start)
    if won:
        check_line(game, line)
        return Verdict(Result.WON, tuple(line), effort, budget)
    return Verdict(Result.UNKNOWN if stopped else Result.LOST, (), effort, budget)


def _won(game: Game) -> bool:
    return game.outcome().status is Status.WON


def check_line(game: Game, line: list[Move] | tuple[Move, ...]) -> None:
    """Replay ``line`` from ``game``'s position through a fresh game with the validated
    ``play``: from the deal (the game's own moves first) when the game has a deal number,
    else from its position. Raise ``SolverError`` unless every move is legal and the game is
    then won."""
    fresh = replica(game)
    try:
        for move in line:
            fresh.play(move)
    except IllegalMoveError as error:
        raise SolverError(f"{game.name}: the engine refuses the solver's line: {error}") from None
    if not _won(fresh):
        raise SolverError(
            f"{game.name}: the solver's line of {len(line)} moves does not win ({fresh.outcome()})"
        )


def replica(game: Game) -> Game:
    """A fresh game in ``game``'s position, reached through the engine: dealt again from the
    deal number and its moves replayed with ``play`` when it has a deal number, else set up
    from its position."""
    if game.seed is None:
        return type(game).from_position(game.position())
    fresh = type(game)(game.seed, game.algorithm, rules=game.rules, keep_opening=False)
    for move in game.history:
        fresh.play(move)
    return fresh
