"""The solver (engine/solver/): its answers on known deals and positions
(tests/engine/solver_cases.json), every win replayed through the engine, the table of positions
seen checked against the plain exhaustive search, and its values' text forms.

Budgets here are in positions searched (nodes), never seconds, so that the answers do not depend
on the machine; the whole file runs in a few seconds.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from engine.game import Game
from engine.moves import Move
from engine.registry import find_rule_set
from engine.solver import (
    FULL_KNOWLEDGE,
    Budget,
    Result,
    SolverError,
    Verdict,
    check_line,
    ordered_moves,
)
from engine.solver.search import solve
from engine.view import Status
from tests.engine.make_solver_cases import shuffled_piles

CASES: list[dict[str, Any]] = json.loads(
    (Path(__file__).with_name("solver_cases.json")).read_text()
)["cases"]


def game_of(case: dict[str, Any]) -> Game:
    if "position" in case:
        return Game.from_position(case["position"])
    return find_rule_set(case["rule_set"])(case["seed"])


def case_id(case: dict[str, Any]) -> str:
    return f"{case['rule_set']}-{case.get('seed', 'position')}-{case['result']}"


def replays_to_a_win(game: Game, line: tuple[Move, ...]) -> bool:
    """The line played with the validated ``play`` on a fresh game set up independently of the
    solver: dealt again (or set up from the position again)."""
    fresh = type(game)(game.seed) if game.seed is not None else Game.from_position(game.position())
    for move in fresh.history:
        raise AssertionError(f"a fresh game has no moves, not {move}")
    for move in line:
        fresh.play(move)
    return fresh.outcome().status is Status.WON


@pytest.mark.parametrize("case", CASES, ids=list(map(case_id, CASES)))
def test_known_cases(case: dict[str, Any]) -> None:
    game = game_of(case)
    verdict = solve(game, Budget(nodes=case["nodes"]))
    assert (str(verdict.result), len(verdict.line)) == (case["result"], case["moves"])
    assert verdict.effort.nodes <= case["nodes"]
    assert verdict.effort.positions <= verdict.effort.nodes, "distinct positions are reached"
    if verdict.result is Result.WON:
        assert replays_to_a_win(game, verdict.line)


def test_a_search_without_repeats_reaches_as_many_distinct_positions_as_it_makes_moves() -> None:
    """All Fours has one move at a time (resigning aside), so no position comes twice: the
    start, which no move reaches, is not counted among the positions reached."""
    lost = solve(find_rule_set("all-fours")(1))
    won = solve(find_rule_set("all-fours")(3))
    assert lost.result is Result.LOST and won.result is Result.WON
    for verdict in (lost, won):
        assert verdict.effort.positions == verdict.effort.nodes > 0
        assert (
            f"{verdict.effort.nodes:,} positions reached ({verdict.effort.nodes:,} of them "
            "distinct)"
        ) in str(verdict)


def test_the_fixture_covers_every_rule_set_and_every_verdict() -> None:
    assert {case["rule_set"] for case in CASES} == {
        "four-corners",
        "cornerstones",
        "cornerstones-arnold",
        "puss-in-the-corner",
        "hidden-cards",
        "all-fours",
        "octagon",
    }
    assert {case["result"] for case in CASES} == {"won", "lost", "unknown"}
    assert any("position" in case and case["result"] == "lost" for case in CASES)


def test_the_game_searched_is_left_as_it_was() -> None:
    game = find_rule_set("cornerstones-arnold")(2)
    game.play(game.legal_moves()[0])
    before = game.position()
    verdict = solve(game, Budget(nodes=5000))
    assert game.position() == before and len(game.history) == 1
    if verdict.result is Result.WON:
        check_line(game, verdict.line)


def test_a_game_without_undo_records_is_searched_from_its_position() -> None:
    game = find_rule_set("hidden-cards")(2, undo=False)
    verdict = solve(game)
    assert verdict.result is Result.WON and replays_to_a_win(game, verdict.line)


def test_a_line_the_engine_refuses_or_that_does_not_win_is_never_reported() -> None:
    game = find_rule_set("all-fours")(3)
    line = solve(game).line
    with pytest.raises(SolverError, match="does not win"):
        check_line(game, line[:-1])
    with pytest.raises(SolverError, match="refuses"):
        check_line(game, line[1:])


def test_a_won_position_is_won_in_no_moves() -> None:
    game = find_rule_set("all-fours")(3)
    for move in solve(game).line:
        game.play(move)
    verdict = solve(game)
    assert verdict.result is Result.WON and verdict.line == () and verdict.effort.nodes == 0


def test_a_node_budget_stops_the_search_unknown() -> None:
    verdict = solve(find_rule_set("four-corners")(1), Budget(nodes=700))
    assert verdict.result is Result.UNKNOWN and verdict.effort.nodes == 700
    assert not verdict.is_decided and "budget (700 positions)" in str(verdict)


@pytest.mark.parametrize("name", ["hidden-cards", "all-fours"])
def test_the_table_agrees_with_the_plain_search_on_whole_deals(name: str) -> None:
    """Hidden Cards and All Fours have few choices: both searches are exhaustive on whole
    deals, and must agree on every one."""
    results = set()
    for seed in range(1, 13):
        game = find_rule_set(name)(seed)
        with_table, plain = solve(game), solve(game, table=False)
        assert with_table.result is plain.result, seed
        assert with_table.is_decided
        results.add(with_table.result)
    assert results == {Result.WON, Result.LOST}


def test_the_table_agrees_with_the_plain_search_near_the_end() -> None:
    """Positions a few cards from the end of a Cornerstones (Arnold) deal, their piles shuffled
    (so that some are lost): the table of positions seen never loses a win the plain search,
    which remembers only its current path, finds, nor finds one it does not. The plain search
    can take exponentially long (every order of every path): positions it does not decide in
    20,000 moves are left out."""
    start = next(case["position"] for case in CASES if "position" in case)
    rng = random.Random(12)
    results = []
    for _ in range(40):
        game = Game.from_position(shuffled_piles(start, rng))
        with_table, plain = solve(game), solve(game, Budget(nodes=20_000), table=False)
        assert with_table.is_decided
        if not plain.is_decided:
            continue
        assert with_table.result is plain.result
        if with_table.result is Result.WON:
            assert replays_to_a_win(game, with_table.line)
        results.append(with_table.result)
    assert results.count(Result.WON) >= 5 and results.count(Result.LOST) >= 5


def test_moves_home_come_first_and_resign_is_never_searched() -> None:
    game = find_rule_set("four-corners")(1)
    while not any(
        move.target and move.target.kind in ("ace", "king") for move in game.legal_moves()
    ):
        game.play(game.legal_moves()[0])
    moves = ordered_moves(game)
    kinds = [move.target.kind if move.target else move.action for move in moves]
    home = [kind in ("ace", "king", "foundation") for kind in kinds]
    assert home == sorted(home, reverse=True)
    assert all(not move.is_resign for move in moves)
    assert set(moves) | {Move.act("resign")} == set(game.legal_moves())


def test_state_key_tells_positions_apart_and_meets_at_one_position_by_two_orders() -> None:
    game = find_rule_set("hidden-cards")(1)
    again = Game.from_position(game.position())
    assert game.state_key() == again.state_key()
    hash(game.state_key())
    game.play(game.legal_moves()[0])
    assert game.state_key() != again.state_key()
    game.pop()
    assert game.state_key() == again.state_key()


def test_verdicts_have_text_and_json_forms_that_say_what_winnable_means() -> None:
    verdict = solve(find_rule_set("all-fours")(3))
    assert str(verdict).startswith("won: a win in 51 moves; ")
    data = verdict.to_json()
    assert data["result"] == "won" and data["moves"] == 51 == len(data["line"])
    assert Move.parse(data["line"][0]) == verdict.line[0]
    assert data["knowledge"] == FULL_KNOWLEDGE and "upper bound" in FULL_KNOWLEDGE
    lost = solve(find_rule_set("all-fours")(1))
    assert str(lost).startswith("lost: no win is possible")
    with pytest.raises(ValueError, match="only a won verdict"):
        Verdict(Result.LOST, verdict.line, lost.effort, lost.budget)
    with pytest.raises(ValueError):
        Budget(seconds=0)
    with pytest.raises(ValueError):
        Budget(nodes=0)
    assert str(Budget(seconds=2, nodes=1000)) == "2 s or 1,000 positions"


@pytest.mark.parametrize(
    "name",
    [
        "four-corners",
        "cornerstones",
        "cornerstones-arnold",
        "puss-in-the-corner",
        "hidden-cards",
        "all-fours",
        "octagon",
    ],
)
def test_state_key_is_equal_exactly_when_positions_are(name: str) -> None:
    """The table of positions seen is sound only if two positions share a key exactly when
    they are the same position (their JSON forms, the count of moves aside): random walks with
    undo, every position reached compared both ways."""
    rng = random.Random(name)
    by_key: dict[Any, str] = {}
    by_position: dict[str, Any] = {}
    for seed in range(3):
        game = find_rule_set(name)(seed)
        for _ in range(150):
            moves = [move for move in game.legal_moves() if not move.is_resign]
            if not moves or rng.random() < 0.15 and game.history:
                if not game.history:
                    break
                game.pop()
            else:
                game.push(rng.choice(moves))
            data = game.position().to_json()
            del data["moves"]
            text = json.dumps(data, sort_keys=True)
            key = game.state_key()
            assert by_key.setdefault(key, text) == text
            assert by_position.setdefault(text, key) == key
    assert len(by_key) > 50
