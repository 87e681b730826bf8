"""All Fours: one test (or more) per rule of docs/rules/all-fours.md (AF-n)."""

from __future__ import annotations

import re

import pytest

from engine.cards import RANK_NAMES, Card
from engine.deal import deal_stock
from engine.errors import IllegalMoveError
from engine.game import RULES_VERSION
from engine.moves import AFRESH, REDEAL, RESIGN, TURN, Move
from engine.piles import PileId
from engine.rulesets.all_fours import AllFours
from engine.view import Status
from tests.engine.rulesets.positions import set_up

SEED = 5
HEAPS = range(1, 14)
CARD_TEXT = re.compile(r"\b(?:10|[2-9AJQK])[SHDC]\b")


def cards(text: str) -> list[Card]:
    return [Card.parse(word) for word in text.split()]


def complete(rank: int) -> str:
    """A heap holding its four cards, all placed."""
    return " ".join(RANK_NAMES[rank - 1] + suit for suit in "SHDC") + " |"


def position(
    heaps: dict[int, str],
    current: int,
    turned: bool = True,
    afresh_used: bool = False,
    rules: int = RULES_VERSION,
) -> AllFours:
    """A game set up from a position. ``heaps`` maps heap numbers to ``"placed cards |
    face-down cards"``, bottom first (heaps not named are complete); the top card of heap
    ``current`` is the card just turned, face up, if ``turned``."""
    piles, placed = {}, []
    for number in HEAPS:
        up, _, down = heaps.get(number, complete(number)).partition("|")
        hidden = ["#" + word for word in down.split()]
        if turned and number == current and hidden:
            hidden[-1] = hidden[-1][1:]
        piles[f"heap:{number}"] = " ".join([*up.split(), *hidden])
        placed.append(len(up.split()))
    return set_up(
        AllFours,
        piles,
        {
            "current_heap": f"heap:{current}",
            "placed_under": placed,
            "turned": turned,
            "afresh_used": afresh_used,
            "finished": False,
        },
        rules=rules,
    )


def refusal(game: AllFours, text: str) -> str:
    before = game.full_state()
    with pytest.raises(IllegalMoveError) as refused:
        game.play(Move.parse(text))
    assert game.full_state() == before
    return refused.value.reason


def moves(game: AllFours) -> list[str]:
    return [str(move) for move in game.legal_moves() if not move.is_resign]


def pile(game: AllFours, number: int) -> list[str]:
    return [
        "##" if card is None else str(card)
        for card in game.view().pile(PileId("heap", number)).cards
    ]


# -- the layout and the deal --------------------------------------------------------------


def test_af01_one_pack_thirteen_heaps_ace_to_king() -> None:
    assert (AllFours.packs, AllFours.total_cards, AllFours.taken_out) == (1, 52, ())
    slots = {str(slot.pile): slot for slot in AllFours.layout}
    assert list(slots) == [f"heap:{n}" for n in range(1, 14)]
    assert [slots[f"heap:{n}"].label for n in (1, 13)] == ["heap:1 (A)", "heap:13 (K)"]
    assert [(slots[f"heap:{n}"].row, slots[f"heap:{n}"].col) for n in (1, 7, 12, 13)] == [
        (0, 0),
        (1, 0),
        (1, 5),
        (2, 0),
    ]
    game = AllFours(SEED)
    assert "there is no pile heap:14" in refusal(game, "4S heap:1 -> heap:14 bottom")


def test_af02_dealt_face_down_one_on_each_heap_in_turn() -> None:
    _, stock = deal_stock(1, (), SEED)
    game = AllFours(SEED)
    assert [heap for heap in game.heaps] == [stock[n::13] for n in range(13)]
    assert all(pile(game, n) == ["##"] * 4 for n in range(2, 14))


def test_af03_face_down_cards_never_shown() -> None:
    game = AllFours(SEED)
    assert pile(game, 1) == ["##", "##", "##", "4S"]
    shown = {card for event in game.opening_events for card in event.cards}
    assert shown == {Card.parse("4S")}
    hidden_top = game.heaps[1][-1]
    reason = refusal(game, f"{hidden_top} heap:2 -> heap:{hidden_top.rank} bottom")
    assert reason == "the card to place is 4S, just turned on heap:1"


