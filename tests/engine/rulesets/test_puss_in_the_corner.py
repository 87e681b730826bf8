"""Puss in the Corner: one or more tests per rule of docs/rules/puss-in-the-corner.md (PC-n)."""

from __future__ import annotations

import random

import pytest

from engine.cards import CARDS, Card, Suit
from engine.errors import IllegalMoveError
from engine.game import RULES_VERSION
from engine.moves import REDEAL, RESIGN, TURN, Move
from engine.players import RandomPlayer
from engine.registry import find_rule_set
from engine.rulesets.puss_in_the_corner import CORNERS, FOUNDATIONS, STOCK, TURNED, PussInTheCorner
from engine.view import Status
from tests.engine.rulesets.positions import set_up

SEED = 20261122


def cards(text: str) -> list[Card]:
    return [Card.parse(word) for word in text.split()]


def foundation(index: int, top: str) -> list[Card]:
    """A foundation of the ace of suit ``index`` built up to ``top`` (in ``top``'s suit)."""
    card = Card.parse(top)
    return [Card(1, Suit(index)), *(Card(rank, card.suit) for rank in range(2, card.rank + 1))]


def position(
    turned: str | None = None,
    corners: tuple[str, str, str, str] = ("", "", "", ""),
    tops: tuple[str, str, str, str] = ("AS", "AH", "AD", "AC"),
    stock: str = "",
    pass_number: int = 1,
    rest: str | None = None,
    rules: int = RULES_VERSION,
) -> PussInTheCorner:
    """A game set up from a position: corner heaps bottom to top, foundation tops, the stock in
    the order it would be dealt (first card first). The cards named nowhere lie at the bottom
    of ``rest`` in pack order: by default at the end of a stock, where the test deals no
    further, and under corner:3 when the stock is out."""
    piles = {
        str(pile): " ".join(map(str, foundation(index, top)))
        for index, (pile, top) in enumerate(zip(FOUNDATIONS, tops, strict=True))
    }
    piles |= {str(pile): heap for pile, heap in zip(CORNERS, corners, strict=True)}
    piles["stock"] = " ".join("#" + word for word in reversed(stock.split()))
    piles["turned"] = turned or ""
    state = {"pass": pass_number, "transfer_corners": [], "seven": None}
    rest = rest or ("stock" if stock else "corner:3")
    return set_up(
        PussInTheCorner,
        piles,
        state,
        rest={rest: None},
        face_down=frozenset({"stock"}),
        rules=rules,
    )


def refused(game: PussInTheCorner, text: str) -> str:
    """The reason ``text`` is refused; checks that the refusal changed nothing."""
    before = game.full_state()
    with pytest.raises(IllegalMoveError) as error:
        game.play(Move.parse(text))
    assert game.full_state() == before
    return error.value.reason


def legal(game: PussInTheCorner) -> set[str]:
    return {str(move) for move in game.legal_moves()}


def corner_texts(game: PussInTheCorner) -> list[str]:
    return [" ".join(map(str, heap)) for heap in game.corners]


def test_registry_finds_the_rule_set() -> None:
    assert find_rule_set("puss-in-the-corner") is PussInTheCorner


# -- the layout ----------------------------------------------------------------------------


def test_pc01_aces_form_the_foundations_in_a_square() -> None:
    game = PussInTheCorner(SEED)
    view = game.view()
    assert [str(view.pile(pile).top) for pile in FOUNDATIONS] == ["AS", "AH", "AD", "AC"]
    assert game.opening_events[0].kind == "layout"
    assert {str(card) for card in game.opening_events[0].cards} == {"AS", "AH", "AD", "AC"}
    slots = {str(slot.pile): (slot.row, slot.col) for slot in game.layout}
    assert slots["foundation:1"] == (1, 1) and slots["foundation:4"] == (2, 2)
    assert "there is no pile foundation:5" in refused(game, f"{game.turned} turned -> foundation:5")


