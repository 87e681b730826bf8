"""Cornerstones and Arnold's version: one or more tests per rule of docs/rules/cornerstones.md
(CS-n) and docs/rules/cornerstones-arnold.md (CA-n)."""

from __future__ import annotations

import pytest

from engine.cards import CARDS, Card, Suit
from engine.errors import IllegalMoveError
from engine.moves import Move
from engine.piles import PileId
from engine.rulesets.corners_common import FOUNDATION_INDEX
from engine.rulesets.cornerstones import (
    PILE_INDEX,
    PILES,
    Cornerstones,
    CornerstonesArnold,
)
from engine.view import Event, Status
from tests.engine.rulesets.positions import set_up

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
STARTED = {
    **{f"ace:{line}": f"A{suit}" for line, suit in enumerate("SHDC", 1)},
    **{f"king:{line}": f"K{suit}" for line, suit in enumerate("SHDC", 1)},
}
"""Every foundation started, lines 1..4 holding S, H, D, C: as after the first deal."""


def cards(text: str) -> list[Card]:
    return [Card.parse(word) for word in text.split()]


def up(suit: str, last: str) -> str:
    """``up("S", "6")`` is "AS 2S 3S 4S 5S 6S"."""
    return " ".join(rank + suit for rank in RANKS[: RANKS.index(last) + 1])


def down(suit: str, last: str) -> str:
    """``down("S", "8")`` is "KS QS JS 10S 9S 8S"."""
    return " ".join(rank + suit for rank in RANKS[RANKS.index(last) :][::-1])


def position(
    game_type: type[Cornerstones] = Cornerstones,
    *,
    piles: dict[str, str] | None = None,
    home: dict[str, str] | None = None,
    stock: str = "",
    turned: str = "",
    next_pile: str = "right:1",
    redeals_used: int = 0,
    rest: str = "left:5",
) -> Cornerstones:
    """A game set up from a position. ``home`` gives the foundations (default: STARTED, with
    ``home`` entries replacing places); lines get the suit of their cards; ``stock`` lists the
    next card dealt first. The cards named nowhere lie in pack order at the bottom of pile
    ``rest``, under the cards the test names there."""
    places = {**STARTED, **(home or {})}
    suits = [None] * 4
    for place, text in places.items():
        if text:
            suits[FOUNDATION_INDEX[PileId.parse(place)] % 4] = text.split()[0][-1]
    texts = {
        **(piles or {}),
        **places,
        "turned": turned,
        "stock": " ".join("#" + word for word in reversed(stock.split())),
    }
    state = {"next_pile": next_pile, "redeals_used": redeals_used, "line_suits": suits}
    return set_up(game_type, texts, state, rest={rest: None})


def by_hand(
    game_type: type[Cornerstones] = Cornerstones,
    *,
    piles: dict[str, str] | None = None,
    home: dict[str, str] | None = None,
    stock: str = "",
    turned: str = "",
    next_pile: str = "right:1",
    redeals_used: int = 0,
) -> Cornerstones:
    """A game (any seed) with its piles set by hand, for the tests of the deal itself: they need
    a table holding only the cards they name (every other card of a position would be dealt, or
    lie on a pile the deal adds to), and the engine to deal from any pile (a game set up from a
    position deals only after a move). ``home`` and ``stock`` as for ``position``."""
    game = game_type(0)
    places = {**STARTED, **(home or {})}
    game.piles = [cards((piles or {}).get(str(pile), "")) for pile in PILES]
    game.foundations = [[] for _ in FOUNDATION_INDEX]
    for place, text in places.items():
        game.foundations[FOUNDATION_INDEX[PileId.parse(place)]] = cards(text)
    game.line_suits = [None] * 4
    for index, pile in enumerate(game.foundations):
        if pile:
            game.line_suits[index % 4] = pile[0].suit
    game.stock = cards(stock)[::-1]
    game.turned = cards(turned)
    game.next_pile = PILE_INDEX[PileId.parse(next_pile)]
    game.redeals_used = redeals_used
    game._legal = None
    return game


def empty_home() -> dict[str, str]:
    return {place: "" for place in STARTED}


def deal(game: Cornerstones, stock: str) -> list[Event]:
    """Put ``stock`` in the stock and let the engine deal it."""
    game.stock = cards(stock)[::-1]
    game._legal = None
    return game._deal()


