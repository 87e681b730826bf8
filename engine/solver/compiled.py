"""The compiled search core (engine/solver/core/, docs/solver.md "The compiled core"), seen
from the engine: which core is in use, a position handed to it and back, and ``solve`` with
the same answer as the pure-Python search's, won, lost or unknown.

The core is optional: it is built by the install where a C compiler is present, and
``PATIENCE_RACE_SOLVER_CORE=python`` turns it off. Where it is absent, or knows no rule set of
the game (Hidden Cards and All Fours, which the Python search decides exactly already), the
Python search (engine/solver/search.py) answers. The engine stays the judge: every winning line
the core finds is replayed through a fresh game with the validated ``play`` (``check_line``)
before it is reported.

Between the two a position is its piles, in the rule set's ``pile_ids`` order, each a bytes of
card codes bottom to top (``suit * 13 + rank - 1``), and its state fields as whole numbers,
which each rule set's ``Codec`` (engine/solver/codecs.py) writes and reads.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from engine.cards import CARDS, Card, Suit
from engine.game import Game
from engine.moves import ACTIONS, Move
from engine.position import Position
from engine.solver.codecs import CODECS
from engine.solver.search import NO_LIMIT, check_line
from engine.solver.search import solve as python_solve
from engine.solver.verdict import Budget, Effort, Result, Verdict

CORE_SETTING = "PATIENCE_RACE_SOLVER_CORE"
"""``python`` keeps the compiled core out, where it is built (to compare, or to test that
path); ``compiled`` (or unset) uses it where it is built."""
TABLE_MB = (4, 256)
"""The least and most memory, in MB, for a search's table of positions seen (``table_mb``)."""
BYTES_PER_POSITION = 160
"""What a position costs the table: its slot (a table kept at most half full) and its key."""
POSITIONS_PER_SECOND = 3_000_000
"""About what the core searches a second on one core here, to size a table for a budget in
seconds."""


def _load_core() -> ModuleType | None:
    if os.environ.get(CORE_SETTING, "compiled") == "python":
        return None
    try:
        from engine.solver import _core  # type: ignore[attr-defined]
    except ImportError:
        return None
    return _core  # type: ignore[no-any-return]


CORE = _load_core()
RULE_SETS: frozenset[str] = frozenset(CORE.rule_sets()) if CORE is not None else frozenset()
"""The rule sets the compiled core searches (empty without the core)."""


def core_name() -> str:
    """Which core the solver uses for the heap games: ``compiled`` or ``python``."""
    return "compiled" if CORE is not None else "python"


def core_description() -> str:
    """A line for logs and ``/healthz``: which core, and for which rule sets."""
    if CORE is None:
        return "python (the compiled core is not built, or PATIENCE_RACE_SOLVER_CORE=python)"
    if not RULE_SETS:
        return "python (the compiled core is built but knows no rule set)"
    return f"compiled (C) for {', '.join(sorted(RULE_SETS))}; python for the others"


def uses_core(game: Game) -> bool:
    return game.name in RULE_SETS


# -- a position to the core and back ------------------------------------------------------------


def card_code(card: Card) -> int:
    return card.suit.value * 13 + card.rank - 1