def test_pc02_four_corner_heaps_at_the_corners_start_empty() -> None:
    game = PussInTheCorner(SEED)
    assert game.corners == [[], [], [], []]
    slots = {str(slot.pile): (slot.row, slot.col) for slot in game.layout}
    assert [slots[str(pile)] for pile in CORNERS] == [(0, 0), (0, 3), (3, 0), (3, 3)]
    assert "there is no pile corner:5" in refused(game, f"{game.turned} turned -> corner:5")
    assert "there is no pile heap:1" in refused(game, f"{game.turned} turned -> heap:1")


def test_pc02_corner_heaps_are_face_up_throughout() -> None:
    game = position("9D", corners=("2S 3H 4D", "", "", ""), stock="5C")
    game.play(Move.parse("9D turned -> corner:1"))
    assert game.view().pile(CORNERS[0]).cards == tuple(cards("2S 3H 4D 9D"))


# -- the deal ------------------------------------------------------------------------------


def test_pc03_the_engine_turns_one_card_at_a_time() -> None:
    game = PussInTheCorner(SEED)
    assert len(game.stock) == 47 and game.turned is not None
    assert game.opening_events[-1].text == f"{game.turned} turned"
    stock_view = game.view().pile(STOCK)
    assert len(stock_view.cards) == 47 and all(card is None for card in stock_view.cards)
    coming = game.stock[-1]
    events = game.play(Move(TURNED, CORNERS[0], game.turned))
    assert events[-1].text == f"{coming} turned" and game.turned == coming
    assert len(game.stock) == 46


def test_pc03_the_player_does_not_turn_or_take_from_the_stock() -> None:
    game = position("9D", stock="5C 6C")
    assert "one at a time for you" in refused(game, "5C stock -> corner:1")
    assert "9D is turned: place it" in refused(game, "turn")


# -- moves during play ---------------------------------------------------------------------


def test_pc04_turned_card_goes_to_any_corner_or_a_fitting_foundation() -> None:
    game = position("2H", stock="5C")
    assert legal(game) == {
        "2H turned -> corner:1",
        "2H turned -> corner:2",
        "2H turned -> corner:3",
        "2H turned -> corner:4",
        "2H turned -> foundation:2",
        "2H turned -> foundation:3",
        "resign",
    }
    game.play(Move.parse("2H turned -> corner:3"))
    assert corner_texts(game) == ["", "", "2H", ""]


def test_pc04_turned_card_refusals_say_why() -> None:
    game = position("9D", corners=("4S", "", "", ""), stock="5C")
    assert refused(game, "8D turned -> corner:1") == "the turned card is 9D, not 8D"
    assert refused(game, "turned -> corner:1") == ("name the card you place: the turned card is 9D")
    assert refused(game, "9D turned -> corner:1 bottom") == (
        "the turned card goes on top of a pile, not under it"
    )
    assert refused(game, "9D x2 turned -> corner:1") == "only the one turned card can be placed"
    assert "cards go to a corner heap or a foundation" in refused(game, "9D turned -> stock")
    assert "9D does not follow AD on foundation:3" in refused(game, "9D turned -> foundation:3")


def test_pc05_foundations_build_up_in_the_colour_of_their_ace_any_suit() -> None:
    game = position("3D", tops=("2C", "2H", "2D", "AC"), stock="5C")
    assert {"3D turned -> foundation:2", "3D turned -> foundation:3"} <= legal(game)
    assert refused(game, "3D turned -> foundation:1") == (
        "3D is red and foundation:1 builds in black"
    )
    assert refused(game, "3D turned -> foundation:4") == (
        "3D is red and foundation:4 builds in black"
    )
    game.play(Move.parse("3D turned -> foundation:2"))
    assert game.foundations[1][-1] == Card.parse("3D")


def test_pc05_a_foundation_needs_the_next_rank_and_ends_at_the_king() -> None:
    game = position("4H", tops=("KS", "2H", "AD", "AC"), stock="5C")
    assert refused(game, "4H turned -> foundation:2") == (
        "4H does not follow 2H on foundation:2: it needs a red 3"
    )
    game = position("2C", tops=("KS", "2H", "AD", "AC"), stock="5C")
    assert refused(game, "2C turned -> foundation:1") == "foundation:1 is complete up to the king"
    assert "2C turned -> foundation:4" in legal(game)