def pile(game: Cornerstones, name: str) -> str:
    return " ".join(str(card) for card in game.piles[PILE_INDEX[PileId.parse(name)]])


def place(game: Cornerstones, name: str) -> str:
    return " ".join(str(card) for card in game.foundations[FOUNDATION_INDEX[PileId.parse(name)]])


def legal(game: Cornerstones) -> set[str]:
    return {str(move) for move in game.legal_moves()}


def refusal(game: Cornerstones, text: str) -> str:
    before = game.full_state()
    with pytest.raises(IllegalMoveError) as refused:
        game.play(Move.parse(text))
    assert game.full_state() == before
    return refused.value.reason


# -- the layout ------------------------------------------------------------------------------


@pytest.mark.parametrize("game_type", [Cornerstones, CornerstonesArnold])
def test_cs01_two_full_packs_and_nothing_taken_out(game_type: type[Cornerstones]) -> None:
    game = game_type(2026)
    ids = [card["id"] for state in game.full_state()["piles"] for card in state["cards"]]
    assert sorted(ids) == list(range(104))
    assert game.packs == 2 and game.total_cards == 104 and game.taken_out == ()


def test_cs02_two_columns_of_six_and_four_foundation_lines() -> None:
    slots = {str(slot.pile): (slot.row, slot.col) for slot in Cornerstones.layout}
    for row in range(1, 7):
        assert slots[f"left:{row}"] == (row - 1, 0)
        assert slots[f"right:{row}"] == (row - 1, 3)
    for line in range(1, 5):
        assert slots[f"ace:{line}"] == (line, 1) and slots[f"king:{line}"] == (line, 2)
    assert {"stock", "turned"} <= set(slots)
    labels = {str(slot.pile): slot.label for slot in Cornerstones.layout}
    assert "cornerstone" in labels["left:1"] and "cornerstone" in labels["right:6"]
    assert "cornerstone" not in labels["left:2"]
    game = position(piles={"left:2": "5H", "left:3": "6C"})
    assert "there is no pile heap:3" in refusal(game, "5H left:2 -> heap:3")
    assert "there is no pile left:7" in refusal(game, "5H left:7 -> ace:1")


def test_cs03_dealt_cards_are_face_up_and_the_stock_face_down() -> None:
    game = by_hand(home=empty_home())
    deal(game, "KH 4C AS 9D")
    view = game.view()
    assert view.pile(PileId("stock")).cards == (None, None, None)
    assert [str(card) for card in view.pile(PileId("turned")).cards] == ["KH"]
    assert "4C" not in {str(card) for card in view.visible_cards()}
    game.play(Move.parse("KH turned -> king:2"))
    view = game.view()
    assert {"KH", "4C", "AS"} <= {str(card) for card in view.visible_cards()}
    assert view.pile(PileId("stock")).cards == (None,)
    states = {str(state.pile): state for state in game.table()}
    assert states["right:1"].face_up == (True,) and states["stock"].face_up == (False,)


@pytest.mark.parametrize("game_type", [Cornerstones, CornerstonesArnold])
def test_cs03_nothing_the_engine_says_depends_on_the_cards_still_in_the_stock(
    game_type: type[Cornerstones],
) -> None:
    tries = (
        "stock -> left:1",
        "QH stock -> right:2",
        "redeal",
        "turn",
        "9D left:2 -> left:3",
        "7S turned -> left:1",
        "7S turned -> king:2",
        "QH turned -> king:2",
        "turned -> ace:1",
        "9D left:2 -> ace:3",
        "6S ace:1 -> king:1",
    )

    def everything_said(stock: str) -> tuple[object, ...]:
        game = by_hand(
            game_type,
            piles={"left:2": "9D", "left:3": "10D"},
            home={"ace:1": up("S", "6"), "king:1": down("S", "8")},
        )
        events = deal(game, f"7S {stock}")
        view = game.view()
        return (
            tuple(map(str, events)),
            view.legal_moves,
            view.notes,
            tuple(pile for pile in view.piles if pile.pile.kind != "stock"),
            tuple(refusal(game, text) for text in tries),
        )

    assert everything_said("QH JC 5D") == everything_said("2C 3H AD")


# -- the deal --------------------------------------------------------------------------------


