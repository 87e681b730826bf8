"""Hints over the protocol (issue 12): for practice alone only, searched in the server's solver
process, never on its event loop; refused during a race with others, on a secret deal and on
the daily deal, with ``no_hints``.

Every test runs on SQLite and, when PATIENCE_RACE_TEST_POSTGRES_URL is set, on PostgreSQL.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, cast

import pytest
import pytest_asyncio
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from clients.sdk import RaceClient, RequestRefused, StillWaiting
from engine.moves import Move
from engine.registry import find_rule_set
from engine.solver import Budget, Result, core_description, core_name, solve
from engine.solver.compiled import RULE_SETS as COMPILED_RULE_SETS
from server.core.errors import Refusal
from server.core.hint_rules import refusal
from server.core.race import Race
from server.rooms.solver import SolverPool
from server.rooms.solver_process import NICENESS, pid_after
from server.rooms.solver_processes import SolverProcesses
from server.rooms.solver_turns import Turns
from server.settings import Settings
from server.storage.writer import Writer
from tests.server.attacks import Target, run_attack
from tests.server.core.test_race import new_race
from tests.server.test_server import Server, make_settings, start_server, stop_server
from wire.protocol import LiveVerdictGiven, RaceFinished, RaceStarted, YourView

Sessions = async_sessionmaker[AsyncSession]

RULE_SET, WON, LOST = "hidden-cards", 2, 1
"""Hidden Cards deals the solver decides in milliseconds (tests/engine/solver_cases.json)."""
FOUR_CORNERS_WON = 27 if core_name() == "compiled" else 195
"""A Four Corners deal the solver wins at once, with choices along the way: within a few
hundred positions for the compiled core, a few thousand for the Python search."""


async def practice(client: RaceClient, number: int) -> list[str]:
    """Open a room on a chosen deal and start it alone; the legal moves at the start."""
    await client.create_room(RULE_SET, deal="number", number=number)
    await client.start()
    return (await client.next_event(YourView)).view.legal_moves


async def test_a_hint_when_practising_alone_is_a_legal_move_on_a_winning_line(
    server: Server,
) -> None:
    ann = await server.client("Ann")
    legal = await practice(ann, WON)
    given = await ann.hint()
    assert given.result == "won" and given.after_moves == 0 and given.move in legal
    assert given.moves_to_win == 56 and "full knowledge" in given.knowledge
    game = find_rule_set(RULE_SET)(WON)
    assert given.move is not None
    game.play(Move.parse(given.move))
    assert solve(game, Budget(nodes=20_000)).result is Result.WON, "a win is still possible"

    ack = await ann.move(given.move)  # the server takes it, and the next hint follows on
    following = await ann.hint()
    assert following.after_moves == 1 and following.move in ack.legal_moves


async def test_a_hint_on_a_lost_deal_says_no_win_is_possible(server: Server) -> None:
    ann = await server.client("Ann")
    await practice(ann, LOST)
    given = await ann.hint()
    assert (given.result, given.move) == ("lost", None)
    assert given.message == "no win is possible from here any more"


async def test_a_players_hints_past_the_limit_are_refused_over_the_connection(
    sessions: Sessions, database_url: str
) -> None:
    """Over a live connection: past ``hints_per_player_per_min`` a hint is ``rate_limited``, and
    the connection, the race and the moves go on."""
    # A burst of one, and the next hint allowed 100 minutes later: however slowly a loaded
    # machine answers the first, the second comes before the limit lets another through.
    running = await start_server(make_settings(database_url, hints_per_player_per_min=0.01))
    try:
        ann = await running.client("Ann")
        legal = await practice(ann, WON)
        assert (await ann.hint()).result == "won"
        with pytest.raises(RequestRefused) as limited:
            await ann.hint()
        assert limited.value.code == "rate_limited", limited.value.message
        ack = await ann.move(legal[0])
        assert ack.moves == 1
    finally:
        await stop_server(running)


async def refused(client: RaceClient) -> str:
    with pytest.raises(RequestRefused) as refusal_raised:
        await client.hint()
    assert refusal_raised.value.code == "no_hints", refusal_raised.value.message
    return refusal_raised.value.message


async def test_hints_are_refused_during_a_race_with_others(server: Server) -> None:
    ann, bob = await server.client("Ann"), await server.client("Bob")
    room = await ann.create_room(RULE_SET, deal="number", number=WON)
    await bob.join(room.code)
    await ann.ready()
    await bob.ready()
    await ann.next_event(RaceStarted)
    assert "race with others" in await refused(ann)
    assert "race with others" in await refused(bob)


async def test_hints_are_refused_on_the_daily_deal_and_on_a_secret_deal(server: Server) -> None:
    ann = await server.client("Ann")
    await ann.daily(RULE_SET)
    assert "daily deal" in await refused(ann)
    await ann.resign()
    await ann.leave()
    await ann.create_room(RULE_SET)  # a secret deal, started alone: ranked
    await ann.start()
    await ann.next_event(YourView)
    assert "secret deal" in await refused(ann)


def ann_alone(rule_set: str, seed: int, countdown_s: float = 3.0) -> Race:
    """A race of two seats on a chosen deal number, Ann its host and alone in it."""
    return new_race(
        rule_set,
        race_id="r",
        code="ABCD",
        seed=seed,
        deal_kind="number",
        seats_max=2,
        host_id="ann",
        host_name="Ann",
        countdown_s=countdown_s,
    )


def test_the_rule_before_the_start_and_for_someone_not_racing() -> None:
    race = ann_alone(RULE_SET, WON)
    before = refusal(race, "ann")
    assert before is not None and before.code == "not_racing"
    stranger = refusal(race, "bob")
    assert stranger is not None and stranger.code == "not_in_room"


async def record_with_verdict(client: RaceClient, race_id: str) -> dict[str, Any]:
    """The race record once the solver's verdict on its deal is stored (searched after the
    race, in the background). Asked twice a second: faster, on a busy machine where the search
    takes long, the asking would use up the address's allowance of reads (429)."""
    for _ in range(120):
        record = await client.race_record(race_id)
        if record["solver"] is not None:
            return record
        await asyncio.sleep(0.5)
    raise AssertionError("the solver's verdict never came")


