"""The one interface every rule set implements, and what it gives callers for free.

A ``Game`` holds the full state of one deal, hidden cards included. Callers use:

- ``legal_moves()``: every move allowed now (resign included while the game is on);
- ``legal_move_named(text)``: the legal move of that text, if any (cheaper than parsing it);
- ``play(move)``: validate and apply, returning the events that followed (the engine advances
  through forced steps on its own, RULINGS principle 3); raises ``IllegalMoveError`` with a
  reason a person understands;
- ``push(move)``: apply without validating, for replaying logs that were validated before;
- ``pop()``: undo the last move, with the forced steps that followed it, and return it;
- ``changed_piles()``: the piles changed since it was last asked (by the last move, for a
  caller that asks after each), forced steps included, so that a server sends those and not
  the whole table;
- ``view()``: exactly what the player may see; ``full_state()``: everything, for debugging;
- ``outcome()``, ``progress()``, ``copy()``;
- ``position()`` and ``from_position(data)``: the complete state as a value with a JSON form,
  and a game set up from one (engine/position.py, docs/position.md);
- ``state_key()``: a cheap hashable value that tells positions apart, for a solver's table of
  positions already seen (engine/solver/).

A rule set subclasses ``Game``, sets the class metadata, and implements the underscored hooks.
It also helps the engine say which piles a move changed: ``push`` notes a transfer's source and
target, and the rule set notes, with ``_mark_changed(pile)``, every other pile its forced steps
(deals, turns, redeals) change, cards or face-up flags. It names what its piles do not show
(``_state``) and sets itself up from piles and those fields (``_restore``).

**Undo.** ``push`` keeps an undo record of the state it changes: every attribute the rule set
set up, its lists frozen into tuples (they hold cards, counters, suits, or lists of those), and
the cached legal moves and outcome. ``pop`` puts them back. Records are immutable, so ``copy``
shares them. A server that never undoes makes its games with ``undo=False`` and keeps none.

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
from collections import Counter
from operator import attrgetter
from typing import Any, ClassVar, Self

from engine.cards import CARDS, Card
from engine.deal import DEAL_ALGORITHM, deal_stock
from engine.errors import EngineError, IllegalMoveError, InvalidPositionError
from engine.moves import REDEALS, RESIGN, Move
from engine.piles import PileId
from engine.position import Position, StateReader
from engine.view import Event, EventKind, Outcome, PileState, Progress, Slot, Status, View

RULES_VERSION = 2
"""The current rules version; every stored game and move log names the version it was played
under (a log without one is version 1)."""
RULES_VERSIONS = (1, 2)
_NOT_UNDONE = frozenset(
    {
        "seed",
        "algorithm",
        "rules",
        "history",
        "resigned",
        "_legal",
        "_outcome",
        "_changed",
        "_shown",
        "opening_events",
        "_undo",
        "_first_move",
        "_stale",
        "_dirty",
    }
)
"""The attributes of ``Game`` itself that an undo record does not hold as rule-set state:
``resigned``, ``_legal`` and ``_outcome`` it holds on their own; the others are not undone."""
_TEXT = attrgetter("text")
_PLAIN, _LIST, _LISTS = 0, 1, 2
"""How an attribute is frozen into an undo record: kept as it is (immutable), a list made a
tuple, a list of lists made a tuple of tuples."""


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
    pile_ids: ClassVar[tuple[PileId, ...]]
    """Every pile, in the order of the table."""
    _pile_order: ClassVar[dict[PileId, int]]
    _undo_layout: ClassVar[tuple[tuple[str, int], ...] | None] = None
    """The rule set's attributes and how each is frozen (``_PLAIN``...), found from the first
    game's attributes when it first pushes a move."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._undo_layout = None
        if "pile_ids" in cls.__dict__:
            cls._pile_order = {pile: index for index, pile in enumerate(cls.pile_ids)}

    def __init__(
        self,
        seed: int,
        algorithm: int = DEAL_ALGORITHM,
        *,
        rules: int = RULES_VERSION,
        keep_opening: bool = True,
        undo: bool = True,
    ) -> None:
        """Deal and lay out. ``opening_events`` says what the deal did (every card dealt, in
        some rule sets); ``keep_opening=False`` leaves it empty, and ``undo=False`` keeps no
        undo records, for a server that holds thousands of games, shows their players views,
        never the opening, and never takes a move back."""
        if rules not in RULES_VERSIONS:
            raise ValueError(f"unknown rules version {rules!r}")
        self._begin(seed, algorithm, rules, undo)
        removed, stock = deal_stock(self.packs, self.taken_out, seed, algorithm)
        opening = self._setup(removed, stock)
        opening += self._forced_redeals()
        self._settle()
        self.opening_events: list[Event] = opening if keep_opening else []

    def _begin(self, seed: int | None, algorithm: int, rules: int, undo: bool) -> None:
        """The state every game has before its rule set lays out the cards."""
        self.seed = seed
        """The deal number; None for a game set up from a position."""
        self.algorithm = algorithm
        self.rules = rules
        self.history: list[Move] = []
        self._first_move = 0
        """Moves made before ``history`` begins: a position's count of moves."""
        self.resigned = False
        self._legal: list[Move] | None = None
        self._outcome: Outcome | None = None
        """``legal_moves`` and ``outcome`` are asked for several times per position (by
        ``play``, then by whoever shows the result): each is worked out once, until ``push``."""
        self._stale: list[Move] | None = None
        self._dirty: set[PileId] = set()
        """The legal moves of an earlier position, and the piles changed since, for a rule set
        that works out the next list from them (``_moves_after``)."""
        self._changed: set[PileId] = set()
        """The piles moves have touched since ``changed_piles`` was last asked."""
        self._undo: list[tuple[Any, ...]] | None = [] if undo else None
        """One record per move of ``history`` (see the module docstring)."""

    def _settle(self) -> None:
        """Once the cards are laid out: nothing is reported changed yet."""
        self._changed.clear()
        self._dirty.clear()
        self._shown = {pile: self._pile_state(pile) for pile in self.pile_ids}
        """Every pile as ``changed_piles`` last reported it (as dealt, at first): what the
        touched piles are compared with."""

    # -- hooks for rule sets ---------------------------------------------------------------

    @abstractmethod
    def _setup(self, taken_out: list[Card], stock: list[Card]) -> list[Event]:
        """Lay out the cards (``stock[0]`` is dealt first) and advance to the first decision."""

    @abstractmethod
    def _moves(self) -> list[Move]:
        """Every legal move now, resign excepted; empty when nothing more can be done."""

    def _moves_after(self, earlier: list[Move], changed: set[PileId]) -> list[Move] | None:
        """What ``_moves`` returns, worked out from the list of an earlier position, ``earlier``,
        and the piles changed since, ``changed``, or None where that cannot be done (then
        ``_moves`` is called). Most moves a rule set lists depend on two piles only, so after a
        move most of the list stands (issue 11: listing them in full after every move was the
        largest cost in the engine). A rule set that implements it returns exactly the list
        ``_moves`` would, in the same order, and None when anything other than piles changed
        what is legal (a counter, a phase); tests/engine/test_incremental.py checks it against
        ``_moves`` after every move of many games."""
        return None

    @abstractmethod
    def _apply(self, move: Move) -> list[Event]:
        """Apply a move known to be legal (never resign), then advance through forced steps."""

    @abstractmethod
    def _refusal(self, move: Move) -> str:
        """Why ``move``, which is not legal now, is refused: a sentence for a person."""

    @abstractmethod
    def _pile_state(self, pile: PileId) -> PileState:
        """One pile of ``pile_ids`` with every card, face-up flags included."""

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

    @abstractmethod
    def _state(self) -> dict[str, Any]:
        """What is part of the position but not shown by the piles (redeals used, the heap to
        take from...), as JSON values: for ``position`` and ``full_state``."""

    @abstractmethod
    def _restore(self, piles: dict[PileId, list[Card]], state: StateReader) -> None:
        """Set up every attribute ``_setup`` sets from a position: ``piles`` holds every pile
        of ``pile_ids``, each card once per pack; ``state`` reads and checks the fields
        ``_state`` writes. Raise ``InvalidPositionError`` for what no deal could hold."""

    # -- what callers use ------------------------------------------------------------------

    def legal_moves(self) -> list[Move]:
        if self.resigned:
            return []
        if self._legal is None:
            self._legal = [] if self.is_won() else self._work_out_moves()
        return [*self._legal, RESIGN] if self._legal else []

    def _work_out_moves(self) -> list[Move]:
        """``_moves``, from the last list worked out where the rule set can (``_moves_after``)."""
        earlier, self._stale = self._stale, None
        moves = None if earlier is None else self._moves_after(earlier, self._dirty)
        self._dirty.clear()
        return self._moves() if moves is None else moves

    def is_legal(self, move: Move) -> bool:
        return move in self.legal_moves()

    def legal_move_named(self, text: str) -> Move | None:
        """The legal move whose text is exactly ``text`` (as ``str`` writes it), or None. A
        server reads a client's move, nearly always one it listed to them, this way: a look
        through the list took 0.3-0.5 µs where ``Move.parse`` took 1.4-7 µs."""
        for move in self.legal_moves():
            if str(move) == text:
                return move
        return None

    def play(self, move: Move) -> list[Event]:
        """Validate and apply a move; raise ``IllegalMoveError`` saying why it is refused."""
        outcome = self.outcome()
        if outcome.is_over:
            raise IllegalMoveError(move, f"the game is over ({outcome})")
        legal = self.legal_moves()
        try:
            # The list's own move is kept in the history: it lives as long as the game, and the
            # rule set's moves are made once and shared (``transfer``), where ``move`` is new.
            move = legal[legal.index(move)]
        except ValueError:
            raise IllegalMoveError(move, self._refusal(move)) from None
        return self.push(move)

    def push(self, move: Move) -> list[Event]:
        """Apply a move without validating it (replay of a log that was validated before)."""
        if self._undo is not None:
            self._undo.append(self._freeze())
        self.history.append(move)
        self._stale, self._legal, self._outcome = self._legal, None, None
        if move.source is not None and move.target is not None:
            self._changed.update((move.source, move.target))
            self._dirty.update((move.source, move.target))
        if move.is_resign:
            self.resigned = True
            return [Event(EventKind.RESIGNED, "resigned")]
        events = self._apply(move)
        events += self._forced_redeals()
        return events

    def pop(self) -> Move:
        """Undo the last move, with the forced steps that followed it, and return it. Raise
        ``IndexError`` when there is none (back at the deal, or at the position the game was
        set up from). ``changed_piles`` then reports, as ever, the piles that differ from what
        it last reported: a move undone before it was asked shows nothing."""
        if not self.history:
            raise IndexError("no move to undo")
        if self._undo is None:
            raise IndexError("this game keeps no undo records: it was made with undo=False")
        self._thaw(self._undo.pop())
        self._stale = None
        self._dirty.clear()
        self._changed.update(self.pile_ids)
        return self.history.pop()

    @property
    def keeps_undo(self) -> bool:
        """Whether ``pop`` can undo moves (False for a game made with ``undo=False``)."""
        return self._undo is not None

    def state_key(self) -> tuple[Any, ...]:
        """A hashable value equal for two games of one rule set and rules version exactly when
        their positions are equal, the count of moves aside: what a solver keys its table of
        positions seen by. It holds the same rule-set state an undo record does (every attribute
        the rule set set up, so nothing that decides what happens next is left out), with each
        list of cards written as the cards' texts run together: ``AS2S3S`` (a card's text ends
        in its suit letter and no rank is a prefix of another card's text, so the run reads one
        way only). The two equal cards of two packs give the same text, as the rules treat them
        alike (RULINGS, "Cards and deals"). About 7 µs for a two-pack game, a quarter of
        ``position()``; resigned games are not keyed (a solver never resigns)."""
        layout = type(self)._undo_layout
        if layout is None:
            layout = type(self)._undo_layout = self._find_undo_layout()
        state = self.__dict__
        key: list[Any] = []
        for name, how in layout:
            value = state[name]
            key.append(
                value
                if how == _PLAIN
                else _list_key(value)
                if how == _LIST
                else tuple(map(_list_key, value))
            )
        return tuple(key)

    def _freeze(self) -> tuple[Any, ...]:
        layout = type(self)._undo_layout
        if layout is None:
            layout = type(self)._undo_layout = self._find_undo_layout()
        state = self.__dict__
        frozen: list[Any] = [self.resigned, self._legal, self._outcome]
        for key, how in layout:
            value = state[key]
            frozen.append(
                value
                if how == _PLAIN
                else tuple(value)
                if how == _LIST
                else tuple(map(tuple, value))
            )
        return tuple(frozen)

    def _thaw(self, record: tuple[Any, ...]) -> None:
        layout = type(self)._undo_layout
        assert layout is not None
        self.resigned, self._legal, self._outcome = record[:3]
        state = self.__dict__
        for (key, how), value in zip(layout, record[3:], strict=True):
            state[key] = (
                value if how == _PLAIN else list(value) if how == _LIST else list(map(list, value))
            )

    def _find_undo_layout(self) -> tuple[tuple[str, int], ...]:
        layout = []
        for key, value in self.__dict__.items():
            if key not in _NOT_UNDONE:
                how = _PLAIN
                if isinstance(value, list):
                    how = _LISTS if value and isinstance(value[0], list) else _LIST
                layout.append((key, how))
        return tuple(layout)

    def _mark_changed(self, *piles: PileId) -> None:
        """Note that the move being made changes ``piles`` (or may: ``changed_piles`` compares
        them with what was last reported)."""
        self._changed.update(piles)
        self._dirty.update(piles)

    def _forced_redeals(self) -> list[Event]:
        """RULINGS principle 6 (rules version 2): a redeal that is the only thing left to do,
        resign aside, is made at once and reported by its own events; where other moves
        remain, the player chooses when to redeal. The moves found on the way are kept, so the
        position's legal moves are worked out once, as before."""
        if self.rules < 2:
            return []
        events: list[Event] = []
        while not self.is_won():
            moves = self._work_out_moves()
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
        return Progress(
            self.foundation_count(), self.total_cards, self._first_move + len(self.history)
        )

    def view(self) -> View:
        return View(
            rule_set=self.name,
            piles=tuple(pile.seen() for pile in self.table()),
            legal_moves=tuple(self.legal_moves()),
            outcome=self.outcome(),
            progress=self.progress(),
            notes=tuple(self._notes()),
        )

    def table(self) -> list[PileState]:
        """Every pile in the full state, hidden cards included."""
        return [self._pile_state(pile) for pile in self.pile_ids]

    def changed_piles(self) -> list[PileState]:
        """The piles in the full state that changed since this was last asked (since the
        deal, at first), in table order: a server that asks after every move sends their
        ``seen()`` form, not the whole table. Only the piles the moves touched are looked at,
        and one left as it was (a stock gathered and dealt out again) is not reported."""
        shown = self._shown
        changed = []
        for pile in sorted(self._changed, key=self._pile_order.__getitem__):
            now = self._pile_state(pile)
            if now != shown[pile]:
                shown[pile] = now
                changed.append(now)
        self._changed.clear()
        return changed

    def notes(self) -> list[str]:
        return self._notes()

    def full_state(self) -> dict[str, Any]:
        """Everything, hidden cards included: for ``deal --json`` and verification only."""
        return {
            "rule_set": self.name,
            "seed": None if self.seed is None else str(self.seed),
            "algorithm": self.algorithm,
            "rules": self.rules,
            "moves": [str(move) for move in self.history],
            "piles": [pile.to_json() for pile in self.table()],
            "outcome": self.outcome().to_json(),
            "progress": self.progress().to_json(),
            **self._state(),
        }

    def position(self) -> Position:
        """The complete state, hidden cards included (docs/position.md)."""
        return Position(
            self.name,
            self.rules,
            self._first_move + len(self.history),
            self.resigned,
            tuple(self.table()),
            self._state(),
        )

    @classmethod
    def from_position(cls, data: Position | dict[str, Any], *, undo: bool = True) -> Game:
        """A game set up from a position or its JSON form, after checking it (docs/position.md);
        raise ``InvalidPositionError`` saying what is wrong. Called on ``Game``, the rule set is
        the one the position names; called on a rule set, the position must be one of it. The
        game has no seed and no history: ``pop`` goes back no further than the position."""
        position = data if isinstance(data, Position) else Position.from_json(data)
        if cls is Game:
            from engine.registry import find_rule_set  # the registry imports this module

            try:
                rule_set = find_rule_set(position.rule_set)
            except EngineError as error:
                raise InvalidPositionError(str(error)) from None
            return rule_set.from_position(position, undo=undo)
        if position.rule_set != cls.name:
            raise InvalidPositionError(f"a {position.rule_set} position is not a {cls.name} one")
        if position.rules not in RULES_VERSIONS:
            raise InvalidPositionError(f"unknown rules version {position.rules!r}")
        game = object.__new__(cls)
        game._begin(None, DEAL_ALGORITHM, position.rules, undo)
        state = StateReader(position.state)
        game._restore(cls._dealt_piles(position), state)
        state.finish()
        for pile in position.piles:
            shown = game._pile_state(pile.pile).face_up
            if shown != pile.face_up:
                marked = " ".join("up" if up else "down" for up in shown) or "none"
                raise InvalidPositionError(
                    f"piles: {pile.pile}: the rules show its cards "
                    f"face {marked} here (a face-down card is marked #)"
                )
        game._first_move, game.resigned = position.moves, position.resigned
        game._settle()
        game.opening_events = []
        return game

    @classmethod
    def _dealt_piles(cls, position: Position) -> dict[PileId, list[Card]]:
        """The position's piles, each card given its pack in table order (the first of two
        equal cards pack 0), after checking that every pile is there once and every card of
        the pack(s) once per pack."""
        named = Counter(pile.pile for pile in position.piles)
        twice = [str(pile) for pile, count in named.items() if count > 1]
        if twice:
            raise InvalidPositionError(f"piles: {', '.join(twice)} named more than once")
        missing = [str(pile) for pile in cls.pile_ids if pile not in named]
        unknown = [str(pile) for pile in named if pile not in cls._pile_order]
        if missing or unknown:
            raise InvalidPositionError(
                f"piles: {cls.name} has the piles {', '.join(map(str, cls.pile_ids))} (missing: "
                f"{', '.join(missing) or 'none'}; unknown: {', '.join(unknown) or 'none'})"
            )
        seen: Counter[Card] = Counter()
        by_pile = {pile.pile: pile.cards for pile in position.piles}
        piles: dict[PileId, list[Card]] = {}
        for pile in cls.pile_ids:
            cards = piles[pile] = []
            for card in by_pile[pile]:
                pack = seen[card]
                if pack >= cls.packs:
                    raise InvalidPositionError(
                        f"piles: {card} is there more than {_times(cls.packs)}"
                    )
                seen[card] += 1
                cards.append(CARDS[card.rank, card.suit, pack])
        absent = [f"{card}" for card in CARDS.values() if card.pack == 0 and seen[card] < cls.packs]
        if absent:
            raise InvalidPositionError(
                f"piles: {cls.name} plays with every card "
                f"{_times(cls.packs)}; missing: {' '.join(absent)}"
            )
        return piles

    def copy(self) -> Self:
        """An independent copy: lists are copied two levels deep (piles of cards, lists of
        piles), dicts and sets one (they hold immutable values); cards, pile ids, moves and undo
        records are immutable and shared. A list holds one kind of thing (cards, or lists of
        cards...), so its first item says whether its items are copied too."""
        clone = object.__new__(type(self))
        clone.__dict__ = {key: _copy_value(value) for key, value in self.__dict__.items()}
        return clone


def _list_key(items: list[Any]) -> Any:
    """A list of cards as their texts run together; any other list as a tuple."""
    if items and type(items[0]) is Card:
        return "".join(map(_TEXT, items))
    return tuple(items)


def _times(count: int) -> str:
    return "once" if count == 1 else "twice"


def _copy_value(value: Any) -> Any:
    if isinstance(value, list):
        if value and isinstance(value[0], list | dict | set):
            return [item.copy() for item in value]
        return value.copy()
    if isinstance(value, dict | set):
        return value.copy()
    return value