def test_cs04_deal_order_right_column_then_left_round_again() -> None:
    game = Cornerstones(20261122)
    events = list(game.opening_events)
    while game.turned:
        events += game.play(game.legal_moves()[0])
    expected = 0
    dealt = 0
    for event in events:
        if event.kind == "dealt":
            assert event.text.endswith(f"dealt to {PILES[expected]}")
            expected = (expected + 1) % 12
            dealt += 1
        elif event.kind in ("home", "choose") and " from turned " not in event.text:
            assert f"turned for {PILES[expected]}" in event.text  # the engine's, not a choice
    assert dealt + game.foundation_count() == 104
    assert str(PILES[0]) == "right:1" and str(PILES[6]) == "left:1"
    first = next(event for event in game.opening_events if event.kind == "dealt")
    assert first.text.endswith("dealt to right:1")
    waiting = by_hand(home=empty_home())
    deal(waiting, "KH 4C")
    assert refusal(waiting, "stock -> right:1") == (
        "the engine deals the stock itself, one card at a time, onto the piles in turn"
    )
    assert "no card may be put on stock" in refusal(waiting, "KH turned -> stock")


def test_cs05_first_ace_or_king_chooses_a_free_line_from_any_pile() -> None:
    game = by_hand(home={**empty_home(), "ace:2": "AH"}, next_pile="right:4")
    deal(game, "AS 5C AD")  # AD waits in turned for its line, so the deal is not over
    assert pile(game, "right:4") == ""
    assert legal(game) == {
        "AS turned -> ace:1",
        "AS turned -> ace:3",
        "AS turned -> ace:4",
        "resign",
    }
    assert "line 2 holds hearts, not spades" in refusal(game, "AS turned -> ace:2")
    assert "only the first king of a suit starts king:1" in refusal(game, "AS turned -> king:1")
    events = game.play(Move.parse("AS turned -> ace:3"))
    assert events[0].text == "AS from turned to ace:3: line 3 holds spades"
    assert game.line_suits[2] is Suit.S
    assert pile(game, "right:4") == "5C"


def test_cs05_with_one_free_line_left_the_engine_places_the_card() -> None:
    home = {**empty_home(), "ace:1": "AS", "king:2": "KH", "ace:3": "AD"}
    game = by_hand(home=home, next_pile="left:3")
    events = deal(game, "KC")
    assert place(game, "king:4") == "KC"
    assert events[0].text == "KC turned for left:3, placed on king:4: line 4 holds clubs"


def test_cs06_the_other_starter_goes_to_the_same_line_from_any_pile() -> None:
    game = by_hand(home={**empty_home(), "ace:3": "AS"}, next_pile="right:2")
    deal(game, "KS AS")
    assert place(game, "king:3") == "KS"
    assert pile(game, "right:2") == "AS", "the second ace of spades is an ordinary card"


def test_cs06_the_first_ace_starts_its_place_even_where_it_could_end_the_king_place() -> None:
    game = by_hand(home={"ace:1": "", "king:1": down("S", "2")}, next_pile="left:1")
    deal(game, "AS AS")
    assert place(game, "ace:1") == "AS" and place(game, "king:1").endswith("3S 2S AS")


def test_cs07_ace_places_build_up_and_king_places_down_in_suit() -> None:
    game = position(
        piles={"left:2": "3S", "left:3": "3H", "left:4": "4S", "right:2": "QH", "right:3": "JH"},
        home={"ace:1": "AS 2S"},
    )
    assert "3S left:2 -> ace:1" in legal(game)
    assert "QH right:2 -> king:2" in legal(game)
    assert "line 1 holds spades, not hearts" in refusal(game, "3H left:3 -> ace:1")
    assert "4S does not follow 2S on ace:1, which builds up in suit" in refusal(
        game, "4S left:4 -> ace:1"
    )
    assert "JH does not follow KH on king:2, which builds down in suit" in refusal(
        game, "JH right:3 -> king:2"
    )
    ends = position(
        piles={"left:2": "KS", "left:3": "AH"},
        home={"ace:1": up("S", "Q"), "king:2": down("H", "2")},
    )
    assert {"KS left:2 -> ace:1", "AH left:3 -> king:2"} <= legal(ends)


@pytest.mark.parametrize("cornerstone", ["right:1", "right:6", "left:1", "left:6"])
def test_cs08_card_turned_for_a_cornerstone_goes_to_any_foundation_at_once(
    cornerstone: str,
) -> None:
    game = by_hand(home={"ace:4": "AC 2C"}, next_pile=cornerstone)
    events = deal(game, "3C")
    assert place(game, "ace:4") == "AC 2C 3C" and pile(game, cornerstone) == ""
    assert events[0] == Event(
        "home", f"3C turned for {cornerstone}, placed on ace:4", (Card.parse("3C"),)
    )