@pytest_asyncio.fixture
async def searching_server(sessions: Sessions, database_url: str) -> AsyncIterator[Server]:
    """The server, searching each race's deal after the race (1 s)."""
    running = await start_server(make_settings(database_url, verdict_budget_s=1.0))
    try:
        yield running
    finally:
        await stop_server(running)


@pytest.mark.parametrize(("seed", "winnable"), [(3, True), (1, False)])
async def test_after_a_race_its_record_says_whether_the_deal_was_winnable(
    searching_server: Server, seed: int, winnable: bool
) -> None:
    server = searching_server
    ann, bob = await server.client("Ann"), await server.client("Bob")
    room = await ann.create_room("all-fours", deal="number", number=seed)
    await bob.join(room.code)
    await ann.ready()
    await bob.ready()
    await ann.next_event(YourView)
    await bob.next_event(YourView)
    await ann.resign()
    await bob.resign()
    finished = await ann.next_event(RaceFinished)
    record = await record_with_verdict(ann, finished.race_id)
    assert record["winnable"] is winnable
    solver = record["solver"]
    assert "full knowledge" in solver["knowledge"]
    status, line = await server.http_get(f"/api/races/{finished.race_id}/solver")
    if not winnable:
        assert (solver["result"], solver["line"], status) == ("lost", [], 404)
        return
    assert solver["result"] == "won" and solver["moves"] == len(solver["line"]) == 51
    assert status == 200 and line["name"] == "the solver"
    assert [step["move"] for step in line["steps"][1:]] == solver["line"]
    assert line["steps"][-1]["view"]["status"] == "won"


async def test_a_players_hints_are_rate_limited_and_the_solver_runs_in_another_process(
    sessions: Sessions,
) -> None:
    """...of lower priority than the server's (``solver_process.NICENESS``)."""
    settings = Settings(hints_per_player_per_min=4, hint_budget_s=0.5)  # bursts of one
    pool = SolverPool(settings, cast(Writer, None), sessions)  # (a hint writes nothing)
    race = ann_alone(RULE_SET, WON, countdown_s=0)
    race.start("ann", 0.0)
    try:
        given = await pool.hint(race, "ann", "127.0.0.1", "h", 1.0)
        assert given.result == "won"
        with pytest.raises(Refusal) as limited:
            await pool.hint(race, "ann", "127.0.0.1", "h", 2.0)
        assert limited.value.code == "rate_limited"
        assert (await pool.hint(race, "ann", "127.0.0.1", "h", 16.0)).result == "won"
        assert await pool.hints.run(os.getpid, within_s=10) != os.getpid()
        assert await pool.hints.run(os.nice, 0, within_s=10) == min(19, os.nice(0) + NICENESS)
    finally:
        pool.close()