def test_pc06_corner_tops_go_home_at_any_time() -> None:
    game = position("9D", corners=("5C 2S", "", "2H", ""), stock="KC")
    assert {
        "2S corner:1 -> foundation:1",
        "2S corner:1 -> foundation:4",
        "2H corner:3 -> foundation:2",
        "2H corner:3 -> foundation:3",
    } <= legal(game)
    events = game.play(Move.parse("2S corner:1 -> foundation:4"))
    assert events[0].text == "2S played from corner:1 to foundation:4"
    assert game.turned == Card.parse("9D"), "the turned card still waits"
    assert corner_texts(game)[0] == "5C"


def test_pc06_corner_to_foundation_refusals() -> None:
    game = position("9D", corners=("2S 5C", "", "", ""), stock="KC")
    assert refused(game, "2S corner:1 -> foundation:1") == (
        "the top card of corner:1 is 5C, not 2S"
    )
    assert refused(game, "corner:1 -> foundation:1") == (
        "name the card you move: the top card of corner:1 is 5C"
    )
    assert refused(game, "5C corner:2 -> foundation:1") == "there is no card on corner:2"
    assert refused(game, "2S x2 corner:1 -> foundation:1") == (
        "cards go to a foundation one at a time"
    )
    assert "5C does not follow AS" in refused(game, "5C corner:1 -> foundation:1")
    assert refused(game, "5C x3 corner:1 -> foundation:1") == "corner:1 holds only 2 cards"


def test_pc07_foundation_cards_stay_and_heaps_do_not_build_on_each_other() -> None:
    game = position("9D", corners=("4S", "5H", "", ""), tops=("2S", "AH", "AD", "AC"), stock="KC")
    assert refused(game, "2S foundation:1 -> corner:1") == "a card on a foundation stays there"
    assert "only after a seven" in refused(game, "4S corner:1 -> corner:2")
    assert "no card may be put on turned" in refused(game, "4S corner:1 -> turned")
    assert not any(move.source in CORNERS and move.target in CORNERS for move in game.legal_moves())


# -- the privilege of the seven ------------------------------------------------------------


def seven_placed(
    corners: tuple[str, str, str, str] = ("4S 5H", "JD", "", "2C"),
    stock: str = "KC QC",
    rest: str | None = None,
) -> PussInTheCorner:
    """7S has just been placed on corner:3; the transfers after it are open."""
    game = position("7S", corners=corners, stock=stock, rest=rest)
    events = game.play(Move.parse("7S turned -> corner:3"))
    assert events[-1].kind == "seven" and game.turned is None
    return game


def test_pc08_a_seven_opens_transfers_of_top_runs_to_top_or_bottom() -> None:
    game = seven_placed()
    moves = legal(game)
    assert {
        "5H corner:1 -> corner:2",
        "4S x2 corner:1 -> corner:2 bottom",
        "7S corner:3 -> corner:4 bottom",
        "JD corner:2 -> corner:1",
        "turn",
    } <= moves
    assert "4S x2 corner:1 -> corner:4" in moves
    game.play(Move.parse("4S x2 corner:1 -> corner:2 bottom"))
    assert corner_texts(game) == ["", "4S 5H JD", "7S", "2C"]


def test_pc08_transfer_onto_the_top_keeps_the_order() -> None:
    game = seven_placed()
    events = game.play(Move.parse("4S x2 corner:1 -> corner:4"))
    assert corner_texts(game) == ["", "JD", "7S", "2C 4S 5H"]
    assert events[0].kind == "moved" and [str(card) for card in events[0].cards] == ["4S", "5H"]