def test_cs09_card_turned_for_a_side_pile_goes_only_to_its_own_line() -> None:
    game = by_hand(home={"ace:3": "AD 2D"}, next_pile="left:2")
    deal(game, "3D")
    assert pile(game, "left:2") == "3D" and place(game, "ace:3") == "AD 2D"
    same_line = by_hand(home={"ace:3": "AD 2D"}, next_pile="right:4")
    deal(same_line, "3D")
    assert pile(same_line, "right:4") == "" and place(same_line, "ace:3") == "AD 2D 3D"


@pytest.mark.parametrize("turned_for", ["right:1", "left:2"])
def test_cs10_card_fitting_two_foundations_waits_for_the_players_choice(turned_for: str) -> None:
    game = by_hand(
        piles={"left:4": "2H"},
        home={"ace:1": up("S", "6"), "king:1": down("S", "8")},
        next_pile=turned_for,
    )
    deal(game, "7S 9C")
    assert [str(card) for card in game.turned] == ["7S"]
    assert legal(game) == {"7S turned -> ace:1", "7S turned -> king:1", "resign"}
    assert "fits a foundation, so it is played there" in refusal(game, "7S turned -> left:5")
    assert "line 2 holds hearts, not spades" in refusal(game, "7S turned -> king:2")
    assert game.view().notes == (f"the deal: choose a foundation for 7S, turned for {turned_for}",)
    events = game.play(Move.parse("7S turned -> king:1"))
    assert place(game, "king:1").endswith("8S 7S")
    assert [event.kind for event in events] == ["home", "dealt", "deal-complete"]


def test_cs11_card_played_home_does_not_use_up_its_pile() -> None:
    game = by_hand(home={"king:2": "KH"}, next_pile="right:1")
    deal(game, "QH 5C 6C")
    assert place(game, "king:2") == "KH QH"
    assert pile(game, "right:1") == "5C" and pile(game, "right:2") == "6C"


def test_cs12_during_the_deal_only_the_turned_card_moves() -> None:
    game = by_hand(
        piles={"left:2": "2S", "left:3": "9D", "right:3": "8C"},
        home={"ace:4": "AC 2C 3C", "king:4": down("C", "5")},
        next_pile="right:1",
    )
    deal(game, "4C")
    assert legal(game) == {"4C turned -> ace:4", "4C turned -> king:4", "resign"}
    reason = refusal(game, "2S left:2 -> ace:1")
    assert "during the deal only the card just turned moves" in reason
    assert "9D left:3 -> right:3" not in legal(game)
    assert "only the card just turned" in refusal(game, "9D left:3 -> right:3")
    assert "only the card just turned" in refusal(game, "3C ace:4 -> king:4")


# -- moves during play -----------------------------------------------------------------------


def test_cs13_after_the_deal_any_top_card_goes_to_any_foundation_by_a_move() -> None:
    game = by_hand(piles={"left:2": "9C 2D", "right:6": "2S"})
    deal(game, "")
    assert pile(game, "left:2") == "9C 2D", "nothing goes home by itself after the deal"
    assert {"2D left:2 -> ace:3", "2S right:6 -> ace:1"} <= legal(game)
    assert refusal(game, "2D turned -> ace:3") == (
        "no card is waiting in turned: the deal is complete"
    )
    game.play(Move.parse("2D left:2 -> ace:3"))
    assert place(game, "ace:3") == "AD 2D" and pile(game, "left:2") == "9C"


def test_cs14_top_cards_build_on_each_other_up_or_down_regardless_of_suit() -> None:
    game = position(piles={"left:1": "8H", "left:2": "9S", "right:3": "7C", "right:4": "10D 3H"})
    assert {
        "8H left:1 -> left:2",
        "8H left:1 -> right:3",
        "9S left:2 -> left:1",
        "7C right:3 -> left:1",
    } <= legal(game)
    assert "3H is not one rank above or below 9S on left:2" in refusal(game, "3H right:4 -> left:2")
    assert "the top card of right:4 is 3H, not 10D" in refusal(game, "10D right:4 -> left:2")
    assert "cards move one at a time" in refusal(game, "8H x2 left:1 -> left:2")
    assert "name the card you move" in refusal(game, "left:1 -> left:2")
    assert "never under it" in refusal(game, "8H left:1 -> left:2 bottom")
    game.play(Move.parse("8H left:1 -> left:2"))
    assert pile(game, "left:2") == "9S 8H" and pile(game, "left:1") == ""


