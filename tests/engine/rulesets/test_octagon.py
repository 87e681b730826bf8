"""The Octagon: one or more tests per rule of docs/rules/octagon.md (OC-n)."""

from __future__ import annotations

import pytest

from engine.cards import ACE, KING, RANK_NAMES, Card, Suit
from engine.deal import deal_stock
from engine.errors import IllegalMoveError
from engine.game import RULES_VERSION
from engine.moves import REDEAL, TURN, Move
from engine.rulesets.octagon import AUX, FOUNDATIONS, STOCK, WASTE, Octagon
from engine.view import Status
from tests.engine.rulesets.positions import set_up

SEED = 20260101


def cards(text: str) -> list[Card]:
    """``"7H 6H 5H"``: cards bottom to top."""
    return [Card.parse(word) for word in text.split()]


def position(
    aux: tuple[str, str, str, str] = ("", "", "", ""),
    waste: str = "",
    stock: str = "",
    built: dict[int, int] | None = None,
    deal: int = 1,
    rules: int = RULES_VERSION,
) -> Octagon:
    """A game set up from a position: auxiliary heaps and waste bottom to top, the stock in the
    order its cards will be turned, and ``built`` foundation number -> rank of its top card (the
    others show their ace). The cards named nowhere lie at the bottom of aux:3, in pack order
    (spades, hearts, diamonds, clubs, ace to king: no run forms)."""
    piles = {str(pile): heap for pile, heap in zip(AUX, aux, strict=True)}
    for number in range(1, 9):
        suit = "SHDC"[(number - 1) // 2]
        top = (built or {}).get(number, ACE)
        piles[f"foundation:{number}"] = " ".join(
            RANK_NAMES[rank - 1] + suit for rank in range(ACE, top + 1)
        )
    piles["waste"] = waste
    piles["stock"] = " ".join("#" + word for word in reversed(stock.split()))
    return set_up(
        Octagon,
        piles,
        {"deal": deal},
        rest={"aux:3": None},
        face_down=frozenset({"stock"}),
        rules=rules,
    )


def moves(game: Octagon) -> set[str]:
    return {str(move) for move in game.legal_moves()}


def refusal(game: Octagon, text: str) -> str:
    with pytest.raises(IllegalMoveError) as refused:
        game.play(Move.parse(text))
    return refused.value.reason


def test_oc01_aces_laid_out_in_pairs_two_per_suit() -> None:
    game = Octagon(SEED)
    for index, suit in enumerate([Suit.S, Suit.S, Suit.H, Suit.H, Suit.D, Suit.D, Suit.C, Suit.C]):
        (ace,) = game.foundations[index]
        assert (ace.rank, ace.suit, ace.pack) == (ACE, suit, index % 2)
    view = game.view()
    assert [pile.cards for pile in view.piles if pile.pile.kind == "foundation"] == [
        (Card.parse(f"A{suit}"),) for suit in "SSHHDDCC"
    ]


def test_oc02_layout_is_an_octagon_with_aux_heaps_at_the_corners() -> None:
    places = {slot.pile: (slot.row, slot.col) for slot in Octagon.layout}
    assert set(places) == {pile.pile for pile in Octagon(SEED).view().piles}
    assert len(set(places.values())) == len(places)
    assert [places[pile] for pile in AUX] == [(0, 0), (0, 3), (3, 3), (3, 0)]
    for first, second in zip(FOUNDATIONS[::2], FOUNDATIONS[1::2], strict=True):
        (row1, col1), (row2, col2) = places[first], places[second]
        assert abs(row1 - row2) + abs(col1 - col2) == 1, "a pair lies side by side"
    assert places[STOCK][0] == places[WASTE][0] == 4


def test_oc03_aux_heaps_dealt_five_at_a_time_face_up_rest_is_the_stock() -> None:
    game = Octagon(SEED)
    _, stock = deal_stock(2, (ACE,), SEED)
    assert game.aux == [stock[0:5], stock[5:10], stock[10:15], stock[15:20]]
    assert game.stock[::-1] == stock[20:] and len(game.stock) == 76
    view = game.view()
    for pile, heap in zip(AUX, game.aux, strict=True):
        assert view.pile(pile).cards == tuple(heap)
    assert view.pile(STOCK).cards == (None,) * 76
    assert view.pile(WASTE).cards == ()


def test_oc03_only_the_top_card_of_an_aux_heap_plays() -> None:
    game = position(aux=("2H 9C", "2D", "", ""), stock="KS")
    assert moves(game) == {"2D aux:2 -> foundation:5", "2D aux:2 -> foundation:6", "turn", "resign"}
    assert refusal(game, "2H aux:1 -> foundation:3") == (
        "2H cannot be moved that way: the top card of aux:1 is 9C"
    )


def test_oc04_foundation_builds_up_in_suit_and_player_chooses_between_the_pair() -> None:
    game = position(aux=("9C", "", "", ""), waste="2H", stock="KS")
    assert {"2H waste -> foundation:3", "2H waste -> foundation:4"} <= moves(game)
    game.play(Move.parse("2H waste -> foundation:4"))
    assert game.foundations[3] == cards("AH 2H") and game.foundations[2] == cards("AH")


def test_oc04_foundation_refuses_wrong_suit_wrong_rank_and_beyond_king() -> None:
    game = position(aux=("3H", "2S", "", ""), built={3: KING}, stock="KS")
    assert refusal(game, "3H aux:1 -> foundation:4") == "3H does not follow AH on foundation:4"
    assert refusal(game, "2S aux:2 -> foundation:3") == (
        "foundation:3 is built in hearts; 2S cannot go there"
    )
    assert refusal(game, "3H aux:1 -> foundation:3") == "foundation:3 is complete up to the king"
    assert "2S aux:2 -> foundation:1" in moves(game)


def test_oc05_turn_lays_the_next_card_on_the_waste() -> None:
    game = position(aux=("9C", "8D", "7S", "6H"), waste="QC", stock="2H 5D")
    assert "turn" in moves(game)
    events = game.play(TURN)
    assert game.waste == cards("QC 2H") and game.stock == cards("5D")
    assert [str(event) for event in events] == ["2H turned onto the waste"]
    assert events[0].cards == (Card.parse("2H"),)


def test_oc05_turn_is_offered_even_when_a_card_could_play_and_refused_on_an_empty_stock() -> None:
    game = position(aux=("2H", "", "", ""), waste="KC", stock="5D")
    assert {"2H aux:1 -> foundation:3", "turn"} <= moves(game)
    game.play(TURN)
    assert "turn" not in moves(game)
    assert refusal(game, "turn") == (
        "the stock is used up: turn the waste over with 'redeal' first"
    )


def test_oc05_the_engine_turns_by_itself_while_turning_is_all_that_can_be_done() -> None:
    game = position(aux=("9C 2H", "8D", "7S", "6H"), stock="KS QD 2S 5D")
    events = game.play(Move.parse("2H aux:1 -> foundation:3"))
    assert [str(event) for event in events] == [
        "2H played from aux:1 to foundation:3",
        "KS turned onto the waste",
        "QD turned onto the waste",
        "2S turned onto the waste",
    ]
    assert game.stock == cards("5D"), "it stops where the 2S can go home"
    assert moves(game) == {"2S waste -> foundation:1", "2S waste -> foundation:2", "turn", "resign"}


def test_oc05_the_opening_turns_until_a_card_can_be_played() -> None:
    game = Octagon(1)  # no auxiliary heap of this deal shows a two on top
    turned = [event for event in game.opening_events if event.kind == "turned"]
    assert turned and len(game.waste) + len(game.stock) == 76
    assert [event.cards[0] for event in turned] == game.waste
    assert any(move.card is not None for move in game.legal_moves())


def test_oc05_turn_refused_once_stock_and_waste_are_used_up() -> None:
    game = position(aux=("9C", "8D", "7S", "2H"))
    assert refusal(game, "turn") == (
        "the stock and the waste are both used up: nothing is left to turn"
    )


def test_oc06_top_of_the_waste_goes_home() -> None:
    game = position(aux=("9C", "8D", "7S", "6H"), waste="2S 3D", built={5: 2}, stock="KS")
    assert "3D waste -> foundation:5" in moves(game)
    assert "2S waste -> foundation:1" not in moves(game)
    assert refusal(game, "2S waste -> foundation:1") == (
        "2S cannot be moved that way: the top card of waste is 3D"
    )
    events = game.play(Move.parse("3D waste -> foundation:5"))
    assert game.foundations[4][-1] == Card.parse("3D")
    assert str(events[0]) == "3D played from the waste to foundation:5"
    assert "2S waste -> foundation:1" in moves(game)


def test_oc07_top_of_an_aux_heap_goes_home_before_any_card_is_turned() -> None:
    game = position(aux=("QD 2C", "9C", "8D", "7S"), stock="KS 2D")
    assert "2C aux:1 -> foundation:7" in moves(game)
    game.play(Move.parse("2C aux:1 -> foundation:8"))
    assert game.foundations[7] == cards("AC 2C") and game.aux[0] == cards("QD")
    assert refusal(game, "QD aux:1 -> foundation:5") == "QD does not follow AD on foundation:5"


def test_oc08_waste_top_builds_down_in_suit_on_an_aux_heap() -> None:
    game = position(aux=("7H", "7S", "8H", ""), waste="6H", stock="KS")
    assert "6H waste -> aux:1" in moves(game)
    assert refusal(game, "6H waste -> aux:2") == (
        "6H does not go on 7S: an auxiliary heap takes only the next lower card of its suit"
    )
    assert refusal(game, "6H waste -> aux:3") == (
        "6H does not go on 8H: an auxiliary heap takes only the next lower card of its suit"
    )
    assert refusal(game, "6H waste -> aux:4") == (
        "aux:4 is empty: it is filled by the top card of the waste, or by the next card turned, "
        "not by a move"
    )
    events = game.play(Move.parse("6H waste -> aux:1"))
    assert game.aux[0] == cards("7H 6H") and game.waste == []
    assert str(events[0]) == "6H played from the waste onto aux:1"


def test_oc08_waste_may_build_on_a_heap_whose_top_could_go_home() -> None:
    game = position(aux=("3H", "", "", ""), waste="2H", built={3: 2}, stock="KS")
    assert {"3H aux:1 -> foundation:3", "2H waste -> aux:1", "2H waste -> foundation:4"} <= (
        moves(game)
    )


def test_oc08_only_one_card_of_the_waste_moves() -> None:
    game = position(aux=("8H", "", "", ""), waste="7H 6H", stock="KS")
    assert refusal(game, "7H x2 waste -> aux:1") == "only the top card of the waste may be moved"


def test_oc09_nothing_else_moves() -> None:
    game = position(aux=("7H", "6H", "", ""), waste="5C", built={1: 3}, stock="KS")
    assert refusal(game, "6H aux:2 -> aux:1") == (
        "a card on aux:2 goes only to a foundation, never onto another heap"
    )
    assert refusal(game, "6H aux:2 -> waste") == (
        "no card is put on the waste: the waste takes only cards turned"
    )
    assert refusal(game, "3S foundation:1 -> aux:1") == (
        "a card on foundation:1 stays there: nothing is taken from a foundation"
    )
    assert refusal(game, "stock -> waste") == (
        "cards are taken from the stock only by turning them: send 'turn'"
    )
    assert refusal(game, "5C waste -> aux:1 bottom") == "no card is put under a pile in the Octagon"
    assert refusal(game, "5C waste -> heap:1") == (
        "there is no pile heap:1 in the Octagon (its piles are foundation:1..8, aux:1..4, "
        "stock and waste)"
    )
    assert refusal(game, "waste -> foundation:7") == (
        "name the card you move: the top card of waste is 5C"
    )
    assert refusal(game, "7H aux:4 -> foundation:3") == "there is no card on aux:4"
    assert refusal(game, "afresh") == "there is no 'afresh' in the Octagon"


def test_oc10_in_sequence_run_goes_home_in_one_move_top_card_first() -> None:
    game = position(aux=("9S 7H 6H 5H", "", "", ""), waste="KC", built={4: 4}, stock="KS")
    assert {
        "5H aux:1 -> foundation:4",
        "6H x2 aux:1 -> foundation:4",
        "7H x3 aux:1 -> foundation:4",
    } <= moves(game)
    assert refusal(game, "9S x4 aux:1 -> foundation:4") == (
        "the top 4 cards of aux:1 are not in sequence (each one lower than the card under it, "
        "in suit): only the top 3 are"
    )
    assert refusal(game, "8H x3 aux:1 -> foundation:4") == (
        "8H cannot be moved that way: the card 3 from the top of aux:1 is 7H"
    )
    assert refusal(game, "7H x5 aux:1 -> foundation:4") == "aux:1 holds only 4 cards"
    events = game.play(Move.parse("7H x3 aux:1 -> foundation:4"))
    assert game.foundations[3][-4:] == cards("4H 5H 6H 7H")
    assert game.aux[0] == cards("9S")
    assert str(events[0]) == "5H 6H 7H played from aux:1 to foundation:4"


def test_oc10_part_of_a_run_may_go_to_each_foundation_of_the_suit() -> None:
    game = position(aux=("7H 6H 5H", "", "", ""), built={3: 4, 4: 5}, stock="KS")
    game.play(Move.parse("5H aux:1 -> foundation:3"))
    game.play(Move.parse("7H x2 aux:1 -> foundation:4"))
    assert game.foundations[2][-2:] == cards("4H 5H")
    assert game.foundations[3][-3:] == cards("5H 6H 7H")


def test_oc11_no_card_is_played_for_the_player() -> None:
    game = position(aux=("2H", "9C", "8D", "7S"), stock="2S 3H")
    game.play(TURN)
    assert game.waste == cards("2S") and game.aux[0] == cards("2H")
    assert {
        "2S waste -> foundation:1",
        "2S waste -> foundation:2",
        "2H aux:1 -> foundation:3",
        "2H aux:1 -> foundation:4",
        "turn",
    } == (moves(game) - {"resign"})


def test_oc12_emptied_aux_heap_filled_at_once_from_the_top_of_the_waste() -> None:
    game = position(aux=("3H 2H", "9C", "8D", "2S"), waste="QC JD", stock="KS")
    events = game.play(Move.parse("3H x2 aux:1 -> foundation:3"))
    assert game.aux[0] == cards("JD") and game.waste == cards("QC")
    assert [str(event) for event in events] == [
        "2H 3H played from aux:1 to foundation:3",
        "JD from the waste fills the empty aux:1",
    ]


def test_oc13_with_the_waste_empty_the_next_cards_turned_fill_the_empty_heaps() -> None:
    game = position(aux=("2H", "2D", "8D", "7S"), stock="KS QH JC 2S")
    game.play(Move.parse("2D aux:2 -> foundation:6"))
    assert game.aux[1] == []
    assert "aux:2 is empty: the next card turned fills it" in game.view().notes
    assert str(game.play(TURN)[0]) == "KS turned, fills the empty aux:2"
    events = game.play(Move.parse("2H aux:1 -> foundation:3"))
    assert [str(event) for event in events[1:]] == [
        "QH turned, fills the empty aux:1",
        "JC turned onto the waste",
        "2S turned onto the waste",
    ]
    assert game.aux[0] == cards("QH") and game.aux[1] == cards("KS")
    assert game.waste == cards("JC 2S")


def test_oc13_an_empty_heap_stays_empty_once_the_stock_is_used_up() -> None:
    game = position(aux=("2H", "9C", "8D", "7S"), stock="")
    game.play(Move.parse("2H aux:1 -> foundation:3"))
    assert game.aux[0] == [] and "aux:1 is empty: it stays empty" in game.view().notes


def test_oc14_redeal_turns_the_waste_over_first_card_first() -> None:
    game = position(aux=("9C", "8D", "7S", "6H"), waste="KS QH JC", stock="5D")
    assert "redeal" not in moves(game)
    assert refusal(game, "redeal") == (
        "the stock still holds 1 card: the waste is turned over only when the stock is used up"
    )
    events = game.play(TURN)
    assert [str(event) for event in events][:2] == [
        "5D turned onto the waste",
        "the waste is turned over as the stock for deal 2 of 3",
    ], "nothing can be played: the turn-over is all that is left, so the engine makes it"
    turned = [event.cards[0] for event in events[2:6]]
    assert turned == cards("KS QH JC 5D"), "none can play, so the engine turns them all"
    assert str(events[6]) == "the waste is turned over as the stock for deal 3 of 3"
    assert game.deal == 3 and game.waste == cards("KS QH JC 5D") and game.stock == []
    assert game.outcome().status is Status.LOST and game.history == [TURN]


def test_oc14_the_turn_over_is_the_players_move_while_a_card_can_be_played() -> None:
    game = position(aux=("9C", "8D", "7S", "6H"), waste="KS QH 5H")
    assert moves(game) == {"5H waste -> aux:4", "redeal", "resign"}


def test_oc14_under_rules_version_1_the_turn_over_was_always_a_move() -> None:
    game = position(aux=("9C", "8D", "7S", "6H"), waste="KS QH JC", stock="5D", rules=1)
    game.play(TURN)
    assert moves(game) == {"redeal", "resign"}
    events = game.play(REDEAL)
    assert str(events[0]) == "the waste is turned over as the stock for deal 2 of 3"


def test_oc14_three_deals_in_all() -> None:
    game = position(aux=("9C", "8D", "7S", "2H"), waste="KS", deal=2)
    game.play(REDEAL)
    game.play(TURN)
    assert game.deal == 3
    assert "redeal" not in moves(game)
    assert refusal(game, "redeal") == "all 3 deals through the stock are used: no redeal is left"


def test_oc14_no_redeal_of_an_empty_waste() -> None:
    game = position(aux=("9C", "2H", "7S", "6H"))
    assert refusal(game, "redeal") == "the waste is empty: there is nothing to turn over"


def test_oc15_won_when_all_cards_are_home() -> None:
    game = position(aux=("", "", "", "KC"), built={n: KING for n in range(1, 8)} | {8: 12})
    game.play(Move.parse("KC aux:4 -> foundation:8"))
    assert game.foundation_count() == 104
    assert game.outcome().status is Status.WON
    assert game.legal_moves() == []


def test_oc16_lost_when_no_move_is_left_after_the_third_deal() -> None:
    game = position(aux=("9C", "8D", "7S", "6H"), waste="KS", deal=3)
    assert game.legal_moves() == []
    outcome = game.outcome()
    assert outcome.status is Status.LOST
    assert outcome.reason == "no card can be played after the last of the 3 deals"


def test_oc16_lost_early_when_stock_and_waste_are_used_up() -> None:
    game = position(aux=("9C", "8D", "7S", "6H"))
    assert game.outcome().status is Status.LOST
    assert game.outcome().reason == (
        "no card can be played and the stock and the waste are both used up"
    )
    assert refusal(game, "turn") == (
        "the game is over (lost: no card can be played and the stock and the waste are both "
        "used up)"
    )


def test_oc16_the_turn_refusal_names_the_last_deal() -> None:
    game = position(aux=("9C", "8D", "7S", "2H"), waste="KS", deal=3)
    assert refusal(game, "turn") == "the stock is used up and no deal is left"


def test_oc17_progress_counts_the_aces() -> None:
    game = Octagon(SEED)
    assert game.foundation_count() == 8
    assert str(game.progress()) == "8/104 cards home after 0 moves"


def test_oc18_stock_hidden_and_other_piles_sent_whole_in_every_deal() -> None:
    game = position(aux=("9C 4D", "8D", "7S", "2H"), waste="KS QH", stock="JC")
    view = game.view()
    assert view.pile(STOCK).cards == (None,)
    assert view.pile(WASTE).cards == tuple(cards("KS QH"))
    assert view.pile(AUX[0]).cards == tuple(cards("9C 4D"))
    game.play(TURN)
    game.play(REDEAL)
    assert game.view().pile(STOCK).cards == (None, None, None)
    assert game.view().pile(WASTE).cards == ()