def test_af03_no_refusal_names_a_face_down_card() -> None:
    """Moves from every heap, naming each face-down card or none, in the first pass, at the
    standstill and after beginning afresh: a reason names no face-down card but the one the
    player named himself."""
    game = AllFours(SEED)
    while not game.outcome().is_over:
        down = {number: game.heaps[number - 1][game.placed[number - 1] :] for number in HEAPS}
        if game.turned:
            down[game.current + 1] = down[game.current + 1][:-1]
        hidden = {str(card) for cards in down.values() for card in cards}
        for number, cards in down.items():
            for card in cards:
                for named in (str(card), ""):
                    text = f"{named} heap:{number} -> heap:{card.rank} bottom"
                    told = set(CARD_TEXT.findall(refusal(game, text.strip())))
                    assert not told & hidden - {named}, text
        game.play(game.legal_moves()[0])
    assert game.afresh_used and game.finished


# -- moves during play --------------------------------------------------------------------


def test_af04_the_turned_card_goes_under_the_heap_of_its_number() -> None:
    game = AllFours(SEED)
    assert moves(game) == ["4S heap:1 -> heap:4 bottom"]
    assert refusal(game, "4S heap:1 -> heap:5 bottom") == (
        "4S goes under heap:4, the heap of its value"
    )
    assert "not laid on top" in refusal(game, "4S heap:1 -> heap:4")
    assert refusal(game, "4H heap:1 -> heap:4 bottom") == "the card turned on heap:1 is 4S, not 4H"
    assert "name the card" in refusal(game, "heap:1 -> heap:4 bottom")
    game.play(Move.parse("4S heap:1 -> heap:4 bottom"))
    assert pile(game, 4) == ["4S", "##", "##", "##", "4D"]


def test_af04_a_card_turned_on_its_own_heap_is_still_placed_under_it() -> None:
    game = position({4: "4S 4H 4C | 9C 4D", 9: "9S 9H 9D |"}, current=4)
    assert moves(game) == ["4D heap:4 -> heap:4 bottom"]
    game.play(Move.parse("4D heap:4 -> heap:4 bottom"))
    assert pile(game, 4) == ["4D", "4S", "4H", "4C", "9C"]


def test_af05_begin_afresh_once_at_the_first_standstill_by_itself() -> None:
    game = position({1: "AH AC AD | AS", 6: "6S | 6D 6C 6H"}, current=1)
    assert refusal(game, "afresh") == "you may begin afresh only at a standstill; first place AS"
    events = game.play(Move.parse("AS heap:1 -> heap:1 bottom"))
    assert [str(event) for event in events] == [
        "AS placed under heap:1",
        "standstill: heap:1 has no face-down card",
        "begin afresh from heap:6",
        "6H turned on heap:6",
    ]
    assert moves(game) == ["6H heap:6 -> heap:6 bottom"]
    assert game.history == [Move.parse("AS heap:1 -> heap:1 bottom")]
    game.play(Move.parse("6H heap:6 -> heap:6 bottom"))
    assert moves(game) == ["6C heap:6 -> heap:6 bottom"]


def test_af05_under_rules_version_1_beginning_afresh_was_the_players_move() -> None:
    game = position({1: "AH AC AD | AS", 6: "6S | 6D 6C 6H"}, current=1, rules=1)
    game.play(Move.parse("AS heap:1 -> heap:1 bottom"))
    assert moves(game) == ["afresh"]
    events = game.play(AFRESH)
    assert [str(event) for event in events] == ["begin afresh from heap:6", "6H turned on heap:6"]


def test_af06_the_first_uncompleted_heap_is_the_first_short_of_its_four() -> None:
    game = position({1: "AH AC AD | AS", 3: "3S 3H 3D | 3C", 9: "9S | 9D 9C 9H"}, current=1)
    game.play(Move.parse("AS heap:1 -> heap:1 bottom"))
    assert game.current == 2 and pile(game, 3) == ["3S", "3H", "3D", "3C"]
    assert moves(game) == ["3C heap:3 -> heap:3 bottom"]


# -- automatic steps ----------------------------------------------------------------------


def test_af07_the_top_card_of_heap_1_is_turned_at_the_start() -> None:
    game = AllFours(SEED)
    assert [str(event) for event in game.opening_events] == [
        "52 cards dealt face down, thirteen heaps of four",
        "4S turned on heap:1",
    ]
    assert game.history == [] and game.turned and game.current == 0


def test_af08_after_placing_the_top_card_of_the_heap_fed_is_turned() -> None:
    game = AllFours(SEED)
    events = game.play(Move.parse("4S heap:1 -> heap:4 bottom"))
    assert [str(event) for event in events] == ["4S placed under heap:4", "4D turned on heap:4"]
    assert events[1].cards == (Card.parse("4D"),)
    assert moves(game) == ["4D heap:4 -> heap:4 bottom"]


