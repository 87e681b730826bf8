"""The Four Corners: one or more tests per rule of docs/rules/four-corners.md (FC-n)."""

from __future__ import annotations

import pytest

from engine.cards import CARDS, Card, Suit
from engine.errors import IllegalMoveError
from engine.game import RULES_VERSION
from engine.moves import Move
from engine.piles import PileId
from engine.rulesets.corners_common import FOUNDATION_INDEX
from engine.rulesets.four_corners import HEAP_INDEX, FourCorners
from engine.view import Event, Status
from tests.engine.rulesets.positions import set_up

SUITS = "SHDC"
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
STARTED = {
    **{f"ace:{r}": f"A{s}" for r, s in enumerate(SUITS, 1)},
    **{f"king:{r}": f"K{s}" for r, s in enumerate(SUITS, 1)},
}
"""Every foundation started with its ace or king, as after the first deal."""


def cards(text: str) -> list[Card]:
    return [Card.parse(word) for word in text.split()]


def up(suit: str, last: str) -> str:
    """``up("S", "6")`` is "AS 2S 3S 4S 5S 6S"."""
    return " ".join(rank + suit for rank in RANKS[: RANKS.index(last) + 1])


def down(suit: str, last: str) -> str:
    """``down("S", "8")`` is "KS QS JS 10S 9S 8S"."""
    return " ".join(rank + suit for rank in RANKS[RANKS.index(last) :][::-1])


def position(
    *,
    heaps: dict[str, str] | None = None,
    foundations: dict[str, str] | None = None,
    stock: str = "",
    turned: str = "",
    next_heap: str = "left:1",
    deal: int = 1,
    rest: str = "right:6",
    rules: int = RULES_VERSION,
) -> FourCorners:
    """A game set up from a position: heaps and foundations as given, bottom card first (piles
    not named are empty); ``stock`` lists the next card dealt first. The cards named nowhere lie
    in pack order at the bottom of heap ``rest``, under the cards the test names there."""
    piles = {
        **(heaps or {}),
        **(foundations or {}),
        "turned": turned,
        "stock": " ".join("#" + word for word in reversed(stock.split())),
    }
    return set_up(
        FourCorners, piles, {"deal": deal, "next_heap": next_heap}, rest={rest: None}, rules=rules
    )


def by_hand(
    *,
    heaps: dict[str, str] | None = None,
    foundations: dict[str, str] | None = None,
    stock: str = "",
    turned: str = "",
    next_heap: str = "left:1",
    deal: int = 1,
    rules: int = RULES_VERSION,
) -> FourCorners:
    """A game (any seed) with its piles set by hand, for the tests of the deal itself: they need
    a table holding only the cards they name (every other card of a position would be dealt, or
    lie on a heap the deal adds to), and the engine to deal from any heap (a game set up from a
    position deals only after a move). ``stock`` lists the next card dealt first."""
    game = FourCorners(0, rules=rules)
    game.heaps = [[] for _ in HEAP_INDEX]
    game.foundations = [[] for _ in FOUNDATION_INDEX]
    for pile, text in (foundations or {}).items():
        game.foundations[FOUNDATION_INDEX[PileId.parse(pile)]] = cards(text)
    for pile, text in (heaps or {}).items():
        game.heaps[HEAP_INDEX[PileId.parse(pile)]] = cards(text)
    game.stock = cards(stock)[::-1]
    game.turned = cards(turned)
    game.next_heap = HEAP_INDEX[PileId.parse(next_heap)]
    game.deal = deal
    game._legal = None
    return game


def deal(game: FourCorners, stock: str) -> list[Event]:
    """Put ``stock`` in the stock and let the engine deal it."""
    game.stock = cards(stock)[::-1]
    game._legal = None
    return game._deal()


def heap(game: FourCorners, pile: str) -> str:
    return " ".join(str(card) for card in game.heaps[HEAP_INDEX[PileId.parse(pile)]])


def foundation(game: FourCorners, pile: str) -> str:
    return " ".join(str(card) for card in game.foundations[FOUNDATION_INDEX[PileId.parse(pile)]])


def legal(game: FourCorners) -> set[str]:
    return {str(move) for move in game.legal_moves()}


