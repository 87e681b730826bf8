"""Hidden Cards: one test (or more) per rule of docs/rules/hidden-cards.md (HC-n)."""

from __future__ import annotations

import random

import pytest

from engine.cards import RANK_NAMES, Card
from engine.deal import deal_stock
from engine.errors import IllegalMoveError
from engine.game import RULES_VERSION
from engine.moves import AFRESH, REDEAL, RESIGN, TURN, Move
from engine.piles import PileId
from engine.players import RandomPlayer
from engine.rulesets.hidden_cards import RESERVE, HiddenCards
from engine.view import Status
from tests.engine.rulesets.positions import set_up

SEED = 7


def cards(text: str) -> list[Card]:
    return [Card.parse(word) for word in text.split()]


def complete(rank: int) -> str:
    """The four cards of one value, as text."""
    return " ".join(RANK_NAMES[rank - 1] + suit for suit in "SHDC")


def position(
    heaps: dict[int, str] | None = None,
    placed: dict[int, int] | None = None,
    reserve: tuple[str, ...] | None = None,
    hand: str = "",
    kings: str = "",
    current: int = 1,
    owed: bool = False,
    rules: int = RULES_VERSION,
) -> HiddenCards:
    """A game set up from a position: ``heaps`` maps heap numbers to their cards, bottom first
    (the cards named nowhere are shared out in pack order, one to each reserve place unless
    ``reserve`` is given, then four a heap among the heaps not named); ``placed`` how many at
    the bottom were placed there; ``reserve`` the four reserve places ("" for an empty one),
    face down; ``current`` the heap to take from next; ``owed`` whether a
    reserve card is to be taken for a king."""
    heaps = heaps or {}
    piles = {f"heap:{number}": text for number, text in heaps.items()}
    piles |= {
        f"reserve:{number}": " ".join("#" + word for word in text.split())
        for number, text in enumerate(reserve or (), start=1)
    }
    piles |= {"hand": hand, "kings": kings}
    others = [number for number in range(1, 13) if number not in heaps]
    rest: dict[str, int | None] = {} if reserve else {place: 1 for place in map(str, RESERVE)}
    rest |= {f"heap:{number}": 4 for number in others}
    if others:
        rest[f"heap:{others[-1]}"] = None
    state = {
        "next_heap": f"heap:{current}",
        "reserve_owed": owed,
        "placed_under": [(placed or {}).get(number, 0) for number in range(1, 13)],
    }
    return set_up(
        HiddenCards, piles, state, rest=rest, face_down=frozenset(map(str, RESERVE)), rules=rules
    )


def refusal(game: HiddenCards, text: str) -> str:
    before = game.full_state()
    with pytest.raises(IllegalMoveError) as refused:
        game.play(Move.parse(text))
    assert game.full_state() == before
    return refused.value.reason


def moves(game: HiddenCards) -> list[str]:
    return [str(move) for move in game.legal_moves() if not move.is_resign]


def pile(game: HiddenCards, name: str) -> list[str]:
    return [
        "##" if card is None else str(card) for card in game.view().pile(PileId.parse(name)).cards
    ]


# -- the layout ---------------------------------------------------------------------------


def test_hc01_one_pack_twelve_heaps_in_two_rows_reserve_right_kings_below() -> None:
    assert (HiddenCards.packs, HiddenCards.total_cards, HiddenCards.taken_out) == (1, 52, ())
    slots = {str(slot.pile): slot for slot in HiddenCards.layout}
    assert [(slots[f"heap:{n}"].row, slots[f"heap:{n}"].col) for n in (1, 6, 7, 12)] == [
        (0, 0),
        (0, 5),
        (1, 0),
        (1, 5),
    ]
    assert [slots[f"heap:{n}"].label for n in (1, 11)] == ["heap:1 (A)", "heap:11 (J)"]
    assert all(slots[f"reserve:{n}"].col > 5 for n in range(1, 5))
    assert slots["kings"].row == 2
    game = HiddenCards(SEED)
    assert {str(pile.pile) for pile in game.view().piles} == set(slots)
    assert "there is no pile heap:13" in refusal(game, "5D heap:1 -> heap:13 bottom")
    assert "there is no pile waste" in refusal(game, "5D waste -> heap:5 bottom")


# -- the deal -----------------------------------------------------------------------------


