"""Cards, pile ids and moves: text and JSON forms both ways, and clear errors for bad input."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import CARD_BY_ID, Card, Suit
from engine.errors import InvalidMoveError
from engine.moves import ACTIONS, Move
from engine.piles import PileId, numbered


def test_card_text_forms() -> None:
    assert str(Card(10, Suit.H)) == "10H"
    assert Card.parse("th") == Card(10, Suit.H) == Card.parse("10H")
    assert Card.parse(" qd ") == Card(12, Suit.D)
    assert eval(repr(Card(1, Suit.S))) == Card(1, Suit.S)


def test_equal_cards_of_two_packs_are_interchangeable_but_keep_their_ids() -> None:
    first, second = CARD_BY_ID[7], CARD_BY_ID[59]
    assert first == second and hash(first) == hash(second)
    assert (first.id, second.id) == (7, 59)


@pytest.mark.parametrize("text", ["", "1S", "11H", "AX", "KSS", "S"])
def test_bad_cards_are_refused_with_a_hint(text: str) -> None:
    with pytest.raises(InvalidMoveError, match="is not a card"):
        Card.parse(text)


def test_pile_ids() -> None:
    assert str(PileId("heap", 3)) == "heap:3" and str(PileId("waste")) == "waste"
    assert PileId.parse("Foundation:2") == PileId("foundation", 2)
    assert numbered("aux", 2) == (PileId("aux", 1), PileId("aux", 2))
    for bad in ["heap:", "3", "heap:x", "he ap"]:
        with pytest.raises(InvalidMoveError, match="is not a pile"):
            PileId.parse(bad)


moves = st.one_of(
    st.sampled_from(ACTIONS).map(Move.act),
    st.builds(
        Move,
        source=st.builds(
            PileId,
            st.sampled_from(["heap", "corner", "turned"]),
            st.one_of(st.none(), st.integers(1, 12)),
        ),
        target=st.builds(
            PileId,
            st.sampled_from(["foundation", "heap", "kings"]),
            st.one_of(st.none(), st.integers(1, 12)),
        ),
        card=st.one_of(st.none(), st.sampled_from(CARD_BY_ID[:52])),
        count=st.integers(1, 13),
        bottom=st.booleans(),
    ),
)


@given(moves)
def test_moves_round_trip_through_text_and_json(move: Move) -> None:
    assert Move.parse(str(move)) == move
    assert Move.from_json(move.to_json()) == move
    assert eval(repr(move)) == move


def test_move_text_reads_like_a_log() -> None:
    move = Move(PileId("heap", 3), PileId("foundation", 2), Card(8, Suit.H))
    assert str(move) == "8H heap:3 -> foundation:2"
    assert str(Move.parse("7s x3 corner:1 -> corner:4 BOTTOM")) == (
        "7S x3 corner:1 -> corner:4 bottom"
    )
    assert str(Move.parse("reserve:2 -> hand")) == "reserve:2 -> hand"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "fly",
        "8H heap:3",
        "8H 9H heap:3 -> heap:4",
        "8H heap:3 -> ",
        "x0 heap:1 -> heap:2",
        "8H heap:3 -> a b",
    ],
)
def test_malformed_move_texts_are_refused(text: str) -> None:
    with pytest.raises(InvalidMoveError):
        Move.parse(text)


@pytest.mark.parametrize(
    "data",
    [
        3,
        [],
        {"from": "heap:1"},
        {"action": "fly"},
        {"action": "redeal", "card": "8H"},
        {"from": "heap:1", "to": "heap:2", "count": "2"},
        {"from": "heap:1", "to": "heap:2", "count": True},
        {"from": "heap:1", "to": "heap:2", "colour": "red"},
    ],
)
def test_malformed_move_json_is_refused(data: object) -> None:
    with pytest.raises(InvalidMoveError):
        Move.from_json(data)


odd_digits = st.one_of(
    *(
        st.sampled_from(
            [char for char in map(chr, range(0x20000)) if test(char) and not char.isascii()]
        )
        for test in (str.isdecimal, lambda c: c.isdigit() and not c.isdecimal())
    )
)
"""Digits of other scripts, superscripts, circled digits (``٣``, ``²``, ``①``): ``str.isdigit``
takes them all and ``int`` some; a move is written in the ASCII digits only."""
some_digits = st.text(st.one_of(odd_digits, st.sampled_from("0123456789")), min_size=1, max_size=4)


def word(*valid: str, prefix: str = "") -> st.SearchStrategy[str]:
    """One of these words, or the prefix followed by digits of any script."""
    return st.one_of(st.sampled_from(valid), st.builds(prefix.__add__, some_digits))


transfers = st.builds(
    lambda *parts: " ".join(part for part in parts if part),
    st.one_of(st.just(""), word("AS", "10H", "th", "JD"), st.builds("{}H".format, some_digits)),
    st.one_of(st.just(""), word("x2", "X13", prefix="x")),
    word("heap:1", "waste", prefix="heap:"),
    st.just("->"),
    word("foundation:2", "hand", prefix="foundation:"),
    st.sampled_from(["", "bottom"]),
)
"""Texts shaped like a transfer, with digits of any script in its ranks, count and indexes."""
move_words = st.one_of(
    st.text(min_size=1, max_size=6),
    word("->", "bottom", "resign", "AS"),
    word("x3", prefix="x"),
    word("heap:1", "waste", prefix="heap:"),
)
move_texts = st.one_of(st.text(), transfers, st.lists(move_words, max_size=6).map(" ".join))


def parses_or_is_refused(parse: Callable[[], Move], *words: str) -> None:
    """Parsing gives a move whose text form parses back to it, read from ASCII words alone (any
    whitespace may part them); or it raises InvalidMoveError, never anything else."""
    try:
        move = parse()
    except InvalidMoveError:
        return
    assert Move.parse(str(move)) == move
    assert all(word.isascii() for word in words), f"{move!r} read from {words!r}"


@given(move_texts)
def test_any_text_parses_to_a_move_that_round_trips_or_is_refused(text: str) -> None:
    parses_or_is_refused(lambda: Move.parse(text), *text.split())


@settings(max_examples=400)
@given(transfers)
def test_a_transfer_with_digits_of_any_script_round_trips_or_is_refused(text: str) -> None:
    parses_or_is_refused(lambda: Move.parse(text), *text.split())


@given(
    st.fixed_dictionaries(
        {"from": move_words, "to": move_words},
        optional={"card": move_words, "count": st.integers()},
    )
)
def test_any_move_object_parses_to_a_move_that_round_trips_or_is_refused(
    data: dict[str, object],
) -> None:
    parses_or_is_refused(
        lambda: Move.from_json(data),
        *(value.strip() for value in data.values() if isinstance(value, str)),
    )


@pytest.mark.parametrize(
    "text",
    [
        "AS x² heap:1 -> heap:2",
        "AS x٣ heap:1 -> heap:2",
        "²H heap:1 -> heap:2",
        "1²H heap:1 -> heap:2",
        "AS heap:٣ -> heap:2",
        "AS heap:1 -> foundation:²",
        "Aſ heap:1 -> heap:2",
        "AS heap:1 -> \u212aings",
        "AS x1000 heap:1 -> heap:2",
        "AS heap:1234 -> heap:2",
        "AS heap:1 -> bottom bottom",
    ],
)
def test_counts_indexes_and_ranks_are_ascii_digits_only(text: str) -> None:
    with pytest.raises(InvalidMoveError):
        Move.parse(text)