def refusal(game: FourCorners, text: str) -> str:
    with pytest.raises(IllegalMoveError) as refused:
        game.play(Move.parse(text))
    return refused.value.reason


# -- FC-1, FC-2: the layout --------------------------------------------------------------------


def test_fc01_two_packs_all_104_cards_nothing_taken_out() -> None:
    game = FourCorners(12345)
    assert (game.packs, game.taken_out, game.total_cards) == (2, (), 104)
    ids = sorted(card["id"] for pile in game.full_state()["piles"] for card in pile["cards"])
    assert ids == list(range(104))


def test_fc02_layout_two_columns_of_six_round_eight_foundations() -> None:
    places = {str(slot.pile): (slot.row, slot.col) for slot in FourCorners.layout}
    for row in range(6):
        assert places[f"left:{row + 1}"] == (row, 0)
        assert places[f"right:{row + 1}"] == (row, 3)
    for row in range(1, 5):
        assert places[f"ace:{row}"] == (row, 1)
        assert places[f"king:{row}"] == (row, 2)
    assert {str(pile.pile) for pile in FourCorners(1).view().piles} == set(places)
    labels = {str(slot.pile): slot.label for slot in FourCorners.layout}
    assert (labels["left:1"], labels["right:6"], labels["left:2"]) == (
        "corner left:1",
        "corner right:6",
        "left:2",
    )
    assert (labels["ace:1"], labels["king:4"]) == ("ace:1 S up", "king:4 C down")


def test_fc02_foundation_rows_are_spades_hearts_diamonds_clubs() -> None:
    game = by_hand(next_heap="left:2")
    deal(game, "AC KC AD KD AH KH AS KS")
    for row, suit in enumerate(SUITS, 1):
        assert foundation(game, f"ace:{row}") == f"A{suit}"
        assert foundation(game, f"king:{row}") == f"K{suit}"


@pytest.mark.parametrize("row", [1, 2, 3, 4])
def test_fc02_side_heaps_lie_next_to_the_foundations_of_their_row(row: int) -> None:
    suit = SUITS[row - 1]
    game = by_hand(foundations=STARTED, next_heap=f"left:{row + 1}")
    deal(game, f"2{suit}")
    assert foundation(game, f"ace:{row}") == f"A{suit} 2{suit}"
    game = by_hand(foundations=STARTED, next_heap=f"right:{row + 1}")
    deal(game, f"Q{suit}")
    assert foundation(game, f"king:{row}") == f"K{suit} Q{suit}"
    game = by_hand(foundations=STARTED, next_heap=f"right:{row + 1}")
    deal(game, f"2{suit}")
    assert heap(game, f"right:{row + 1}") == f"2{suit}"


# -- FC-3 to FC-8: the deal --------------------------------------------------------------------


def test_fc03_deal_goes_left_column_then_right_column_and_round_again() -> None:
    game = by_hand()
    events = deal(game, "5S 6S 7S 8S 9S 5H 6H 7H 8H 9H 5D 6D 7D 8D")
    expected = {
        "left:1": "5S 7D",
        "left:2": "6S 8D",
        "left:3": "7S",
        "left:4": "8S",
        "left:5": "9S",
        "left:6": "5H",
        "right:1": "6H",
        "right:2": "7H",
        "right:3": "8H",
        "right:4": "9H",
        "right:5": "5D",
        "right:6": "6D",
    }
    assert {pile: heap(game, pile) for pile in expected} == expected
    assert events[0].text == "5S dealt to left:1"
    assert events[-1].text == "deal 1 of 3 complete"


def test_fc03_the_first_twelve_cards_follow_the_deal_rules() -> None:
    game = FourCorners(0)
    events = game._setup([], cards("5S AS 6S"))
    assert foundation(game, "ace:1") == "AS"
    assert (heap(game, "left:1"), heap(game, "left:2")) == ("5S", "6S")
    assert [event.text for event in events[:2]] == [
        "5S dealt to left:1",
        "AS turned for left:2, placed on ace:1",
    ]


def test_fc04_first_ace_and_king_go_home_from_any_heap() -> None:
    game = by_hand(next_heap="left:4")  # left:4 is next to ace:3 only
    events = deal(game, "AS KH")
    assert (foundation(game, "ace:1"), foundation(game, "king:2")) == ("AS", "KH")
    assert all(not cards_ for cards_ in game.heaps)
    assert events[1].text == "KH turned for left:4, placed on king:2"