def test_hc02_dealt_round_the_twelve_heaps_then_the_reserve_four_times() -> None:
    _, stock = deal_stock(1, (), SEED)
    game = HiddenCards(SEED)
    for number in range(1, 13):
        assert game.heaps[number - 1] == stock[number - 1 :: 13]
    assert [pile for pile in game.reserve] == [[card] for card in stock[12::13]]
    assert [len(heap) for heap in game.heaps] == [4] * 12
    assert game.opening_events[0].text == "heap:1 dealt face up: " + " ".join(
        str(card) for card in stock[0::13]
    )


def test_hc03_heaps_in_view_reserve_hidden_until_taken() -> None:
    game = HiddenCards(SEED)
    view = game.view()
    assert all(
        card is not None for n in range(1, 13) for card in view.pile(PileId("heap", n)).cards
    )
    assert all(view.pile(pile).cards == (None,) for pile in RESERVE)
    hidden = {card for pile in game.reserve for card in pile}
    assert all(card not in hidden for event in game.opening_events for card in event.cards)
    kinged = position(heaps={3: "2C 3D 4H KH"}, current=3, reserve=("9C", "8D", "7S", "6H"))
    kinged.play(Move.parse("KH heap:3 -> kings"))
    assert all(move.card is None for move in kinged.legal_moves() if not move.is_resign)
    for number in range(1, 5):
        for named in ("9C", "8D", "7S", "6H"):
            assert refusal(kinged, f"{named} reserve:{number} -> hand") == (
                f"take one reserve card into the hand, blind, naming no card: write "
                f"reserve:{number} -> hand"
            )
    events = kinged.play(Move.parse("reserve:2 -> hand"))
    assert pile(kinged, "hand") == ["8D"] and events[0].cards == (Card.parse("8D"),)
    assert pile(kinged, "reserve:1") == ["##"]


# -- moves during play --------------------------------------------------------------------


def test_hc04_the_first_card_to_move_is_the_top_of_heap_1() -> None:
    game = position(heaps={1: "4H JC 6C 5D", 2: "5S 10S AS 9D"})
    assert moves(game) == ["5D heap:1 -> heap:5 bottom"]
    assert refusal(game, "9D heap:2 -> heap:9 bottom") == (
        "the next card to move is the top card of heap:1, the first heap"
    )


def test_hc05_a_card_goes_under_the_heap_of_its_value_only() -> None:
    game = position(heaps={1: "4H JC 6C 6H", 6: "10D 7C 3H KS"})
    assert refusal(game, "6H heap:1 -> heap:5 bottom") == (
        "6H goes under heap:6, the heap of its value"
    )
    assert "not laid on top" in refusal(game, "6H heap:1 -> heap:6")
    assert refusal(game, "6C heap:1 -> heap:6 bottom") == "the top card of heap:1 is 6H, not 6C"
    assert refusal(game, "heap:1 -> heap:6 bottom") == (
        "name the card you move: 6H heap:1 -> heap:6 bottom"
    )
    assert refusal(game, "6H x2 heap:1 -> heap:6 bottom") == "cards are placed one at a time"
    events = game.play(Move.parse("6H heap:1 -> heap:6 bottom"))
    assert [str(event) for event in events] == ["6H placed under heap:6"]
    assert pile(game, "heap:6") == ["6H", "10D", "7C", "3H", "KS"]
    assert pile(game, "heap:1") == ["4H", "JC", "6C"]


def test_hc05_an_ace_on_heap_1_goes_under_heap_1_itself() -> None:
    game = position(heaps={1: "4H JC 6C AD"})
    game.play(Move.parse("AD heap:1 -> heap:1 bottom"))
    assert pile(game, "heap:1") == ["AD", "4H", "JC", "6C"]
    assert moves(game) == ["6C heap:1 -> heap:6 bottom"]


def test_hc06_the_next_card_is_the_top_of_the_heap_just_fed() -> None:
    game = position(heaps={1: "4H JC 6C 6H", 6: "10D 7C 3H 9S"})
    game.play(Move.parse("6H heap:1 -> heap:6 bottom"))
    assert moves(game) == ["9S heap:6 -> heap:9 bottom"]
    assert refusal(game, "6C heap:1 -> heap:6 bottom") == (
        "the next card to move is the top card of heap:6, the heap just fed"
    )


