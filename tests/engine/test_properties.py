"""Properties every rule set keeps over many seeds and random legal play to the end.

- no card is lost or duplicated at any step;
- every listed legal move is accepted, and moves not listed are refused with a reason, leaving
  the game untouched;
- no view, legal move or event shows a card before it is turned: a card becomes visible only
  when an event announces it, and the stock is never visible;
- a redeal is never left as the only thing to do (RULINGS principle 6: the engine makes it);
- progress reaches every card exactly when the game is won;
- replay of the move log reproduces every state and the outcome;
- the piles the engine says a move changed are exactly those that differ between the tables
  before and after it, under every rules version;
- every game ends (won, lost, or given up by a player whose moves only shuffle cards about);
- a position written and read back is the same game, and plays on the same (docs/position.md);
- ``pop`` undoes ``push`` exactly, and ``changed_piles`` stays right across pops.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.deal import SEED_MAX
from engine.errors import IllegalMoveError
from engine.game import RULES_VERSIONS, Game
from engine.moves import REDEALS, Move
from engine.players import GreedyPlayer, RandomPlayer
from engine.position import Position
from engine.registry import RULE_SET_NAMES, find_rule_set
from engine.replay import MoveLog, replay, replay_trusted
from engine.view import EventKind, Status

DEALT_AGAIN = {EventKind.REDEAL, EventKind.AFRESH}
"""Event kinds of the rule sets' redeals, after which cards shown earlier in the same step may lie
face down again (a turned card gathered into the stock)."""
CYCLIC = {"four-corners", "cornerstones", "cornerstones-arnold"}
"""Rule sets whose moves can shuffle cards back and forth for ever (docs/rules/*.md)."""

seeds = st.integers(min_value=0, max_value=SEED_MAX)


def card_ids(game: Game) -> Counter[int]:
    return Counter(card["id"] for pile in game.full_state()["piles"] for card in pile["cards"])


def visible_ids(game: Game) -> set[int]:
    return {
        card["id"]
        for pile in game.full_state()["piles"]
        for card in pile["cards"]
        if card["face_up"]
    }


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
        assert not (len(legal) == 2 and legal[0] in REDEALS), (
            f"{legal[0]} is the only thing left to do: the engine makes it (principle 6)"
        )
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
        last_deal = max(
            (index for index, event in enumerate(events) if event.kind in DEALT_AGAIN), default=-1
        )
        shown_since = {card.id for event in events[last_deal + 1 :] for card in event.cards}
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
def test_random_play_keeps_every_property(
    name: str, seed: int, choice_seed: int, greedy: bool
) -> None:
    play_checked(name, seed, random.Random(choice_seed), greedy)


@pytest.mark.parametrize("name", RULE_SET_NAMES)
def test_views_of_one_deal_agree_after_replay(name: str) -> None:
    game = play_checked(name, 20261122, random.Random(7), greedy=True)
    again = replay(MoveLog.of(game))
    assert again.view() == game.view()
    assert again.progress() == game.progress()


@pytest.mark.parametrize("name", RULE_SET_NAMES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=seeds,
    choice_seed=st.integers(0, 2**32),
    greedy=st.booleans(),
    rules=st.sampled_from(RULES_VERSIONS),
)
def test_changed_piles_are_the_piles_that_differ(
    name: str, seed: int, choice_seed: int, greedy: bool, rules: int
) -> None:
    """The server sends only ``changed_piles()`` after a move: comparing whole tables, as it
    did before, must find the same piles, forced steps (deals, redeals, turns) included."""
    game = find_rule_set(name)(seed, rules=rules)
    assert game.changed_piles() == []
    player = (GreedyPlayer if greedy else RandomPlayer)(random.Random(choice_seed))
    table = game.table()
    while not game.outcome().is_over:
        move = player.choose_in(game)
        game.play(move)
        after = game.table()
        differ = [pile for old, pile in zip(table, after, strict=True) if old != pile]
        assert game.changed_piles() == differ, f"{name} seed {seed}: {move}"
        table = after


@pytest.mark.parametrize("name", RULE_SET_NAMES)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=seeds,
    choice_seed=st.integers(0, 2**32),
    greedy=st.booleans(),
    rules=st.sampled_from(RULES_VERSIONS),
    resume_at=st.floats(0, 1),
)
def test_a_position_read_back_is_the_same_game(
    name: str, seed: int, choice_seed: int, greedy: bool, rules: int, resume_at: float
) -> None:
    """At every step, the position written as text and read back gives the same position,
    legal moves, view and outcome; a game set up from one position partway plays on exactly as
    the original: the same events, positions and outcome."""
    game = find_rule_set(name)(seed, rules=rules)
    player = (GreedyPlayer if greedy else RandomPlayer)(random.Random(choice_seed))
    positions, moves = [], []
    while True:
        position = game.position()
        again = Game.from_position(Position.parse(str(position)))
        assert again.position() == position
        assert again.legal_moves() == game.legal_moves()
        assert again.view() == game.view() and again.outcome() == game.outcome()
        positions.append(position)
        if game.outcome().is_over:
            break
        moves.append(player.choose_in(game))
        game.play(moves[-1])
    start = int(resume_at * (len(positions) - 1))
    resumed = Game.from_position(positions[start].to_json())
    replayed = find_rule_set(name)(seed, rules=rules)
    for move in moves[:start]:
        replayed.push(move)
    for index, move in enumerate(moves[start:], start=start):
        events = resumed.play(move)
        assert [str(event) for event in events] == [str(event) for event in replayed.play(move)]
        assert resumed.position() == positions[index + 1]
    assert resumed.outcome() == game.outcome() and resumed.view() == game.view()


@pytest.mark.parametrize("name", RULE_SET_NAMES)
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=seeds,
    choice_seed=st.integers(0, 2**32),
    rules=st.sampled_from(RULES_VERSIONS),
    from_position=st.booleans(),
)
def test_pop_undoes_push_and_changed_piles_stay_right(
    name: str, seed: int, choice_seed: int, rules: int, from_position: bool
) -> None:
    """A random walk of pushes and pops: each pop returns exactly to the position before the
    move it undoes (forced steps and redeals included), legal moves and outcome too; and
    ``changed_piles``, asked now and then, gives the piles that differ from the table it last
    reported, whatever pushes and pops came between."""
    rng = random.Random(choice_seed)
    game = find_rule_set(name)(seed, rules=rules)
    if from_position:
        game = Game.from_position(game.position())
    reported = game.table()
    before: list[tuple[Position, list[Move]]] = []
    for _ in range(300):
        if before and (game.outcome().is_over or rng.random() < 0.3):
            position, legal = before.pop()
            game.pop()
            assert game.position() == position, f"{name} seed {seed}: pop"
            assert game.legal_moves() == legal
        else:
            before.append((game.position(), game.legal_moves()))
            moves = [move for move in before[-1][1] if not move.is_resign] or before[-1][1]
            game.push(rng.choice(moves))
        if rng.random() < 0.5:
            table = game.table()
            assert game.changed_piles() == [
                pile for old, pile in zip(reported, table, strict=True) if old != pile
            ]
            reported = table
    while before:
        position, _ = before.pop()
        game.pop()
        assert game.position() == position
    with pytest.raises(IndexError):
        game.pop()