def test_cs14_equal_cards_of_the_two_packs_each_move_from_their_own_pile() -> None:
    game = position(
        piles={"left:2": "8H", "left:3": "9C", "right:2": "4D", "right:3": "5C", "right:5": "8H"}
    )
    right_eight = CARDS[(8, Suit.H, 0)]  # right:5 comes before left:2 in table order
    assert game.piles[PILE_INDEX[PileId("right", 5)]] == [right_eight]
    assert game.piles[PILE_INDEX[PileId("left", 2)]][-1].id != right_eight.id
    assert {
        "8H left:2 -> left:3",
        "8H right:5 -> left:3",
        "9C left:3 -> left:2",
        "9C left:3 -> right:5",
    } <= legal(game)
    game.play(Move.parse("8H right:5 -> left:3"))
    assert game.piles[PILE_INDEX[PileId("left", 3)]][-1].id == right_eight.id
    assert pile(game, "left:2") == "8H" and pile(game, "right:5") == ""
    assert "8H is not one rank above or below 8H on left:3" in refusal(game, "8H left:2 -> left:3")


def test_cs15_ranks_go_round_the_corner() -> None:
    game = position(piles={"left:2": "AD", "right:5": "KC", "right:2": "2S", "left:4": "QH"})
    assert {
        "AD left:2 -> right:5",
        "AD left:2 -> right:2",
        "KC right:5 -> left:2",
        "2S right:2 -> left:2",
        "QH left:4 -> right:5",
        "KC right:5 -> left:4",
    } <= legal(game)
    assert "QH is not one rank above or below AD" in refusal(game, "QH left:4 -> left:2")


def test_cs16_an_emptied_pile_stays_empty() -> None:
    game = position(piles={"left:2": "8H", "left:3": "9C"})
    assert "8H left:2 -> left:4" not in legal(game)
    reason = refusal(game, "8H left:2 -> left:4")
    assert reason == "left:4 is empty, and an emptied pile stays empty"
    assert "there is no card on left:4" in refusal(game, "8H left:4 -> left:2")


def test_cs17_reversal_when_the_two_foundations_of_a_suit_meet() -> None:
    game = position(home={"ace:2": up("H", "7"), "king:2": down("H", "8")})
    assert {"7H ace:2 -> king:2", "8H king:2 -> ace:2"} <= legal(game)
    game.play(Move.parse("7H ace:2 -> king:2"))
    assert place(game, "king:2").endswith("8H 7H") and place(game, "ace:2").endswith("5H 6H")
    apart = position(
        piles={"left:2": "5H", "left:3": "6C"},
        home={"ace:2": up("H", "6"), "king:2": down("H", "9")},
    )
    assert "6H does not follow 9H on king:2, which builds down" in refusal(
        apart, "6H ace:2 -> king:2"
    )
    assert "may move only to king:2, the other foundation of its suit" in refusal(
        game, "6H ace:2 -> king:1"
    )


def test_cs18_the_ace_and_king_that_started_a_foundation_never_move() -> None:
    game = position(
        home={"ace:1": "AS", "king:1": down("S", "2"), "ace:3": up("D", "Q"), "king:3": "KD"}
    )
    moves = legal(game)
    assert "AS ace:1 -> king:1" not in moves and "KD king:3 -> ace:3" not in moves
    assert {"2S king:1 -> ace:1", "QD ace:3 -> king:3"} <= moves
    assert "AS started ace:1 and stays there" in refusal(game, "AS ace:1 -> king:1")
    assert "KD started king:3 and stays there" in refusal(game, "KD king:3 -> ace:3")


def test_cs19_foundation_cards_never_go_back_to_the_piles() -> None:
    game = position(piles={"left:2": "3C", "left:3": "4D"}, home={"ace:1": "AS 2S"})
    assert "never go back to the piles" in refusal(game, "2S ace:1 -> left:2")


