"""The one interface every rule set implements, and what it gives callers for free.

A ``Game`` holds the full state of one deal, hidden cards included. Callers use:

- ``legal_moves()``: every move allowed now (resign included while the game is on);
- ``play(move)``: validate and apply, returning the events that followed (the engine advances
  through forced steps on its own, RULINGS principle 3); raises ``IllegalMoveError`` with a
  reason a person understands;
- ``push(move)``: apply without validating, for replaying logs that were validated before;
- ``view()``: exactly what the player may see; ``full_state()``: everything, for debugging;
- ``outcome()``, ``progress()``, ``copy()``.

A rule set subclasses ``Game``, sets the class metadata, and implements the underscored hooks.

Every game is played under a **rules version** (``RULES_VERSION``), stored beside the deal
algorithm version, because some rulings change what a move log means (docs/move-log.md):

- version 1: the rules until 2026-11-24;
- version 2: a redeal that is the only thing left to do is a forced step the engine makes
  (RULINGS principle 6), and a Hidden Cards game is judged by its final layout (HC-14).

Older versions stay playable here so that every game recorded under them replays to the outcome
it had.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import Any, ClassVar, Self

from engine.cards import Card
from engine.deal import DEAL_ALGORITHM, deal_stock
from engine.errors import IllegalMoveError
from engine.moves import REDEALS, RESIGN, Move
from engine.view import Event, Outcome, PileState, Progress, Slot, Status, View

RULES_VERSION = 2
"""The current rules version; every stored game and move log names the version it was played
under (a log without one is version 1)."""
RULES_VERSIONS = (1, 2)


class Game(ABC):
    # Class metadata every rule set sets.
    name: ClassVar[str]
    """Registry name, like ``four-corners``."""
    title: ClassVar[str]
    source: ClassVar[str]
    """The book and section the rules come from."""
    packs: ClassVar[int]
    taken_out: ClassVar[tuple[int, ...]] = ()
    """Ranks taken out of the ordered pack(s) before shuffling."""
    layout: ClassVar[tuple[Slot, ...]]

    def __init__(self, seed: int, algorithm: int = DEAL_ALGORITHM, *,
                 rules: int = RULES_VERSION, keep_opening: bool = True) -> None:
        """Deal and lay out. ``opening_events`` says what the deal did (every card dealt, in
        some rule sets); ``keep_opening=False`` leaves it empty, for a server that holds
        thousands of games and shows their players views, never the opening."""
        if rules not in RULES_VERSIONS:
            raise ValueError(f"unknown rules version {rules!r}")
        self.seed = seed
        self.algorithm = algorithm
        self.rules = rules
        self.history: list[Move] = []
        self.resigned = False
        self._legal: list[Move] | None = None
        self._outcome: Outcome | None = None
        """``legal_moves`` and ``outcome`` are asked for several times per position (by
        ``play``, then by whoever shows the result): each is worked out once, until ``push``."""
        removed, stock = deal_stock(self.packs, self.taken_out, seed, algorithm)
        opening = self._setup(removed, stock)
        opening += self._forced_redeals()
        self.opening_events: list[Event] = opening if keep_opening else []

    # -- hooks for rule sets ---------------------------------------------------------------

    @abstractmethod
    def _setup(self, taken_out: list[Card], stock: list[Card]) -> list[Event]:
        """Lay out the cards (``stock[0]`` is dealt first) and advance to the first decision."""

    @abstractmethod
    def _moves(self) -> list[Move]:
        """Every legal move now, resign excepted; empty when nothing more can be done."""

    @abstractmethod
    def _apply(self, move: Move) -> list[Event]:
        """Apply a move known to be legal (never resign), then advance through forced steps."""

    @abstractmethod
    def _refusal(self, move: Move) -> str:
        """Why ``move``, which is not legal now, is refused: a sentence for a person."""

    @abstractmethod
    def _table(self) -> list[PileState]:
        """Every pile with every card, in a stable order, face-up flags included."""

    @abstractmethod
    def foundation_count(self) -> int:
        """Cards home: on foundations, or in their final place in the placing games."""

    total_cards: ClassVar[int]

    def _notes(self) -> list[str]:
        """Short lines for the player about the phase ("deal 2 of 3", "choose a foundation")."""
        return []

    def is_won(self) -> bool:
        return self.foundation_count() == self.total_cards

    def _lost_reason(self) -> str:
        return "no legal move and no redeal left"

    def _extra_state(self) -> dict[str, Any]:
        """Counters that are part of the position (redeals used, phase...) for ``full_state``."""
        return {}

    # -- what callers use ------------------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        if self.resigned:
            return []
        if self._legal is None:
            self._legal = [] if self.is_won() else self._moves()
        return [*self._legal, RESIGN] if self._legal else []

    def is_legal(self, move: Move) -> bool:
        return move in self.legal_moves()

    def play(self, move: Move) -> list[Event]:
        """Validate and apply a move; raise ``IllegalMoveError`` saying why it is refused."""
        outcome = self.outcome()
        if outcome.is_over:
            raise IllegalMoveError(move, f"the game is over ({outcome})")
        if move not in self.legal_moves():
            raise IllegalMoveError(move, self._refusal(move))
        return self.push(move)

    def push(self, move: Move) -> list[Event]:
        """Apply a move without validating it (replay of a log that was validated before)."""
        self.history.append(move)
        self._legal, self._outcome = None, None
        if move.is_resign:
            self.resigned = True
            return [Event("resigned", "resigned")]
        events = self._apply(move)
        events += self._forced_redeals()
        return events

    def _forced_redeals(self) -> list[Event]:
        """RULINGS principle 6 (rules version 2): a redeal that is the only thing left to do,
        resign aside, is made at once and reported by its own events; where other moves
        remain, the player chooses when to redeal. The moves found on the way are kept, so the
        position's legal moves are worked out once, as before."""
        if self.rules < 2:
            return []
        events: list[Event] = []
        while not self.is_won():
            moves = self._moves()
            if len(moves) != 1 or moves[0] not in REDEALS:
                self._legal = moves
                break
            events += self._apply(moves[0])
        return events

    def outcome(self) -> Outcome:
        if self._outcome is None:
            self._outcome = self._work_out_outcome()
        return self._outcome

    def _work_out_outcome(self) -> Outcome:
        if self.resigned:
            return Outcome(Status.RESIGNED, "the player resigned")
        if self.is_won():
            return Outcome(Status.WON, f"all {self.total_cards} cards home")
        if not self.legal_moves():
            return Outcome(Status.LOST, self._lost_reason())
        return Outcome(Status.IN_PROGRESS, "")

    def progress(self) -> Progress:
        return Progress(self.foundation_count(), self.total_cards, len(self.history))

    def view(self) -> View:
        return View(
            rule_set=self.name,
            piles=tuple(pile.seen() for pile in self._table()),
            legal_moves=tuple(self.legal_moves()),
            outcome=self.outcome(),
            progress=self.progress(),
            notes=tuple(self._notes()),
        )

    def table(self) -> list[PileState]:
        """Every pile in the full state, hidden cards included: compare two tables to find the
        piles a move changed, and send only their ``seen()`` form."""
        return self._table()

    def notes(self) -> list[str]:
        return self._notes()

    def full_state(self) -> dict[str, Any]:
        """Everything, hidden cards included: for ``deal --json`` and verification only."""
        return {
            "rule_set": self.name,
            "seed": str(self.seed),
            "algorithm": self.algorithm,
            "rules": self.rules,
            "moves": [str(move) for move in self.history],
            "piles": [pile.to_json() for pile in self._table()],
            "outcome": self.outcome().to_json(),
            "progress": self.progress().to_json(),
            **self._extra_state(),
        }

    def copy(self) -> Self:
        """An independent copy: lists, dicts and sets are copied two levels deep (piles of
        cards, lists of piles); cards, pile ids and moves are immutable and shared."""
        clone = object.__new__(type(self))
        clone.__dict__ = {key: _copy_value(value) for key, value in self.__dict__.items()}
        return clone


def _copy_value(value: Any) -> Any:
    if isinstance(value, list):
        return [_copy_shallow(item) for item in value]
    if isinstance(value, dict):
        return {key: _copy_shallow(item) for key, item in value.items()}
    if isinstance(value, set):
        return set(value)
    return value


def _copy_shallow(value: Any) -> Any:
    if isinstance(value, list | dict | set):
        return value.copy()
    return value