def test_a_solver_process_ends_when_its_server_is_killed() -> None:
    """A server killed with -9 cannot stop its solver processes: they end by themselves."""
    script = (
        "import os, sys; from server.rooms.solver import SolverPool; "
        "from server.settings import Settings; import asyncio\n"
        "async def main():\n"
        "    pool = SolverPool(Settings(), None, None)\n"
        "    print(await pool.hints.run(os.getpid, within_s=30), flush=True)\n"
        "    os.kill(os.getpid(), 9)\n"
        "if __name__ == '__main__':\n"
        "    asyncio.run(main())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parents[3],
    )
    child = int(done.stdout.strip())
    for _ in range(50):
        if not Path(f"/proc/{child}").exists():
            return
        time.sleep(0.1)
    raise AssertionError(f"solver process {child} outlived its killed server")


HONEST_ADDRESS = "127.0.0.2"
"""Where the honest player connects from: another address than the flood's 127.0.0.1 (Linux
routes all of 127/8 to this machine)."""
FLOOD_HEAD_START_S = 3.0
LONGEST_FLOOD_S = 120.0


async def test_an_honest_hint_is_answered_while_one_address_floods_the_solver(
    database_url: str,
) -> None:
    """Ten identities of one address (``tests.server.attacks.solver_flood``): four finish races
    alone as fast as they can, each deal a 10 s search for the solver, and six ask for hints as
    fast as they are answered. An honest player of another address, practising alone, gets
    each hint it asks for within its limit (none ``unavailable``), while the verdicts' searches
    run; the flood's hints past its address's share are ``rate_limited``."""
    running = await start_server(make_settings(database_url, verdict_budget_s=10.0))
    loop = asyncio.get_running_loop()
    try:
        with (
            ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as child,
            multiprocessing.Manager() as manager,
        ):
            stop = manager.Event()
            flooding = loop.run_in_executor(
                child,
                run_attack,
                "solver-flood",
                Target(running.url, running.http, "", ()),
                LONGEST_FLOOD_S,
                stop,
            )
            await asyncio.sleep(FLOOD_HEAD_START_S)
            honest = await RaceClient.connect(running.url, local_addr=(HONEST_ADDRESS, 0))
            await honest.hello(name="Honest")
            legal = await practice(honest, WON)
            for _ in range(3):  # the player's burst: within its limit
                given = await honest.hint()  # (an ``unavailable`` would raise)
                assert given.result == "won" and given.move in legal
                legal = (await honest.move(given.move)).legal_moves
            _, health = await running.http_get("/healthz")
            stop.set()
            counts = await flooding
            await honest.close()
    finally:
        await stop_server(running)
    solver = health["solver"]
    assert solver["hints"]["warm"] and solver["verdicts"]["searching"] > 0, solver
    assert counts["races_finished"] > 0 and counts["reply:hint"] > 0, counts
    assert counts["error:rate_limited"] > 0, counts
    assert "error:unavailable" not in counts, counts  # its share (2 at once) before the total (4)


async def test_solver_processes_start_warm_and_start_again_when_one_dies() -> None:
    """``start`` starts every process and waits for each to be warm; a process killed fails
    the search under way (``unavailable``), and they are started and warmed again at once.
    Closed, they search nothing more."""
    processes = SolverProcesses("hints", 2, NICENESS)
    try:
        await processes.start()
        assert processes.health() == {"processes": 2, "warm": True, "searching": 0, "restarts": 0}
        pids = set(
            await asyncio.gather(*(processes.run(pid_after, 0.3, within_s=30) for _ in range(2)))
        )
        assert len(pids) == 2, "each process took a part"
        searching = asyncio.create_task(processes.run(time.sleep, 30, within_s=60))
        await asyncio.sleep(0.5)
        os.kill(min(pids), signal.SIGKILL)  # one dead: the pool is broken
        with pytest.raises(Refusal) as failed:
            await searching
        assert failed.value.code == "unavailable"
        for _ in range(300):
            if processes.warm:
                break
            await asyncio.sleep(0.1)
        assert processes.health()["restarts"] == 1 and processes.warm
        assert await processes.run(os.getpid, within_s=30) not in pids
    finally:
        processes.close()
    with pytest.raises(Refusal):
        await processes.run(os.getpid, within_s=30)


async def test_hints_waiting_for_a_process_take_turns_by_address() -> None:
    """One slot: while A's first hint is searched, A asks twice more, then C and B once each;
    once A's is answered, B's goes next, not behind A's others. A hint given up while waiting
    (C's) is skipped."""
    turns = Turns(1)
    order: list[str] = []
    release = asyncio.Event()

    async def hint(address: str, name: str) -> None:
        async with turns.turn(address):
            order.append(name)
            if name == "a1":
                await release.wait()

    first = asyncio.create_task(hint("A", "a1"))
    await asyncio.sleep(0)
    waiting = [
        asyncio.create_task(hint(address, name))
        for address, name in (("A", "a2"), ("A", "a3"), ("C", "c1"), ("B", "b1"))
    ]
    await asyncio.sleep(0)
    waiting[2].cancel()  # C gives up
    release.set()
    await asyncio.gather(first, *waiting, return_exceptions=True)
    assert order == ["a1", "b1", "a2", "a3"]
    assert turns.running == 0