def test_fc04_second_ace_and_king_are_ordinary_cards() -> None:
    game = by_hand(foundations={"ace:1": "AS", "king:1": "KS"})
    deal(game, "AS KS")
    assert (heap(game, "left:1"), heap(game, "left:2")) == ("AS", "KS")
    assert (foundation(game, "ace:1"), foundation(game, "king:1")) == ("AS", "KS")


def test_fc04_second_ace_ends_king_foundation_second_king_ends_ace_foundation() -> None:
    game = by_hand(foundations={"ace:1": up("S", "Q"), "king:1": down("S", "2")})
    deal(game, "AS KS")
    assert foundation(game, "king:1").endswith("2S AS")
    assert foundation(game, "ace:1").endswith("QS KS")
    game = by_hand(
        foundations={"ace:1": up("S", "Q"), "king:1": down("S", "2")},
        heaps={"left:3": "KS", "right:5": "AS"},
    )
    assert {"KS left:3 -> ace:1", "AS right:5 -> king:1"} <= legal(game)


def test_fc04_first_king_starts_its_king_foundation_even_if_the_ace_one_wants_a_king() -> None:
    game = by_hand(foundations={"ace:1": up("S", "Q")})
    deal(game, "KS")
    assert foundation(game, "king:1") == "KS"
    assert foundation(game, "ace:1") == up("S", "Q")
    assert not game.turned


def test_fc05_card_turned_for_a_corner_goes_to_any_foundation_it_fits() -> None:
    game = by_hand(foundations=STARTED, next_heap="left:6")
    deal(game, "2S QH")
    assert foundation(game, "ace:1") == "AS 2S"
    assert foundation(game, "king:2") == "KH QH"
    assert heap(game, "left:6") == ""
    assert not game.turned


def test_fc05_side_heap_card_goes_only_to_the_foundation_next_to_it() -> None:
    game = by_hand(foundations=STARTED, next_heap="left:3")  # next to ace:2 (hearts)
    events = deal(game, "2H 2S")
    assert foundation(game, "ace:2") == "AH 2H"
    assert events[0].text == "2H turned for left:3, placed on ace:2"
    assert heap(game, "left:3") == "2S"  # fits ace:1, which is not next to left:3
    assert foundation(game, "ace:1") == "AS"


def test_fc05_fitting_card_from_a_side_heap_is_dealt_and_cannot_be_played_in_the_deal() -> None:
    game = by_hand(foundations=STARTED, heaps={"left:1": "9C"}, next_heap="right:3")
    deal(game, "2H 7S")  # right:3 is next to king:2, not ace:2
    assert heap(game, "right:3") == "2H"
    assert foundation(game, "ace:2") == "AH"


def test_fc06_corner_card_fitting_two_foundations_waits_for_the_players_choice() -> None:
    game = by_hand(
        foundations={"ace:1": up("S", "6"), "king:1": down("S", "8")}, heaps={"left:3": "9D"}
    )
    events = deal(game, "7S 5C")
    assert events[-1].kind == "choose"
    assert events[-1].text == "7S turned for corner left:1 fits ace:1 and king:1: choose"
    assert [str(card) for card in game.turned] == ["7S"]
    assert legal(game) == {"7S turned -> ace:1", "7S turned -> king:1", "resign"}
    assert game.view().notes == (
        "deal 1 of 3: 7S turned for corner left:1; choose ace:1 or king:1",
    )
    assert refusal(game, "7S turned -> ace:2") == "7S must go to ace:1 or king:1, not ace:2"
    assert refusal(game, "QS turned -> ace:1") == "the card waiting in turned is 7S, not QS"
    assert refusal(game, "turned -> ace:1") == "name the card you move: 7S turned -> ace:1"
    assert refusal(game, "7S x2 turned -> ace:1") == "cards move one at a time"
    assert refusal(game, "7S turned -> ace:1 bottom") == (
        "a card goes on top of a pile, never under it"
    )
    game.play(Move.parse("7S turned -> king:1"))
    assert foundation(game, "king:1").endswith("8S 7S")
    assert heap(game, "left:1") == "5C"