def test_pc08_a_seven_placed_on_a_foundation_also_opens_transfers() -> None:
    game = position("7C", corners=("4C", "", "", ""), tops=("6S", "AH", "AD", "AC"), stock="KC")
    game.play(Move.parse("7C turned -> foundation:1"))
    assert game.turned is None and "4C corner:1 -> corner:2" in legal(game)


def test_pc08_no_transfer_before_the_seven_is_placed() -> None:
    game = position("7S", corners=("4S 5H", "JD", "", ""), stock="KC")
    assert refused(game, "5H corner:1 -> corner:2") == (
        "place 7S first: the transfers after a seven come once it is placed"
    )
    game.play(Move.parse("7S turned -> corner:3"))
    assert "5H corner:1 -> corner:2" in legal(game)


def test_pc08_transfer_refusals_name_the_cards() -> None:
    game = seven_placed()
    assert refused(game, "4S x3 corner:1 -> corner:2") == "corner:1 holds only 2 cards"
    assert refused(game, "5H x2 corner:1 -> corner:2") == (
        "card 2 from the top of corner:1 is 4S, not 5H"
    )
    assert refused(game, "5H corner:1 -> corner:1") == "corner:1 cannot be moved onto itself"


def test_pc09_second_transfer_only_between_the_untouched_heaps() -> None:
    game = seven_placed()
    game.play(Move.parse("5H corner:1 -> corner:3"))
    assert game.turned is None
    transfers = {move for move in legal(game) if "corner:" in move.split("->")[-1]}
    assert transfers == {
        "JD corner:2 -> corner:4",
        "JD corner:2 -> corner:4 bottom",
        "2C corner:4 -> corner:2",
        "2C corner:4 -> corner:2 bottom",
    }
    reason = refused(game, "4S corner:1 -> corner:2")
    assert reason == (
        "a heap may not be disturbed twice for 7S: the second transfer may only "
        "be between corner:2 and corner:4"
    )
    events = game.play(Move.parse("2C corner:4 -> corner:2 bottom"))
    assert corner_texts(game) == ["4S", "2C JD", "7S 5H", ""]
    assert events[-1].text == "KC turned", "no third transfer: the next card is turned"


def test_pc10_turn_declines_the_transfers() -> None:
    game = seven_placed()
    events = game.play(TURN)
    assert [event.kind for event in events] == ["declined", "turned"]
    assert game.turned == Card.parse("KC")
    assert "only after a seven" in refused(game, "5H corner:1 -> corner:2")


def test_pc10_turn_is_refused_when_no_seven_waits() -> None:
    game = position(stock="", corners=("4S", "", "", ""))
    assert refused(game, "turn") == (
        "the stock is out: 'redeal' gathers the corner heaps for the second pass"
    )
    game = position(stock="", corners=("2S", "", "", ""), pass_number=2)
    assert refused(game, "turn") == (
        "'turn' declines the transfers after a seven, and no seven is waiting"
    )


def test_pc10_transfers_end_by_themselves_when_none_is_possible() -> None:
    game = seven_placed(corners=("4S", "", "", ""))
    game.play(Move.parse("4S corner:1 -> corner:3"))
    assert game.full_state()["transfer_corners"] == [], "corner:2 and corner:4 are empty"
    assert game.turned == Card.parse("KC")


def test_pc10_turn_closes_the_transfers_of_the_last_card() -> None:
    game = seven_placed(stock="")
    assert TURN in game.legal_moves()
    game.play(TURN)
    assert legal(game) == {
        "2C corner:4 -> foundation:1",
        "2C corner:4 -> foundation:4",
        "redeal",
        "resign",
    }


def test_pc11_transfer_to_an_empty_heap_is_written_without_bottom() -> None:
    game = seven_placed()
    assert "5H corner:1 -> corner:3" in legal(game)
    game = seven_placed(corners=("4S 5H", "", "", ""))
    moves = legal(game)
    assert "5H corner:1 -> corner:2" in moves and "5H corner:1 -> corner:2 bottom" not in moves
    assert refused(game, "5H corner:1 -> corner:2 bottom") == (
        "corner:2 is empty: move the cards onto it without 'bottom'"
    )
    game.play(Move.parse("4S x2 corner:1 -> corner:2"))
    assert corner_texts(game) == ["", "4S 5H", "7S", ""]