def test_hc07_a_king_goes_to_the_king_row_and_nothing_else_does() -> None:
    game = position(heaps={3: "2C 3D 4H KH", 4: "QC KD 3C 4S"}, current=3)
    assert moves(game) == ["KH heap:3 -> kings"]
    assert refusal(game, "KH heap:3 -> heap:12 bottom") == (
        "a king goes to the king row: write KH heap:3 -> kings"
    )
    assert "by itself" in refusal(game, "KH heap:3 -> kings bottom")
    game.play(Move.parse("KH heap:3 -> kings"))
    assert pile(game, "kings") == ["KH"]
    other = position(heaps={4: "QC KD 3C 4S"}, current=4)
    assert refusal(other, "4S heap:4 -> kings") == (
        "only kings go to the king row; 4S goes under heap:4"
    )


def test_hc08_after_a_king_a_reserve_card_is_taken_blind() -> None:
    game = position(heaps={3: "2C 3D 4H KH"}, current=3, reserve=("9C", "", "7S", "6H"))
    game.play(Move.parse("KH heap:3 -> kings"))
    assert moves(game) == ["reserve:1 -> hand", "reserve:3 -> hand", "reserve:4 -> hand"]
    assert refusal(game, "4H heap:3 -> heap:4 bottom") == (
        "KH went to the king row: take a reserve card first (like reserve:1 -> hand)"
    )
    assert refusal(game, "reserve:2 -> hand") == "there is no card on reserve:2"
    assert refusal(game, "reserve:3 -> heap:7 bottom") == (
        "take one reserve card into the hand, blind, naming no card: write reserve:3 -> hand"
    )
    events = game.play(Move.parse("reserve:3 -> hand"))
    assert [str(event) for event in events] == ["7S taken from reserve:3 into the hand"]
    assert game.reserve[2] == [] and game.hand == cards("7S")


def test_hc08_a_reserve_card_is_taken_whole_and_unnamed_and_the_hint_is_a_legal_take() -> None:
    game = position(heaps={3: "2C 3D 4H KH"}, current=3, reserve=("", "9C", "7S", "6H"))
    game.play(Move.parse("KH heap:3 -> kings"))
    blind = "take one reserve card into the hand, blind, naming no card: write reserve:3 -> hand"
    for text in (
        "7S reserve:3 -> hand",
        "9C reserve:3 -> hand",
        "x2 reserve:3 -> hand",
        "reserve:3 -> hand bottom",
        "reserve:3 -> heap:7 bottom",
    ):
        assert refusal(game, text) == blind
    assert refusal(game, "4H heap:3 -> heap:4 bottom") == (
        "KH went to the king row: take a reserve card first (like reserve:2 -> hand)"
    )


def test_hc08_no_reserve_card_without_a_king() -> None:
    game = position()
    assert refusal(game, "reserve:1 -> hand").startswith(
        "a reserve card is taken only after a king"
    )


def test_hc09_the_hand_card_is_placed_and_play_goes_on_from_its_heap() -> None:
    game = position(heaps={5: "4D 4S 6D 8H"}, hand="5D", kings="KH")
    assert moves(game) == ["5D hand -> heap:5 bottom"]
    assert refusal(game, "5D hand -> heap:4 bottom") == (
        "5D goes under heap:5, the heap of its value"
    )
    assert refusal(game, "5D heap:1 -> heap:5 bottom") == (
        "first place 5D, the reserve card in the hand"
    )
    game.play(Move.parse("5D hand -> heap:5 bottom"))
    assert game.hand == [] and pile(game, "heap:5")[0] == "5D"
    assert moves(game) == ["8H heap:5 -> heap:8 bottom"]


def test_hc09_the_hand_card_must_be_named_and_named_right() -> None:
    game = position(hand="5D", kings="KH")
    assert refusal(game, "6D hand -> heap:5 bottom") == (
        "the reserve card in the hand is 5D, not 6D"
    )
    assert refusal(game, "9S hand -> heap:9 bottom") == (
        "the reserve card in the hand is 5D, not 9S"
    )
    assert refusal(game, "hand -> heap:5 bottom") == (
        "name the card you move: 5D hand -> heap:5 bottom"
    )
    assert refusal(game, "5D x2 hand -> heap:5 bottom") == "cards are placed one at a time"
    assert game.view().notes[0] == "next: 5D, the reserve card in the hand"