def test_fc06_the_last_card_of_a_deal_may_wait_then_the_deal_is_complete() -> None:
    game = by_hand(
        foundations={**STARTED, "ace:1": up("S", "6"), "king:1": down("S", "8")},
        heaps={"left:2": "9D", "left:3": "10D"},
    )
    deal(game, "7S")
    assert not game.stock and "redeal" not in legal(game)
    events = game.play(Move.parse("7S turned -> ace:1"))
    assert [event.text for event in events] == ["deal 1 of 3 complete"]
    assert "redeal" in legal(game)
    assert game.view().notes == (
        "deal 1 of 3 complete: play top cards home or onto a heap in suit; 2 redeals left",
    )


def test_fc06_side_heap_card_fitting_both_foundations_goes_next_door_without_choice() -> None:
    for pile, home in (("left:2", "ace:1"), ("right:2", "king:1")):
        game = by_hand(
            foundations={"ace:1": up("S", "6"), "king:1": down("S", "8")}, next_heap=pile
        )
        deal(game, "7S")
        assert foundation(game, home).endswith("7S")
        assert not game.turned


def test_fc07_card_played_home_in_the_deal_leaves_its_place_to_the_next_card() -> None:
    game = by_hand(foundations=STARTED, next_heap="left:3")
    deal(game, "2H 6S 7D")
    assert foundation(game, "ace:2") == "AH 2H"
    assert (heap(game, "left:3"), heap(game, "left:4")) == ("6S", "7D")


def test_fc08_heap_tops_wait_during_the_deal() -> None:
    game = by_hand()
    deal(game, "2S 5H AS 6H")
    assert heap(game, "left:1") == "2S"  # fits ace:1 once AS is home, but stays
    assert foundation(game, "ace:1") == "AS"
    assert heap(game, "left:3") == "6H"
    assert "2S left:1 -> ace:1" in legal(game)  # ... until the deal is complete


def test_fc08_only_the_turned_card_may_move_while_a_choice_waits() -> None:
    game = by_hand(
        foundations={**STARTED, "ace:1": up("S", "6"), "king:1": down("S", "8")},
        heaps={"left:2": "2H", "left:3": "3H"},
    )
    deal(game, "7S")
    reason = refusal(game, "2H left:2 -> ace:2")
    assert "during a deal only the card just turned may go to a foundation" in reason
    assert "7S has just been turned" in refusal(game, "2H left:2 -> left:3")


# -- FC-9 to FC-12: play after a deal --------------------------------------------------------


def played(**piles: str) -> FourCorners:
    """A position after the first deal: every foundation started, heaps as given."""
    return position(foundations=STARTED, heaps={k.replace("_", ":"): v for k, v in piles.items()})


def test_fc09_any_heap_top_goes_to_any_foundation_it_fits() -> None:
    game = position(
        foundations={**STARTED, "ace:2": up("H", "7"), "king:3": down("D", "J")},
        heaps={"left:3": "4C 8H", "left:2": "10D", "right:4": "9H"},
    )
    assert {"8H left:3 -> ace:2", "10D left:2 -> king:3"} <= legal(game)
    game.play(Move.parse("10D left:2 -> king:3"))
    assert foundation(game, "king:3").endswith("JD 10D")
    assert heap(game, "left:2") == ""
    game.play(Move.parse("8H left:3 -> ace:2"))
    assert heap(game, "left:3") == "4C"
    assert "9H right:4 -> ace:2" in legal(game)


def test_fc09_refusals_name_the_cause() -> None:
    game = position(
        foundations={**STARTED, "ace:2": up("H", "7"), "ace:3": up("D", "K")},
        heaps={"left:3": "8H", "right:4": "9H", "right:5": "QD"},
    )
    assert refusal(game, "9H right:4 -> ace:2") == "9H does not follow 7H on ace:2"
    assert refusal(game, "8H left:3 -> ace:1") == "ace:1 is built in spades, not with 8H"
    assert refusal(game, "7H left:3 -> ace:2") == "the top card of left:3 is 8H, not 7H"
    assert refusal(game, "QD right:5 -> ace:3") == "ace:3 is complete"
    assert refusal(game, "left:3 -> ace:2") == "name the card you move: 8H left:3 -> ace:2"
    assert refusal(game, "8H heap:3 -> ace:2").startswith("there is no pile heap:3")
    assert refusal(game, "8H left:5 -> ace:2") == "there is no card on left:5"
    assert refusal(game, "8H x2 left:3 -> ace:2") == "cards move one at a time"
    assert refusal(game, "8H left:3 -> stock") == "no card may be put on stock"
    assert refusal(game, "8H turned -> ace:2") == (
        "no card is waiting in turned: the deal is complete"
    )
    assert refusal(game, "stock -> left:1") == (
        "the engine deals the stock itself, one card at a time, round the heaps"
    )
    assert refusal(game, "turn").startswith("there is no 'turn' in The Four Corners")