def test_af09_standstill_when_the_heap_fed_has_no_face_down_card() -> None:
    game = position({1: "AH AC AD | 5D", 5: "5S 5H 5C | AS", 9: "9S | 9D 9C 9H"}, current=1)
    game.play(Move.parse("5D heap:1 -> heap:5 bottom"))
    events = game.play(Move.parse("AS heap:5 -> heap:1 bottom"))
    assert [str(event) for event in events][:2] == [
        "AS placed under heap:1",
        "standstill: heap:1 has no face-down card",
    ]


def test_af09_a_standstill_waits_under_rules_version_1() -> None:
    game = position(
        {1: "AH AC AD | 5D", 5: "5S 5H 5C | AS", 9: "9S | 9D 9C 9H"}, current=1, rules=1
    )
    game.play(Move.parse("5D heap:1 -> heap:5 bottom"))
    game.play(Move.parse("AS heap:5 -> heap:1 bottom"))
    assert moves(game) == ["afresh"]
    assert refusal(game, "AS heap:1 -> heap:1 bottom") == (
        "standstill: heap:1 has no face-down card to turn; begin afresh or resign"
    )


def test_af10_at_the_next_standstill_cards_on_their_own_heap_win() -> None:
    game = position(
        {2: "2S 2H 2D |", 3: "3S 3H 3D 3C | 2C", 7: "7S 7H | 7D 7C"}, current=3, afresh_used=True
    )
    events = game.play(Move.parse("2C heap:3 -> heap:2 bottom"))
    assert [str(event) for event in events][-1] == "turned in place on heap:7: 7D 7C"
    assert pile(game, 7) == ["7S", "7H", "7D", "7C"]
    assert game.outcome().status is Status.WON


def test_af10_at_the_next_standstill_a_card_off_its_heap_loses() -> None:
    game = position(
        {2: "2S 2H 2D |", 3: "3S 3H 3D 3C | 2C", 7: "7S 7H | 7D 8C", 8: "8S 8H 8D | 7C"},
        current=3,
        afresh_used=True,
    )
    events = game.play(Move.parse("2C heap:3 -> heap:2 bottom"))
    assert {card for event in events for card in event.cards} == set(cards("2C 7D 8C 7C"))
    assert pile(game, 8) == ["8S", "8H", "8D", "7C"]
    outcome = game.outcome()
    assert outcome.status is Status.LOST
    assert outcome.reason.endswith("off their proper heap: 8C on heap:7, 7C on heap:8")
    assert "the game is over" in refusal(game, "afresh")


# -- redeals ------------------------------------------------------------------------------


@pytest.mark.parametrize("action", [REDEAL, TURN])
def test_af11_no_redeal_and_no_turning_by_hand(action: Move) -> None:
    game = AllFours(SEED)
    assert refusal(game, str(action)).startswith(f"All Fours has no {action}")


# -- end of the game ----------------------------------------------------------------------


def test_af12_won_at_the_first_standstill_when_every_card_is_placed() -> None:
    game = position({1: "AH AC AD | AS"}, current=1)
    game.play(Move.parse("AS heap:1 -> heap:1 bottom"))
    assert game.outcome().status is Status.WON
    assert game.legal_moves() == [] and not game.afresh_used
    assert game.view().notes[0] == "every card is placed under its heap"


def test_af12_the_player_may_resign_at_any_time() -> None:
    game = position({1: "AH AC AD AS |", 5: "5S 5H | 5D 5C"}, current=1, turned=False)
    assert moves(game) == ["afresh"] and RESIGN in game.legal_moves()
    game.play(RESIGN)
    assert game.outcome().status is Status.RESIGNED


# -- progress -----------------------------------------------------------------------------


def test_af13_home_is_placed_cards_and_at_the_end_cards_turned_on_their_own_heap() -> None:
    game = position({4: "| 4S 4H 4C 9C 4D", 9: "9S 9H 9D |"}, current=4)
    assert game.foundation_count() == 52 - 5
    game.play(Move.parse("4D heap:4 -> heap:4 bottom"))
    assert game.foundation_count() == 52 - 4
    assert game.view().notes[-1].startswith("placed under: heap:1 x4")
    late = position(
        {2: "2S 2H 2D |", 3: "3S 3H 3D 3C | 2C", 7: "7S 7H | 7D 8C", 8: "8S 8H 8D | 7C"},
        current=3,
        afresh_used=True,
    )
    late.play(Move.parse("2C heap:3 -> heap:2 bottom"))
    assert late.progress().on_foundations == 52 - 2