# -- automatic steps -------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(25))
def test_cs20_engine_deals_until_a_choice_or_the_end_of_the_deal(seed: int) -> None:
    game = Cornerstones(seed)
    turned = [event for event in game.opening_events if event.kind in {"dealt", "home", "choose"}]
    assert all(len(event.cards) == 1 and str(event.cards[0]) in event.text for event in turned)
    assert len(turned) == 104 - len(game.stock)
    if game.turned:
        assert game.opening_events[-1].kind == "choose"
        assert all(move.source == PileId("turned") or move.is_resign for move in game.legal_moves())
    else:
        assert not game.stock
        assert game.opening_events[-1].text == "the deal is complete: build freely"
        assert game.foundation_count() >= 8, "every first ace and king is home"


def test_cs20_nothing_happens_by_itself_after_the_deal() -> None:
    game = position(piles={"left:1": "3S 2S", "left:2": "5D"})
    events = game.play(Move.parse("2S left:1 -> ace:1"))
    assert [event.text for event in events] == ["2S from left:1 to ace:1"]
    assert pile(game, "left:1") == "3S", "3S fits ace:1 now, but waits for the player"


# -- redeals and the end ---------------------------------------------------------------------


def test_cs21_cornerstones_has_no_redeal() -> None:
    game = position(piles={"left:2": "5H", "right:3": "4C"})
    assert "redeal" not in legal(game)
    assert refusal(game, "redeal") == "Cornerstones has no redeal"
    assert refusal(game, "turn") == (
        "there is no 'turn' in Cornerstones: the engine deals every card itself"
    )


def test_cs22_won_when_all_104_cards_are_home() -> None:
    home = {f"ace:{line}": up(suit, "K") for line, suit in enumerate("SHDC", 1)}
    home |= {f"king:{line}": down(suit, "A") for line, suit in enumerate("SHDC", 1)}
    home["ace:1"] = up("S", "Q")
    game = position(piles={"right:6": "KS"}, home=home)
    assert game.outcome().status is Status.IN_PROGRESS
    game.play(Move.parse("KS right:6 -> ace:1"))
    assert game.outcome().status is Status.WON and game.legal_moves() == []
    assert refusal(game, "resign") == "the game is over (won: all 104 cards home)"


def test_cs23_lost_when_no_move_is_left() -> None:
    game = position(piles={"left:2": "5H", "right:3": "9C"})
    assert game.legal_moves() == []
    assert str(game.outcome()) == "lost: no legal move left"
    resigned = position(piles={"left:2": "5H", "right:3": "6C"})
    resigned.play(Move.parse("resign"))
    assert resigned.outcome().status is Status.RESIGNED


def test_cs24_cards_can_move_back_and_forth_until_the_player_resigns() -> None:
    game = position(
        piles={"left:2": "4C 5H", "right:3": "6C"},
        home={"ace:2": up("H", "7"), "king:2": down("H", "8")},
    )
    before = game.full_state()["piles"]
    for _ in range(3):
        game.play(Move.parse("5H left:2 -> right:3"))
        game.play(Move.parse("5H right:3 -> left:2"))
        game.play(Move.parse("7H ace:2 -> king:2"))
        game.play(Move.parse("7H king:2 -> ace:2"))
    assert game.full_state()["piles"] == before
    assert game.outcome().status is Status.IN_PROGRESS
    game.play(Move.parse("resign"))
    assert game.outcome().status is Status.RESIGNED


def test_cs25_progress_counts_cards_on_the_foundations() -> None:
    game = position(piles={"left:2": "2S"}, home={"ace:2": up("H", "5")})
    assert game.progress().on_foundations == 12 and game.progress().total == 104
    game.play(Move.parse("2S left:2 -> ace:1"))
    assert game.foundation_count() == 13


# -- Arnold's version ------------------------------------------------------------------------


def test_ca01_arnold_shares_the_layout_and_the_deal() -> None:
    plain, arnold = Cornerstones(77), CornerstonesArnold(77)
    assert plain.opening_events == arnold.opening_events
    assert plain.full_state()["piles"] == arnold.full_state()["piles"]
    assert CornerstonesArnold.layout == Cornerstones.layout
    assert (plain.name, arnold.name) == ("cornerstones", "cornerstones-arnold")


def test_ca02_two_redeals_whenever_the_player_chooses_after_a_deal() -> None:
    game = position(CornerstonesArnold, piles={"left:2": "5H", "right:3": "9C", "left:4": "10C"})
    assert legal(game) == {"redeal", "9C right:3 -> left:4", "10C left:4 -> right:3", "resign"}
    game.play(Move.parse("redeal"))
    assert game.redeals_used == 1 and "redeal" in legal(game)
    game.play(Move.parse("redeal"))
    assert "redeal" not in legal(game)


