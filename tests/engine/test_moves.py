"""Cards, pile ids and moves: text and JSON forms both ways, and clear errors for bad input."""

from __future__ import annotations

import pytest
from hypothesis import given
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
        source=st.builds(PileId, st.sampled_from(["heap", "corner", "turned"]),
                         st.one_of(st.none(), st.integers(1, 12))),
        target=st.builds(PileId, st.sampled_from(["foundation", "heap", "kings"]),
                         st.one_of(st.none(), st.integers(1, 12))),
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
        "7S x3 corner:1 -> corner:4 bottom")
    assert str(Move.parse("reserve:2 -> hand")) == "reserve:2 -> hand"


@pytest.mark.parametrize("text", ["", "fly", "8H heap:3", "8H 9H heap:3 -> heap:4",
                                  "8H heap:3 -> ", "x0 heap:1 -> heap:2", "8H heap:3 -> a b"])
def test_malformed_move_texts_are_refused(text: str) -> None:
    with pytest.raises(InvalidMoveError):
        Move.parse(text)


@pytest.mark.parametrize("data", [3, [], {"from": "heap:1"}, {"action": "fly"},
                                  {"action": "redeal", "card": "8H"},
                                  {"from": "heap:1", "to": "heap:2", "count": "2"},
                                  {"from": "heap:1", "to": "heap:2", "count": True},
                                  {"from": "heap:1", "to": "heap:2", "colour": "red"}])
def test_malformed_move_json_is_refused(data: object) -> None:
    with pytest.raises(InvalidMoveError):
        Move.from_json(data)