def test_fc10_top_cards_build_on_each_other_in_suit_up_or_down() -> None:
    game = played(left_1="9S", left_2="8S", left_3="8H", left_4="10S", right_1="AS", right_2="KS")
    heap_moves = {
        move for move in legal(game) if "left" in move.split()[-1] or "right" in move.split()[-1]
    }
    assert heap_moves == {
        "9S left:1 -> left:2",
        "8S left:2 -> left:1",
        "9S left:1 -> left:4",
        "10S left:4 -> left:1",
    }
    assert refusal(game, "8H left:3 -> left:1") == (
        "8H is not one rank above or below 9S in the same suit"
    )
    assert refusal(game, "8S left:2 -> left:4") == (
        "8S is not one rank above or below 10S in the same suit"
    )
    no_wrap = "there is no wrap: an ace does not go on a king, nor a king on an ace"
    assert refusal(game, "AS right:1 -> right:2") == no_wrap
    assert refusal(game, "KS right:2 -> right:1") == no_wrap


def test_fc10_equal_cards_of_the_two_packs_each_move_from_their_own_heap() -> None:
    second_eight = CARDS[(8, Suit.S, 1)]  # the first 8S in table order is pack 0's
    game = played(left_1="8S", left_2="9S", left_3="4D", left_4="5D", right_3="8S")
    assert game.heaps[HEAP_INDEX[PileId("right", 3)]][-1].id == second_eight.id
    assert {
        "8S left:1 -> left:2",
        "8S right:3 -> left:2",
        "9S left:2 -> left:1",
        "9S left:2 -> right:3",
    } <= legal(game)
    game.play(Move.parse("8S right:3 -> left:2"))
    assert game.heaps[HEAP_INDEX[PileId("left", 2)]][-1].id == second_eight.id
    assert heap(game, "left:1") == "8S" and heap(game, "right:3") == ""
    assert refusal(game, "8S left:1 -> left:2") == (
        "8S is not one rank above or below 8S in the same suit"
    )
    home = position(
        foundations={**STARTED, "ace:1": up("S", "7")},
        heaps={"left:1": "8S", "right:3": "8S", "left:4": "4D", "left:5": "5D"},
    )
    assert {"8S left:1 -> ace:1", "8S right:3 -> ace:1"} <= legal(home)
    home.play(Move.parse("8S left:1 -> ace:1"))
    assert refusal(home, "8S right:3 -> ace:1") == "8S does not follow 8S on ace:1"


def test_fc10_a_run_moved_card_by_card_is_reversed() -> None:
    game = played(left_1=up("S", "8")[3:], left_2="9S")  # 2S..8S, 8S on top
    for rank in ("8", "7", "6", "5", "4", "3", "2"):
        game.play(Move.parse(f"{rank}S left:1 -> left:2"))
    assert heap(game, "left:2") == "9S 8S 7S 6S 5S 4S 3S 2S"
    game.play(Move.parse("2S left:2 -> ace:1"))
    assert foundation(game, "ace:1") == "AS 2S"


def test_fc11_an_emptied_heap_stays_empty() -> None:
    game = played(left_2="5H")
    assert not any(move.endswith("-> left:1") for move in legal(game))
    assert refusal(game, "5H left:2 -> left:1") == (
        "left:1 is empty, and an emptied heap stays empty"
    )