def test_ca02_a_redeal_that_is_all_that_is_left_is_made_by_the_engine() -> None:
    game = by_hand(CornerstonesArnold, piles={"left:2": "5H", "right:3": "6C"})
    assert "redeal" in legal(game), "other moves remain: the player chooses"
    events = game.play(Move.parse("5H left:2 -> right:3"))
    assert [event.kind for event in events][:2] == ["moved", "redeal"]
    assert game.redeals_used == 1 and game.history == [Move.parse("5H left:2 -> right:3")]
    assert pile(game, "right:1") == "6C" and pile(game, "right:2") == "5H"
    waiting = by_hand(CornerstonesArnold, home={"ace:1": up("S", "6"), "king:1": down("S", "8")})
    deal(waiting, "7S")
    assert "a redeal may be made only when the deal is complete" in refusal(waiting, "redeal")


def test_ca02_the_last_card_of_a_deal_may_wait_and_the_redeal_waits_for_it() -> None:
    game = by_hand(
        CornerstonesArnold,
        piles={"left:2": "9D"},
        home={"ace:1": up("S", "6"), "king:1": down("S", "8")},
    )
    deal(game, "7S")
    assert not game.stock and "redeal" not in legal(game)
    assert refusal(game, "redeal") == "a redeal may be made only when the deal is complete"
    events = game.play(Move.parse("7S turned -> ace:1"))
    assert [event.kind for event in events] == ["home", "deal-complete"]
    assert "redeal" in legal(game)


def test_ca03_redeal_gathers_piles_in_deal_order_lowest_card_first() -> None:
    game = by_hand(
        CornerstonesArnold,
        piles={"right:1": "5H 9C", "right:4": "JD", "left:1": "8S", "left:6": "4C 10D"},
    )
    events = game.play(Move.parse("redeal"))
    assert events[0].kind == "redeal" and events[0].cards == ()
    dealt = [event.text for event in events if event.kind == "dealt"]
    assert dealt == [
        "5H dealt to right:1",
        "9C dealt to right:2",
        "JD dealt to right:3",
        "8S dealt to right:4",
        "4C dealt to right:5",
        "10D dealt to right:6",
    ]
    assert place(game, "ace:1") == "AS", "the foundations stay as they are"
    assert game.view().notes == ("deal 2 of 3 is complete: build freely; 1 redeal left",)


def test_ca04_deal_restrictions_apply_again_and_every_pile_is_dealt_to() -> None:
    game = by_hand(CornerstonesArnold, piles={"left:3": "2C 5D 9S 9H"})
    game.play(Move.parse("redeal"))
    assert place(game, "ace:4") == "AC 2C", "from the cornerstone right:1: any foundation"
    assert pile(game, "right:1") == "5D", "right:1 again: 5D turned after 2C went home"
    assert pile(game, "right:2") == "9S" and pile(game, "right:3") == "9H"
    game = by_hand(CornerstonesArnold, piles={"left:3": "5H 2D"}, home={"ace:3": "AD"})
    game.play(Move.parse("redeal"))
    assert pile(game, "right:2") == "2D", "right:2 is on line 1, not the diamonds line 3"
    assert pile(game, "right:1") == "5H"


def test_ca05_the_gathered_packet_is_face_down_until_dealt() -> None:
    game = by_hand(
        CornerstonesArnold,
        piles={"left:2": "7S 3H 4H"},
        home={"ace:1": up("S", "6"), "king:1": down("S", "8")},
    )
    game.play(Move.parse("redeal"))
    view = game.view()
    assert [str(card) for card in view.pile(PileId("turned")).cards] == ["7S"]
    assert view.pile(PileId("stock")).cards == (None, None)
    assert not {"3H", "4H"} & {str(card) for card in view.visible_cards()}


def test_ca06_lost_only_when_no_move_and_no_redeal_is_left() -> None:
    game = by_hand(CornerstonesArnold, piles={"left:2": "5H", "right:3": "9C"}, redeals_used=1)
    assert game.outcome().status is Status.IN_PROGRESS
    game.play(Move.parse("redeal"))
    assert game.legal_moves() == []
    assert str(game.outcome()) == "lost: no legal move left and no redeal left"
    assert refusal(game, "redeal") == (
        "the game is over (lost: no legal move left and no redeal left)"
    )
