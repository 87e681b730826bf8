"""The live verdict in ``patience-race play`` (clients/live_verdict.py): after each move, the
solver's word on the position, said once searched in a thread of its own; a newer move
supersedes a search under way; what earlier searches settle is said without one."""

from __future__ import annotations

import threading
from collections.abc import Callable

from clients.live_verdict import LiveVerdict
from clients.play import Session
from engine.game import Game
from engine.hints import LIVE_WORDS
from engine.moves import Move
from engine.registry import find_rule_set
from engine.solver import Budget, Effort, Result, Verdict, solve

WON, LOST = 2, 1
"""Hidden Cards deals the solver decides in milliseconds (tests/engine/solver_cases.json)."""
WAIT_S = 30.0


def scripted(lines: list[str], session: list[Session]) -> Callable[[str], str]:
    """A player who types ``lines`` one by one, each once the live verdict on the position
    before it has been said (then "resign")."""

    def read(prompt: str) -> str:
        live = session[0].live
        assert live is not None and live.wait(WAIT_S), "the live verdict came"
        return lines.pop(0) if lines else "resign"

    return read


def play(seed: int, lines: list[str]) -> list[str]:
    output: list[str] = []
    session: list[Session] = []
    session.append(
        Session(
            find_rule_set("hidden-cards")(seed),
            scripted(lines, session),
            output.append,
            False,
            live_verdict=True,
        )
    )
    session[0].run()
    return output


def test_after_each_move_the_terminal_says_a_win_is_still_possible() -> None:
    game = find_rule_set("hidden-cards")(WON)
    line = solve(game, Budget(nodes=20_000)).line
    output = play(WON, [str(line[0]), "verdict", "1"])
    said = [text for text in output if text.startswith("solver, ")]
    assert said[:3] == [
        "solver, after 0 moves: still winnable",
        "solver, after 1 move: still winnable",
        "solver, after 1 move: still winnable",
    ]  # (the second: asked again)
    assert any(text.startswith("solver, after 2 moves: ") for text in said)
    assert all(text.split(": ")[1] in LIVE_WORDS.values() for text in said)
    assert not any("heap" in text for text in said), "the words only: no move, no card"


def test_once_no_win_is_possible_the_terminal_says_so_after_every_move() -> None:
    output = play(LOST, ["1", "1"])
    said = [text for text in output if text.startswith("solver, ")]
    assert said == [
        f"solver, after {moves} move{'s' * (moves != 1)}: no win is possible from here any more"
        for moves in (0, 1, 2)
    ]


def test_without_the_live_verdict_nothing_is_searched() -> None:
    output: list[str] = []
    lines = ["verdict", "1"]
    session = Session(
        find_rule_set("hidden-cards")(WON),
        lambda _: lines.pop(0) if lines else "resign",
        output.append,
        False,
    )
    session.run()
    assert session.live is None and not any(text.startswith("solver, ") for text in output)
    assert "the live verdict is off ('hint' searches now)" in output


class Stalling:
    """A search that answers "won" at once, but for the position after 0 moves, whose search
    runs (reporting progress) until it is stopped."""

    def __init__(self) -> None:
        self.searched: list[int] = []
        self.started, self.stopped = threading.Event(), threading.Event()

    def __call__(
        self, game: Game, budget: Budget, *, progress: Callable[[Effort], None] | None = None
    ) -> Verdict:
        assert progress is not None
        self.searched.append(len(game.history))
        self.started.set()
        effort = Effort(1, 1, 0.0)
        if not game.history:
            try:
                for _ in range(1000):
                    progress(effort)
                    threading.Event().wait(0.01)
            except BaseException:
                self.stopped.set()
                raise
        return Verdict(Result.WON if game.history else Result.UNKNOWN, (), effort, budget)


def test_a_newer_move_supersedes_the_search_under_way() -> None:
    said: list[tuple[int, Result]] = []
    search = Stalling()
    live = LiveVerdict(lambda moves, result: said.append((moves, result)), search=search)
    game = find_rule_set("puss-in-the-corner")(3)
    try:
        live.position(game)
        assert search.started.wait(WAIT_S)
        game.play(game.legal_moves()[0])
        live.position(game)
        assert live.wait(WAIT_S)
        assert search.stopped.is_set(), "the older search was stopped"
        assert said == [(1, Result.WON)], "only the newest position's verdict is said"
        assert search.searched == [0, 1]
    finally:
        live.close()


def test_a_loss_found_for_a_position_left_behind_settles_the_newer_one() -> None:
    """A search's answer for a position the player has left is not said; but a loss proved
    there is a loss of every position after it, said without a search."""
    started, release = threading.Event(), threading.Event()
    searched: list[int] = []

    def lost_slowly(
        game: Game, budget: Budget, *, progress: Callable[[Effort], None] | None = None
    ) -> Verdict:
        searched.append(len(game.history))
        started.set()
        release.wait(WAIT_S)
        return Verdict(Result.LOST, (), Effort(1, 1, 0.0), budget)

    said: list[tuple[int, Result]] = []
    live = LiveVerdict(lambda moves, result: said.append((moves, result)), search=lost_slowly)
    game = find_rule_set("hidden-cards")(LOST)
    try:
        live.position(game)
        assert started.wait(WAIT_S)
        for _ in range(2):
            game.play(game.legal_moves()[0])
            live.position(game)
        release.set()
        assert live.wait(WAIT_S)
        assert said == [(2, Result.LOST)] and searched == [0]
        game.play(Move.parse(str(game.legal_moves()[0])))
        live.position(game)
        assert said[-1] == (3, Result.LOST) and searched == [0]
    finally:
        live.close()