def test_pc12_playing_home_during_the_transfers_uses_none_of_them() -> None:
    game = seven_placed(corners=("4S 5H", "JD", "", "2C"))
    game.play(Move.parse("2C corner:4 -> foundation:1"))
    assert game.full_state()["transfer_corners"] == ["corner:1", "corner:2", "corner:3", "corner:4"]
    game.play(Move.parse("JD corner:2 -> corner:4"))
    assert game.full_state()["transfer_corners"] == ["corner:1", "corner:3"]
    assert "5H corner:1 -> corner:3" in legal(game)


# -- redeal --------------------------------------------------------------------------------


def test_pc13_the_gather_waits_while_a_corner_top_can_go_home_then_comes_by_itself() -> None:
    game = position("9D", corners=("5C 2S", "", "", ""))
    game.play(Move.parse("9D turned -> corner:2"))
    assert game.turned is None and game.pass_number == 1
    assert legal(game) == {
        "2S corner:1 -> foundation:1",
        "2S corner:1 -> foundation:4",
        "redeal",
        "resign",
    }
    events = game.play(Move.parse("2S corner:1 -> foundation:1"))
    assert [event.kind for event in events] == ["home", "redeal", "turned"]
    assert game.pass_number == 2 and game.turned == Card.parse("5C")
    assert game.history[-1] == Move.parse("2S corner:1 -> foundation:1")


def test_pc13_under_rules_version_1_the_gather_was_always_a_move() -> None:
    game = position("9D", corners=("5C 2S", "", "", ""), rules=1)
    game.play(Move.parse("9D turned -> corner:2"))
    game.play(Move.parse("2S corner:1 -> foundation:1"))
    assert legal(game) == {"redeal", "resign"}, "no automatic gather"
    assert game.view().pile(CORNERS[0]).cards == (Card.parse("5C"),)
    assert game.view().pile(CORNERS[1]).cards == (Card.parse("9D"),)
    events = game.play(REDEAL)
    assert [event.kind for event in events] == ["redeal", "turned"]
    assert game.pass_number == 2 and game.turned == Card.parse("5C")


def test_pc13_redeal_is_refused_before_the_stock_is_out() -> None:
    game = position("9D", stock="5C 6C")
    assert refused(game, "redeal") == (
        "place 9D first: the heaps are gathered when the stock is out"
    )
    game = seven_placed(rest="corner:2")
    assert refused(game, "redeal") == "the heaps are gathered when the stock is out (2 left)"
    game = seven_placed(stock="")
    assert refused(game, "redeal") == (
        "finish the transfers after 7S first, or 'turn' to decline them"
    )


def test_pc14_heaps_gathered_heap_1_to_4_lowest_card_first() -> None:
    game = position("JC", corners=("3C 9D", "KH", "", "5S 6H"), tops=("AS", "AH", "2D", "AC"))
    events = game.play(Move.parse("JC turned -> corner:4"))
    assert events[1].text == (
        "the corner heaps gathered, corner:1 to corner:4, lowest card "
        "first, and dealt again: pass 2 of 2"
    )
    assert game.corners == [[], [], [], []]
    dealt = []
    while game.turned is not None:
        dealt.append(str(game.turned))
        game.play(Move(TURNED, CORNERS[0], game.turned))
        if game.turned is None and TURN in game.legal_moves():
            game.play(TURN)  # a seven placed: its transfers declined
    named = {"3C", "9D", "KH", "5S", "6H", "JC", "AS", "AH", "AD", "2D", "AC"}
    under_corner_3 = [
        card.text for card in CARDS.values() if card.pack == 0 and card.text not in named
    ]
    assert dealt == ["3C", "9D", "KH", *under_corner_3, "5S", "6H", "JC"]
    assert [str(pile[-1]) for pile in game.foundations] == ["AS", "AH", "2D", "AC"]