def stopped_as_it_serves(tmp_path: Path, signal_number: int, **settings: str) -> tuple[str, str]:
    """``serve`` (with these ``PATIENCE_RACE_`` variables) stopped by ``signal_number``
    (SIGINT: to its whole process group, as Ctrl-C at a terminal) as soon as it says it is
    serving: that line, and what it wrote after it, to the end (every process holding its
    output, its solver processes too, has ended)."""
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "server.commands",
            "serve",
            "--port",
            "0",
            "--database-url",
            f"sqlite:///{tmp_path / 'quiet.sqlite3'}",
        ],
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        cwd=Path(__file__).resolve().parents[3],
        env=dict(os.environ, PATIENCE_RACE_WINNABLE_POOL_TARGET="0", **settings),
    )
    assert server.stderr is not None
    serving = ""
    try:
        for line in server.stderr:
            if "serving on" in line:
                serving = line
                break
        if signal_number == signal.SIGINT:
            os.killpg(server.pid, signal_number)
        else:
            server.send_signal(signal_number)
        rest = server.stderr.read()
        assert server.wait(timeout=30) == 0, rest
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.pid, signal.SIGKILL)
    return serving, rest


@pytest.mark.parametrize("signal_number", [signal.SIGINT, signal.SIGTERM])
def test_a_server_stopped_while_its_solver_processes_warm_up_stops_quietly(
    tmp_path: Path, signal_number: int
) -> None:
    """The solver processes start with the server: a Ctrl-C at the terminal or a SIGTERM,
    while they are still starting, stops it all without a traceback."""
    serving, rest = stopped_as_it_serves(tmp_path, signal_number)
    assert "Traceback" not in rest, rest
    assert "shutting down" in rest
    assert f"solver core: {core_description()}" in serving, "the start-up line says the core"


def test_the_start_up_log_says_the_python_core_when_the_compiled_one_is_turned_off(
    tmp_path: Path,
) -> None:
    serving, _ = stopped_as_it_serves(tmp_path, signal.SIGTERM, PATIENCE_RACE_SOLVER_CORE="python")
    assert "solver core: python (the compiled core is not built, or " in serving, serving


async def test_healthz_says_which_core_the_solver_searches_with(server: Server) -> None:
    _, health = await server.http_get("/healthz")
    assert health["solver"]["core"] == {
        "name": core_name(),
        "compiled_rule_sets": sorted(COMPILED_RULE_SETS),
        "description": core_description(),
    }


# -- the live verdict (issue 24) ----------------------------------------------------------------

VERDICT_KEYS = {"type", "after_moves", "result", "message", "knowledge"}


async def next_verdict(client: RaceClient) -> LiveVerdictGiven:
    return await client.next_event(LiveVerdictGiven, timeout=30)


async def test_the_live_verdict_says_after_each_move_whether_a_win_is_still_possible(
    server: Server,
) -> None:
    """Practising alone: at once and after each move, the solver's word on the position, in
    the three words only: no move, no card."""
    ann = await RaceClient.connect(server.url, record=True)
    await ann.hello(name="Ann")
    legal = await practice(ann, WON)
    await ann.follow_verdicts()
    first = await next_verdict(ann)
    assert (first.after_moves, first.result, first.message) == (0, "won", "still winnable")
    assert "full knowledge" in first.knowledge
    line = solve(find_rule_set(RULE_SET)(WON), Budget(nodes=20_000)).line
    await ann.move(str(line[0]))
    after = await next_verdict(ann)
    assert (after.after_moves, after.result) == (1, "won")
    assert legal
    assert ann.received is not None
    frames = [json.loads(frame) for frame in ann.received if '"live_verdict"' in frame]
    assert frames and all(set(frame) == VERDICT_KEYS for frame in frames), frames


async def test_the_live_verdict_on_a_lost_deal_and_after_each_move_since(server: Server) -> None:
    ann = await server.client("Ann")
    legal = await practice(ann, LOST)
    await ann.follow_verdicts()
    said = await next_verdict(ann)
    assert (said.after_moves, said.result) == (0, "lost")
    assert said.message == "no win is possible from here any more"
    for moves in (1, 2):
        legal = (await ann.move(next(move for move in legal if move != "resign"))).legal_moves
        said = await next_verdict(ann)
        assert (said.after_moves, said.result) == (moves, "lost")