def test_fc12_foundation_cards_stay_there() -> None:
    game = played(left_2="2S")
    assert not any(" ace:" in move.split("->")[0] for move in legal(game))
    assert refusal(game, "AS ace:1 -> left:2") == "cards on a foundation stay there (ace:1)"
    game = position(
        foundations={**STARTED, "ace:1": up("S", "7"), "king:1": down("S", "8")},
        heaps={"left:2": "9C"},
    )
    assert refusal(game, "7S ace:1 -> king:1") == "cards on a foundation stay there (ace:1)"


# -- FC-13: automatic steps --------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(25))
def test_fc13_engine_deals_until_a_choice_or_the_end_of_the_deal(seed: int) -> None:
    game = FourCorners(seed)
    turned = [event for event in game.opening_events if event.kind in {"dealt", "home", "choose"}]
    assert all(len(event.cards) == 1 and str(event.cards[0]) in event.text for event in turned)
    if game.turned:
        assert game.opening_events[-1].kind == "choose"
        assert len(turned) == 104 - len(game.stock)
        assert all(move.source == PileId("turned") or move.is_resign for move in game.legal_moves())
    else:
        assert not game.stock and len(turned) == 104
        assert game.opening_events[-1].text == "deal 1 of 3 complete"
        assert game.foundation_count() >= 8  # every first ace and king is home


def test_fc13_nothing_happens_by_itself_after_a_deal() -> None:
    game = played(left_1="3S 2S", left_2="5D")
    assert game.play(Move.parse("2S left:1 -> ace:1")) == []
    assert heap(game, "left:1") == "3S"  # fits ace:1 now, but waits for the player
    assert foundation(game, "ace:1") == "AS 2S"


# -- FC-14, FC-15: redeals ---------------------------------------------------------------------


def test_fc14_redeal_gathers_in_deal_order_lowest_card_first_and_deals_again() -> None:
    game = by_hand(
        foundations=STARTED, heaps={"left:1": "5S 6S", "left:2": "7H", "right:6": "9D 10D"}
    )
    events = game.play(Move.parse("redeal"))
    assert events[0].kind == "redeal"
    assert events[0].text == "the heaps are gathered, left:1 first, for deal 2 of 3"
    assert [event.text for event in events[1:6]] == [
        "5S dealt to left:1",
        "6S dealt to left:2",
        "7H dealt to left:3",
        "9D dealt to left:4",
        "10D dealt to left:5",
    ]
    assert game.deal == 2 and not game.stock
    assert foundation(game, "ace:1") == "AS"


def test_fc14_deal_restrictions_apply_again_after_a_redeal() -> None:
    game = by_hand(foundations=STARTED, heaps={"left:1": "2S", "left:2": "9C", "right:1": "2H"})
    events = game.play(Move.parse("redeal"))
    assert [event.text for event in events[1:4]] == [
        "2S turned for left:1, placed on ace:1",  # FC-5: from a corner
        "9C dealt to left:1",  # FC-7: the same heap takes the next card
        "2H dealt to left:2",
    ]  # FC-5: left:2 is next to ace:1, not to ace:2
    assert (foundation(game, "ace:1"), foundation(game, "ace:2")) == ("AS 2S", "AH")


def test_fc14_a_redeal_that_is_all_that_is_left_is_made_by_the_engine() -> None:
    game = by_hand(
        foundations={**STARTED, "ace:1": up("S", "6"), "king:1": down("S", "8")},
        heaps={"left:2": "9D"},
    )
    deal(game, "7S")
    events = game.play(Move.parse("7S turned -> ace:1"))
    assert [event.text for event in events][:3] == [
        "deal 1 of 3 complete",
        "the heaps are gathered, left:1 first, for deal 2 of 3",
        "9D dealt to left:1",
    ]
    assert game.history == [Move.parse("7S turned -> ace:1")]
    assert game.deal == 3, "dealt alone, 9D again leaves nothing to do: the second redeal too"
    assert game.outcome().status is Status.LOST


def test_fc14_under_rules_version_1_every_redeal_was_a_move() -> None:
    game = by_hand(
        foundations={**STARTED, "ace:1": up("S", "6"), "king:1": down("S", "8")},
        heaps={"left:2": "9D"},
        rules=1,
    )
    deal(game, "7S")
    events = game.play(Move.parse("7S turned -> ace:1"))
    assert [event.text for event in events] == ["deal 1 of 3 complete"]
    assert legal(game) == {"redeal", "resign"}


