"""Properties every rule set keeps over many seeds and random legal play to the end.

- no card is lost or duplicated at any step;
- every listed legal move is accepted, and moves not listed are refused with a reason, leaving
  the game untouched;
- no view, legal move or event shows a card before it is turned: a card becomes visible only
  when an event announces it, and the stock is never visible;
- a redeal is never left as the only thing to do (RULINGS principle 6: the engine makes it);
- progress reaches every card exactly when the game is won;
- replay of the move log reproduces every state and the outcome;
- every game ends (won, lost, or given up by a player whose moves only shuffle cards about).
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.deal import SEED_MAX
from engine.errors import IllegalMoveError
from engine.game import Game
from engine.moves import REDEALS, Move
from engine.players import GreedyPlayer, RandomPlayer
from engine.registry import RULE_SET_NAMES, find_rule_set
from engine.replay import MoveLog, replay, replay_trusted
from engine.view import Status

DEALT_AGAIN = {"redeal", "gathered", "gather", "afresh"}
"""Event kinds of the rule sets' redeals, after which cards shown earlier in the same step may lie
face down again (a turned card gathered into the stock)."""
CYCLIC = {"four-corners", "cornerstones", "cornerstones-arnold"}
"""Rule sets whose moves can shuffle cards back and forth for ever (docs/rules/*.md)."""

seeds = st.integers(min_value=0, max_value=SEED_MAX)


def card_ids(game: Game) -> Counter[int]:
    return Counter(card["id"] for pile in game.full_state()["piles"] for card in pile["cards"])


def visible_ids(game: Game) -> set[int]:
    return {card["id"] for pile in game.full_state()["piles"] for card in pile["cards"]
            if card["face_up"]}


def check_view_hides_what_is_hidden(game: Game) -> None:
    view = game.view()
    up = visible_ids(game)
    face_up_faces = {str(card) for card in view.visible_cards()}
    for pile in view.piles:
        if pile.pile.kind == "stock":
            assert all(card is None for card in pile.cards), f"stock shown: {pile}"
    for move in view.legal_moves:
        if move.card is not None:
            assert str(move.card) in face_up_faces, f"{move} names a card not in view"
    state_piles = game.full_state()["piles"]
    for pile_view, pile_state in zip(view.piles, state_piles, strict=True):
        for shown, card in zip(pile_view.cards, pile_state["cards"], strict=True):
            assert (shown is not None) == card["face_up"]
            if shown is not None:
                assert card["id"] in up


def wrong_moves(game: Game, rng: random.Random, count: int) -> list[Move]:
    """Plausible moves that are not legal: a visible card sent to a pile it may not go to."""
    view = game.view()
    legal = set(game.legal_moves())
    piles = [pile.pile for pile in view.piles]
    tries = []
    for pile in view.piles:
        if pile.top is not None:
            for target in piles:
                if target != pile.pile:
                    tries.append(Move(pile.pile, target, pile.top))
    rng.shuffle(tries)
    return [move for move in tries if move not in legal][:count]


def play_checked(name: str, seed: int, rng: random.Random, greedy: bool) -> Game:
    game = find_rule_set(name)(seed)
    total = card_ids(game)
    assert sorted(total) == list(range(game.packs * 52)), "the deal holds every card once"
    assert all(count == 1 for count in total.values())
    player = (GreedyPlayer if greedy else RandomPlayer)(rng)
    states = [game.full_state()]
    steps = 0
    while not game.outcome().is_over:
        steps += 1
        assert steps < 20_000, f"{name} seed {seed} has not ended"
        check_view_hides_what_is_hidden(game)
        legal = game.legal_moves()
        assert legal, "a game in progress has moves"
        assert not (len(legal) == 2 and legal[0] in REDEALS), \
            f"{legal[0]} is the only thing left to do: the engine makes it (principle 6)"
        assert game.progress().on_foundations < game.total_cards, "all home, yet not won"
        assert len(set(legal)) == len(legal), f"duplicate legal moves: {legal}"
        for probe in rng.sample(legal, min(2, len(legal))):
            trial = game.copy()
            trial.play(probe)
        before = game.full_state()
        for wrong in wrong_moves(game, rng, 2):
            with pytest.raises(IllegalMoveError) as refused:
                game.play(wrong)
            assert refused.value.reason.strip()
            assert game.full_state() == before, "a refused move changed the game"
        move = player.choose_in(game)
        previously_shown = visible_ids(game)
        events = game.play(move)
        now_shown = visible_ids(game)
        event_cards = {card.id for event in events for card in event.cards}
        last_deal = max((index for index, event in enumerate(events)
                         if event.kind in DEALT_AGAIN), default=-1)
        shown_since = {card.id for event in events[last_deal + 1:] for card in event.cards}
        assert shown_since <= now_shown, f"{move}: an event shows a card that is not face up"
        newly = now_shown - previously_shown
        assert newly <= event_cards, f"{move}: cards turned up without an event saying so"
        assert card_ids(game) == total, f"{move}: a card was lost or duplicated"
        states.append(game.full_state())
    outcome = game.outcome()
    progress = game.progress()
    assert (progress.on_foundations == progress.total) == (outcome.status is Status.WON)
    if outcome.status is Status.RESIGNED:
        assert name in CYCLIC, f"{name} should end by itself"
    log = MoveLog.of(game)
    assert replay(MoveLog.from_json(log.to_json())).full_state() == states[-1]
    trusted = find_rule_set(name)(seed)
    for index, move in enumerate(game.history):
        trusted.push(move)
        assert trusted.full_state() == states[index + 1]
    assert replay_trusted(log).outcome() == outcome
    return game


@pytest.mark.parametrize("name", RULE_SET_NAMES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=seeds, choice_seed=st.integers(0, 2**32), greedy=st.booleans())
def test_random_play_keeps_every_property(name: str, seed: int, choice_seed: int,
                                          greedy: bool) -> None:
    play_checked(name, seed, random.Random(choice_seed), greedy)


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_views_of_one_deal_agree_after_replay(name: str) -> None:
    game = play_checked(name, 20261122, random.Random(7), greedy=True)
    again = replay(MoveLog.of(game))
    assert again.view() == game.view()
    assert again.progress() == game.progress()