async def test_a_newer_move_supersedes_the_live_verdict_and_off_stops_it(server: Server) -> None:
    """Three moves at once while the opening is searched (an Octagon deal neither core
    decides at once): the verdicts said are about ever newer positions, the last about the
    newest; none comes for a position once a newer one's has. Turned off, none comes."""
    ann = await server.client("Ann")
    await ann.create_room("octagon", deal="number", number=0)
    await ann.start()
    legal = (await ann.next_event(YourView)).view.legal_moves
    await ann.follow_verdicts()
    for _ in range(3):
        legal = (await ann.move(next(move for move in legal if move != "resign"))).legal_moves
    seen: list[int] = []
    while not seen or seen[-1] < 3:
        seen.append((await next_verdict(ann)).after_moves)
    assert seen == sorted(set(seen)), seen
    await ann.follow_verdicts(on=False)
    await ann.move(next(move for move in legal if move != "resign"))
    with pytest.raises(StillWaiting):
        await ann.next_event(LiveVerdictGiven, timeout=1.5)


async def test_the_live_verdict_is_refused_where_a_hint_is(server: Server) -> None:
    ann, bob = await server.client("Ann"), await server.client("Bob")
    room = await ann.create_room(RULE_SET, deal="number", number=WON)
    await bob.join(room.code)
    with pytest.raises(RequestRefused) as before:
        await ann.follow_verdicts()
    assert before.value.code == "no_hints" and "race with others" in before.value.message
    await ann.ready()
    await bob.ready()
    await ann.next_event(RaceStarted)
    with pytest.raises(RequestRefused) as racing:
        await ann.follow_verdicts()
    assert racing.value.code == "no_hints" and "race with others" in racing.value.message
    await ann.resign()
    await ann.leave()
    await ann.daily(RULE_SET)
    with pytest.raises(RequestRefused) as daily:
        await ann.follow_verdicts()
    assert daily.value.code == "no_hints" and "daily deal" in daily.value.message


async def test_live_verdicts_past_their_limit_are_unknown_and_searched_in_the_hint_processes(
    sessions: Sessions,
) -> None:
    """A player's live verdicts past ``live_verdicts_per_player_per_min`` say "unknown"
    without a search; those that earlier searches settle cost none. Each is searched in the
    hints' processes, counted while it is in the hints' bounds."""
    settings = Settings(live_verdicts_per_player_per_min=4, hint_budget_s=0.5)  # bursts of 1
    now = [1.0]
    pool = SolverPool(settings, cast(Writer, None), sessions, clock=lambda: now[0])
    race = ann_alone("four-corners", FOUR_CORNERS_WON, countdown_s=0)
    race.start("ann", 0.0)
    said: list[LiveVerdictGiven] = []
    game = race.racers["ann"].game
    assert game is not None
    line = solve(game, Budget(nodes=20_000)).line

    async def settled(count: int) -> LiveVerdictGiven:
        for _ in range(300):
            if len(said) >= count:
                return said[-1]
            await asyncio.sleep(0.05)
        raise AssertionError(f"{count} verdicts never came: {said}")

    try:
        pool.follow(race, "ann", "127.0.0.1", said.append, True)
        assert (await settled(1)).result == "won"  # searched: the burst's one
        race.move("ann", line[0], 1.0)
        pool.moved(race, "ann")
        assert (await settled(2)).result == "won"  # along the line found: no search
        other = next(
            move for move in game.legal_moves() if move != line[1] and str(move) != "resign"
        )
        race.move("ann", other, 1.0)
        pool.moved(race, "ann")
        assert (await settled(3)).result == "unknown"  # off the line, past the limit
        assert [verdict.after_moves for verdict in said] == [0, 1, 2]
        now[0] = 16.0
        pool.follow(race, "ann", "127.0.0.1", said.append, True)  # asked again: said again
        assert (await settled(4)).after_moves == 2
        pool.follow(race, "ann", "127.0.0.1", said.append, False)
        race.move("ann", game.legal_moves()[0], 16.0)
        pool.moved(race, "ann")
        await asyncio.sleep(0.5)
        assert len(said) == 4, "off: no more"
        with pytest.raises(Refusal) as over:
            race.move("ann", Move.act("resign"), 16.0)
            pool.follow(race, "ann", "127.0.0.1", said.append, True)
        assert over.value.code == "not_racing"
    finally:
        pool.close()