def test_pc15_second_pass_keeps_the_seven_but_has_no_redeal() -> None:
    game = position("7H", corners=("2S", "", "", ""), stock="KC", pass_number=2)
    game.play(Move.parse("7H turned -> corner:2"))
    assert "2S corner:1 -> corner:3" in legal(game)
    game.play(TURN)
    game.play(Move.parse("KC turned -> corner:3"))
    assert REDEAL not in game.legal_moves() and not game.outcome().is_over
    assert refused(game, "redeal") == (
        "the heaps are gathered only once, and this is the second pass"
    )


def test_pc16_the_gathered_stock_is_face_down() -> None:
    game = position("5S", corners=("3C 9D", "KH", "", ""))
    events = game.play(Move.parse("5S turned -> corner:4"))
    assert events[1].kind == "redeal" and not events[1].cards, "the gather shows no card"
    assert game.view().pile(STOCK).cards == (None,) * (52 - 4 - 1), "all but the aces and 3C"
    assert game.view().pile(TURNED).cards == (Card.parse("3C"),)
    assert not any(
        card["face_up"]
        for pile in game.full_state()["piles"]
        if pile["pile"] == "stock"
        for card in pile["cards"]
    )


# -- end of the game -----------------------------------------------------------------------


def test_pc17_won_with_all_52_cards_on_the_foundations() -> None:
    game = position("KC", tops=("QC", "KH", "KD", "KS"), pass_number=2)
    assert game.outcome().status is Status.IN_PROGRESS and game.foundation_count() == 51
    game.play(Move.parse("KC turned -> foundation:1"))
    assert game.outcome().status is Status.WON and game.legal_moves() == []
    assert game.progress().on_foundations == 52


def test_pc18_lost_when_the_second_pass_is_over_and_nothing_moves() -> None:
    game = position("9D", corners=("2S", "", "", ""), pass_number=2)
    game.play(Move.parse("9D turned -> corner:1"))
    assert game.outcome().status is Status.LOST
    assert game.outcome().reason == "the second pass is over and no card can go home"


def test_pc18_corner_tops_may_still_go_home_after_the_second_pass() -> None:
    game = position("9D", corners=("2S", "", "", ""), pass_number=2)
    game.play(Move.parse("9D turned -> corner:2"))
    assert game.outcome().status is Status.IN_PROGRESS
    assert legal(game) == {"2S corner:1 -> foundation:1", "2S corner:1 -> foundation:4", "resign"}
    game.play(Move.parse("2S corner:1 -> foundation:4"))
    assert game.outcome().status is Status.LOST


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
def test_pc18_random_play_always_ends_by_itself(seed: int) -> None:
    game = PussInTheCorner(seed)
    player = RandomPlayer(random.Random(seed))
    for _ in range(2_000):
        if game.outcome().is_over:
            break
        legal_moves = game.legal_moves()
        assert len(set(legal_moves)) == len(legal_moves)
        game.play(player.choose_in(game))
    assert game.outcome().status in (Status.WON, Status.LOST)


def test_pc19_resign_at_any_time() -> None:
    game = seven_placed()
    assert RESIGN in game.legal_moves()
    game.play(RESIGN)
    assert game.outcome().status is Status.RESIGNED
    with pytest.raises(IllegalMoveError, match="the game is over"):
        game.play(TURN)


def test_pc07_no_other_action_is_a_move() -> None:
    assert refused(PussInTheCorner(SEED), "afresh") == (
        "'afresh' is not a move in Puss in the Corner"
    )


# -- progress ------------------------------------------------------------------------------


def test_pc20_progress_counts_foundation_cards_aces_included() -> None:
    game = PussInTheCorner(SEED)
    assert game.foundation_count() == 4 and game.progress().total == 52
    game = position("2D", corners=("2S", "", "", ""), stock="KC")
    game.play(Move.parse("2S corner:1 -> foundation:1"))
    game.play(Move.parse("2D turned -> foundation:2"))
    assert game.foundation_count() == 6