def code_card(code: int) -> Card:
    return CARDS[code % 13 + 1, Suit(code // 13), 0]


def encode(game: Game) -> tuple[list[bytes], list[int]]:
    """``game``'s position as the core reads it: piles and state fields."""
    position = game.position()
    piles = [bytes(card_code(card) for card in position.pile(pile).cards) for pile in game.pile_ids]
    return piles, CODECS[game.name].encode(position.state)


def decode(
    game: Game, piles: list[bytes], fields: list[int]
) -> tuple[list[list[str]], dict[str, Any]]:
    """A position the core exports, as the cards' texts of each pile (in ``pile_ids`` order)
    and the position's ``state``: the terms the tests compare with ``game.position()``."""
    return (
        [[code_card(code).text for code in pile] for pile in piles],
        CODECS[game.name].decode(fields),
    )


def engine_terms(
    position: Position, pile_ids: tuple[Any, ...]
) -> tuple[list[list[str]], dict[str, Any]]:
    """The engine's position in the terms ``decode`` gives."""
    return (
        [[card.text for card in position.pile(pile).cards] for pile in pile_ids],
        position.state,
    )


def to_move(game: Game, move: tuple[Any, ...]) -> Move:
    """A move the core gives, (source, target, card, count, bottom, action), as the engine's."""
    source, target, card, count, bottom, action = move
    if action:
        return Move.act(ACTIONS[action - 1])
    return Move(
        game.pile_ids[source],
        game.pile_ids[target],
        None if card is None else code_card(card),
        count,
        bottom,
    )


# -- the search --------------------------------------------------------------------------------

PORTFOLIO = (0.5, 0.25, 0.25)
"""How a budget is shared among the move orders (variants 0, 1, 2) a search tries in turn:
a search that runs out of budget in one order is often decided at once in another, and a
"lost" from any of them is a proof (each is the whole search, in another order)."""


def solve(
    game: Game,
    budget: Budget = NO_LIMIT,
    *,
    progress: Callable[[Effort], None] | None = None,
    variant: int | None = None,
    reductions: bool = True,
    core: str | None = None,
) -> Verdict:
    """Search ``game``'s position within ``budget`` with the compiled core where it is built
    and knows the rule set (``core="python"`` insists on the Python search), else with the
    Python search; the game is left as it is. The compiled core tries the move orders of
    ``PORTFOLIO`` in turn, each with its share of the budget (all of it for a search without
    limit, which the first order decides), unless ``variant`` names one order to search with
    the whole budget; ``reductions=False`` is the plain search (tests). ``progress`` is called
    now and then with the effort so far."""
    if CORE is None or not uses_core(game) or core == "python":
        return python_solve(game, budget, progress=progress)
    piles, fields = encode(game)
    start = time.perf_counter()
    nodes = positions = 0
    if variant is not None:
        plan = [(variant, budget)]
    elif budget.nodes is None and budget.seconds is None:
        plan = [(0, budget)]
    else:
        plan = [(order, _share(budget, share)) for order, share in enumerate(PORTFOLIO)]
    for order, part in plan:
        found = _search(
            game, piles, fields, part, order, reductions, progress, start, nodes, positions
        )
        nodes += found["nodes"]
        positions += found["positions"]
        result = Result(found["result"])
        if result is not Result.UNKNOWN:
            break
    effort = Effort(nodes, positions, time.perf_counter() - start)
    if result is Result.WON:
        line = tuple(to_move(game, move) for move in found["line"])
        check_line(game, line)
        return Verdict(result, line, effort, budget)
    return Verdict(result, (), effort, budget)


def table_mb(budget: Budget) -> int:
    """Memory for the table of a search within ``budget``: about what the positions it can
    reach take, within ``TABLE_MB``. A table larger than the search needs costs time (each new
    position lands on a page never touched), and one smaller is emptied when full (sound, but it
    searches again). For a budget in positions it depends on nothing else, so the search stays
    deterministic."""
    positions = budget.nodes
    if budget.seconds is not None:
        by_time = int(budget.seconds * POSITIONS_PER_SECOND)
        positions = by_time if positions is None else min(positions, by_time)
    low, high = TABLE_MB
    if positions is None:
        return high
    return max(low, min(high, positions * BYTES_PER_POSITION >> 20))


def _share(budget: Budget, share: float) -> Budget:
    return Budget(
        None if budget.seconds is None else budget.seconds * share,
        None if budget.nodes is None else max(1, int(budget.nodes * share)),
    )


def _search(
    game: Game,
    piles: list[bytes],
    fields: list[int],
    budget: Budget,
    variant: int,
    reductions: bool,
    progress: Callable[[Effort], None] | None,
    start: float,
    nodes_before: int,
    positions_before: int,
) -> dict[str, Any]:
    """One search by the core in one move order; ``progress`` hears the effort counted from
    ``start``, the searches before this one's included."""
    assert CORE is not None

    def report(nodes: int, positions: int) -> bool:
        assert progress is not None
        progress(
            Effort(nodes_before + nodes, positions_before + positions, time.perf_counter() - start)
        )
        return False

    found: dict[str, Any] = CORE.solve(
        game.name,
        piles,
        fields,
        nodes=budget.nodes or 0,
        seconds=budget.seconds or 0.0,
        table_mb=table_mb(budget),
        variant=variant,
        reductions=reductions,
        progress=None if progress is None else report,
    )
    return found