def test_hc09_a_king_from_the_reserve_goes_up_and_another_card_is_taken() -> None:
    game = position(hand="KD", kings="KH", reserve=("", "9C", "7S", "6H"))
    assert moves(game) == ["KD hand -> kings"]
    assert refusal(game, "KD hand -> heap:12 bottom") == (
        "a king goes to the king row: write KD hand -> kings"
    )
    game.play(Move.parse("KD hand -> kings"))
    assert pile(game, "kings") == ["KH", "KD"]
    assert moves(game) == ["reserve:2 -> hand", "reserve:3 -> hand", "reserve:4 -> hand"]


# -- automatic steps ----------------------------------------------------------------------


def test_hc10_the_engine_makes_no_move_of_its_own() -> None:
    game = HiddenCards(SEED)
    assert game.placed == [0] * 12 and [len(heap) for heap in game.heaps] == [4] * 12
    king = position(heaps={3: "2C 3D 4H KH"}, current=3)
    events = king.play(Move.parse("KH heap:3 -> kings"))
    assert len(events) == 1 and king.hand == [] and len(moves(king)) == 4
    fed = position(heaps={1: "4H JC 6C 6H", 6: "10D 7C 3H 6S"})
    fed.play(Move.parse("6H heap:1 -> heap:6 bottom"))
    assert pile(fed, "heap:6")[-1] == "6S"
    assert moves(fed) == ["6S heap:6 -> heap:6 bottom"]


# -- redeals ------------------------------------------------------------------------------


@pytest.mark.parametrize("action", [REDEAL, TURN, AFRESH])
def test_hc11_no_redeal_turn_or_afresh(action: Move) -> None:
    game = HiddenCards(SEED)
    assert action not in game.legal_moves()
    assert refusal(game, str(action)).startswith(f"Hidden Cards has no {action}")


# -- end of the game ----------------------------------------------------------------------


def test_hc12_the_game_ends_when_the_heap_to_take_from_shows_no_unplaced_card() -> None:
    game = position(heaps={1: "AS AH AD", 4: "4S 4H AC"}, placed={1: 3, 4: 2}, current=4)
    game.play(Move.parse("AC heap:4 -> heap:1 bottom"))
    assert game.legal_moves() == []
    outcome = game.outcome()
    assert outcome.status is Status.LOST
    assert outcome.reason == "heap:1, the heap to take from, shows no unplaced card"
    assert "the game is over" in refusal(game, "AC heap:1 -> heap:1 bottom")


def test_hc12_random_play_always_ends_at_heap_1() -> None:
    rng = random.Random(3)
    for seed in range(200):
        game = HiddenCards(seed)
        while not game.outcome().is_over:
            game.play(rng.choice([move for move in game.legal_moves() if not move.is_resign]))
        assert game.outcome().reason != "a king came up and the reserve is empty"
        if game.outcome().status is Status.LOST:
            assert game.current == 0 and game.placed[0] == 4


def test_hc13_a_king_with_the_reserve_empty_ends_the_game() -> None:
    game = position(heaps={3: "2C 3D 4H KH"}, current=3, reserve=("", "", "", ""), kings="KS KD KC")
    game.play(Move.parse("KH heap:3 -> kings"))
    assert game.legal_moves() == []
    assert game.outcome().reason == "a king came up and the reserve is empty"
    assert game.view().notes[0] == "a king came up and the reserve is empty"
    assert "the game is over" in refusal(game, "reserve:1 -> hand")


def near_end(kings: str, extra: dict[int, str] | None = None) -> HiddenCards:
    """Every heap complete and placed but heap:1 (three aces) and heap:5, which shows AC."""
    heaps = {rank: complete(rank) for rank in range(2, 13)}
    heaps[1] = "AS AH AD"
    heaps[5] = complete(5) + " AC"
    heaps.update(extra or {})
    placed = {rank: 4 for rank in range(1, 13)} | {1: 3}
    return position(heaps=heaps, placed=placed, current=5, kings=kings, reserve=("", "", "", ""))