def test_fc14_no_redeal_before_the_deal_is_complete() -> None:
    game = by_hand(foundations={"ace:1": up("S", "6"), "king:1": down("S", "8")})
    deal(game, "7S")
    assert "redeal" not in legal(game)
    assert refusal(game, "redeal") == ("the deal is not complete: first choose a foundation for 7S")


def test_fc15_at_most_two_redeals() -> None:
    assert "redeal" in legal(position(foundations=STARTED, heaps={"left:1": "5D"}, deal=2))
    game = position(foundations=STARTED, heaps={"left:1": "5D", "left:2": "6D"}, deal=3)
    assert "redeal" not in legal(game)
    assert refusal(game, "redeal") == "no redeal left: the two redeals have been used"


# -- FC-16, FC-17: end of the game -------------------------------------------------------------


def test_fc16_won_when_all_104_cards_are_home() -> None:
    full = {
        **{f"ace:{r}": up(s, "K") for r, s in enumerate(SUITS, 1)},
        **{f"king:{r}": down(s, "A") for r, s in enumerate(SUITS, 1)},
    }
    game = position(foundations={**full, "ace:1": up("S", "Q")}, heaps={"left:1": "KS"})
    assert game.outcome().status is Status.IN_PROGRESS
    game.play(Move.parse("KS left:1 -> ace:1"))
    assert game.outcome().status is Status.WON
    assert game.foundation_count() == 104 and game.legal_moves() == []
    assert refusal(game, "redeal") == "the game is over (won: all 104 cards home)"


def test_fc17_lost_when_no_move_and_no_redeal_is_left() -> None:
    game = position(foundations=STARTED, heaps={"left:1": "5D", "left:2": "9C"}, deal=3)
    assert game.outcome().status is Status.LOST
    assert game.outcome().reason == "no legal move and no redeal left"
    game = position(foundations=STARTED, heaps={"left:1": "5D", "left:2": "9C"}, deal=2)
    assert game.legal_moves() == [Move.parse("redeal"), Move.parse("resign")]


def test_fc17_top_cards_may_travel_back_and_forth_until_the_player_resigns() -> None:
    game = position(foundations=STARTED, heaps={"left:1": "7H 8H", "left:2": "9H"}, deal=3)
    for _ in range(50):
        game.play(Move.parse("8H left:1 -> left:2"))
        game.play(Move.parse("8H left:2 -> left:1"))
    assert game.outcome().status is Status.IN_PROGRESS
    game.play(Move.parse("resign"))
    assert game.outcome().status is Status.RESIGNED


# -- FC-18, FC-19: what the player sees, progress ---------------------------------------------


def test_fc18_heaps_and_foundations_face_up_stock_face_down_even_after_redeal() -> None:
    game = FourCorners(99)
    while game.turned:
        game.play(game.legal_moves()[0])
    game.play(Move.parse("redeal"))
    while game.turned:
        game.play(game.legal_moves()[0])
    for pile in game.view().piles:
        if pile.pile.kind == "stock":
            assert all(card is None for card in pile.cards)
        else:
            assert None not in pile.cards
    game = position(foundations=STARTED, heaps={"left:1": "5S 6S"}, stock="7D 8D")
    view = game.view()
    assert view.pile(PileId("stock")).cards == (None, None)
    assert [str(card) for card in view.pile(PileId("left", 1)).cards] == ["5S", "6S"]


def test_fc18_nothing_the_engine_says_depends_on_the_cards_still_in_the_stock() -> None:
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
        "AS ace:1 -> left:2",
    )

    def everything_said(stock: str) -> tuple[object, ...]:
        game = by_hand(
            foundations={**STARTED, "ace:1": up("S", "6"), "king:1": down("S", "8")},
            heaps={"left:2": "9D", "left:3": "10D"},
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


def test_fc19_progress_counts_cards_on_the_foundations() -> None:
    game = position(
        foundations={**STARTED, "ace:2": up("H", "5")}, heaps={"left:1": "6H"}, deal=3
    )  # no redeal left to deal the other cards home after the move
    assert game.progress().on_foundations == game.foundation_count() == 12
    assert game.progress().total == 104
    game.play(Move.parse("6H left:1 -> ace:2"))
    assert game.progress().on_foundations == 13
