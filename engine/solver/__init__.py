"""The solver: is this position winnable? (issue 12)

``solve(game, Budget(seconds=2))`` searches any position of any rule set and returns a
``Verdict``: won (with a winning line, replayed through the engine before it is reported), lost
(proved: every reachable position searched or shown lost by a bound) or unknown (the budget ran
out), with the ``Effort`` spent. It plays with full knowledge of the face-down and undealt cards
("thoughtful" solitaire), so a win is an upper bound for a player who cannot see them. It runs on
the compiled core (engine/solver/compiled.py) where that is built and knows the rule set, else
on the pure-Python search (engine/solver/search.py); docs/solver.md says why the reductions of
each never lose a win.
"""

from engine.solver.compiled import core_description, core_name, solve
from engine.solver.search import SolverError, check_line, ordered_moves
from engine.solver.verdict import FULL_KNOWLEDGE, Budget, Effort, Result, Verdict

__all__ = [
    "FULL_KNOWLEDGE",
    "Budget",
    "Effort",
    "Result",
    "SolverError",
    "Verdict",
    "check_line",
    "core_description",
    "core_name",
    "ordered_moves",
    "solve",
]