def test_hc14_won_when_every_heap_holds_its_four_and_the_kings_are_up() -> None:
    game = near_end("KS KH KD KC")
    game.play(Move.parse("AC heap:5 -> heap:1 bottom"))
    assert game.outcome().status is Status.WON
    assert game.progress().on_foundations == 52


def test_hc14_lost_when_a_card_is_still_unplaced_at_the_end() -> None:
    game = near_end("KS KH KD", {7: complete(7) + " KC"})
    game.play(Move.parse("AC heap:5 -> heap:1 bottom"))
    assert game.outcome().status is Status.LOST
    assert game.foundation_count() == 51


def test_hc14_the_player_may_resign_at_any_time() -> None:
    game = HiddenCards(SEED)
    assert RESIGN in game.legal_moves()
    game.play(RESIGN)
    assert game.outcome().status is Status.RESIGNED


# -- progress -----------------------------------------------------------------------------


def test_hc14_seed_10_won_with_cards_dealt_onto_their_own_heaps_never_moved() -> None:
    """The outside report: reserve taken in the order reserve:1..4, every other move forced."""
    game = HiddenCards(10)
    while not game.outcome().is_over:
        game.play(game.legal_moves()[0])
    assert game.outcome().status is Status.WON
    assert game.progress().on_foundations == 52
    assert [card.rank for heap in game.heaps for card in heap] == [
        rank for rank in range(1, 13) for _ in range(4)
    ]
    unmoved = {"7D", "10H"}
    assert all(not any(str(move.card) == card for move in game.history) for card in unmoved)


def test_hc14_under_rules_version_1_the_same_game_was_lost() -> None:
    game = HiddenCards(10, rules=1)
    while not game.outcome().is_over:
        game.play(game.legal_moves()[0])
    assert str(game.outcome()) == "lost: heap:1, the heap to take from, shows no unplaced card"
    assert game.progress().on_foundations == 50


def test_hc15_home_counts_kings_and_every_card_on_the_heap_of_its_own_value() -> None:
    game = position(heaps={1: "4H JC 6C 6H", 6: "10D 6D 3H KS"})
    others = sum(
        card.rank == number
        for number in range(2, 13)
        if number != 6
        for card in game.heaps[number - 1]
    )
    assert game.foundation_count() == others + 1, "6D was dealt onto heap:6: it is home"
    game.play(Move.parse("6H heap:1 -> heap:6 bottom"))
    assert game.progress().on_foundations == others + 2
    game.play(Move.parse("KS heap:6 -> kings"))
    assert game.progress().on_foundations == others + 3
    game.play(Move.parse("reserve:1 -> hand"))
    assert game.progress().on_foundations == others + 3


def test_hc15_a_card_taken_from_its_own_heap_and_placed_under_it_stays_home() -> None:
    game = position(heaps={1: "4H JC 6C 6H", 6: "10D 7C 3H 6S"})
    before = game.foundation_count()
    game.play(Move.parse("6H heap:1 -> heap:6 bottom"))
    game.play(Move.parse("6S heap:6 -> heap:6 bottom"))
    assert game.foundation_count() == before + 1


def test_hc16_placed_cards_lie_at_the_bottom_and_a_note_counts_them() -> None:
    game = position(heaps={1: "4H JC 6C 6H", 6: "10D 7C 3H 6S"})
    assert game.view().notes == ("next: 6H, the top card of heap:1", "placed under: none yet")
    game.play(Move.parse("6H heap:1 -> heap:6 bottom"))
    game.play(Move.parse("6S heap:6 -> heap:6 bottom"))
    assert pile(game, "heap:6") == ["6S", "6H", "10D", "7C", "3H"]
    assert game.view().notes == ("next: 3H, the top card of heap:6", "placed under: heap:6 x2")


@pytest.mark.parametrize("seed", range(40))
def test_hc14_cards_home_counted_as_the_moves_go_match_the_layout(seed: int) -> None:
    """The count of cards in their final place is kept up move by move, not recounted: it is
    always what the layout shows, a king in the king row or a card on its own heap."""
    game = HiddenCards(seed)
    player = RandomPlayer(random.Random(seed))
    while True:
        assert game.foundation_count() == len(game.kings) + sum(
            card.rank == value for value, heap in enumerate(game.heaps, start=1) for card in heap
        )
        if game.outcome().is_over:
            break
        game.play(player.choose_in(game))
