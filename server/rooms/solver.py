"""Hints over the protocol: how much each client may ask of the solver, the live verdict, and the
verdicts searched after races.

A hint runs the solver (``engine.hints``) in the solver processes
(``server.rooms.solver_processes``), never on the event loop; who may have one at all is
``server.core.hint_rules.refusal``.

Hints come before verdicts, by keeping them apart. The ``SolverPool`` has processes of its own
for hints (``solver_processes``) and others for the verdicts it searches after races
(``verdict_processes``), rather than one pool with a priority queue in front: a search cannot
be interrupted, so behind a queue a hint would still wait out a verdict already running (10 s by
default); in processes of their own it waits for none, and the scheduler gives it the CPU first
where both run at once (the verdicts' processes run at the lowest priority). The hint processes
are started and warmed when the server starts (``start``, in every worker, while the listener
is already serving), so the first hint is not kept waiting by a process starting. ``/healthz``
says how many processes each kind has, whether they are warm, and how many searches are out.

What one client can make the solver do is bounded by address as well as by player, since
identities are cheap (ten from one address are ten players): for a hint, each player's hints a
minute (``hints_per_player_per_min``) and each address's (``hints_per_address_per_min``), token
buckets, past them ``rate_limited``; hints searched or waiting at once from one address
(``hints_at_once_per_address``, past it ``rate_limited``) and in all (``hint_queue_max``, past
it ``unavailable``). Hints waiting for a process take turns by address
(``server.rooms.solver_turns``, round robin, the address just served last), so an honest hint
waits for the searches under way and at most one of each other address, however many that
address asks for. A hint holds up its asker's next request by up to its budget (requests are
handled one at a time per connection), nobody else's. With several workers each has its own
processes and bounds: an address counts in the worker that holds its rooms.

The live verdict (``follow``, ``moved``): a racer practising alone may ask to be told, at once
and after each move, the solver's word on their position (``engine.hints.LIVE_WORDS``: still
winnable, no win possible any more, unknown), and nothing else. It is searched as a hint is, in
the hints' processes, within the hints' bounds at once and by turns, for the racer's newest
position only: one task per racer says the verdicts, and once a search ends it searches the
position the racer is at then, never those passed meanwhile (a search in a process cannot be
interrupted, and is short). What earlier searches proved settles a position without a search
(``engine.hints.Foresight``: a loss, a winning line followed, which the server keeps to
itself). Searches a minute are bounded per player and per address
(``live_verdicts_per_player_per_min``, ``..._per_address_per_min``); past a bound the verdict
is "unknown", never an error: the racer's moves are never held up by it.

After a race the pool searches its deal from the start (``after_race``, budget
``verdict_budget_s``) and stores the verdict (``server.storage.deals.save_verdict``) for the race
record: whether the deal was winnable, and the solver's winning line. At most ``verdict_queue_max``
deals are searched or waiting at once, and at most ``verdicts_at_once_per_address`` for races
with a racer from one address; the others are left unsearched (their record says ``winnable:
null``).

After a race that rated anyone, the same processes check its racers' fair play (``_check``,
``server.core.fairplay``: their move times and their agreement with the solver, within
``fair_play_s`` each), counted in the same bounds; a flagged result is held off the boards and
the ratings from the moment the check is stored, seconds after the race.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Collection, Coroutine
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engine.hints import (
    LIVE_WORDS,
    Foresight,
    hint_budget,
    hint_for_log,
    solve_deal,
    verdict_for_log,
)
from engine.replay import MoveLog
from engine.solver import FULL_KNOWLEDGE, Result
from server.core.errors import Refusal
from server.core.fairplay import Signals, Verdict, check_racer, judge
from server.core.hint_rules import refusal
from server.core.limits import AddressLimiter, InFlight
from server.core.race import Race
from server.rooms.solver_process import BACKGROUND_NICENESS, NICENESS
from server.rooms.solver_processes import SLACK_S, SolverProcesses, core
from server.rooms.solver_turns import Turns
from server.settings import Settings
from server.storage.deals import save_verdict
from server.storage.engine import Sessions
from server.storage.fairplay import race_to_check, record_checks
from server.storage.writer import Writer
from wire.protocol import ErrorCode, HintGiven, LiveVerdictGiven

log = logging.getLogger("patience_race.hints")


@dataclass(eq=False)
class Following:
    """A racer who asked for the live verdict (``SolverPool.follow``): what earlier searches
    settle of their positions, the task saying the verdicts, and how to say one (``send``)."""

    race: Race
    player_id: str
    address: str
    send: Callable[[LiveVerdictGiven], object]
    foresight: Foresight = field(default_factory=Foresight)
    task: asyncio.Task[None] | None = None
    said: int = -1
    """After how many moves the last verdict said was (-1: none yet)."""


class SolverPool:
    """The server's solver processes for hints and for verdicts, and who may use them how
    much."""

    def __init__(
        self,
        settings: Settings,
        writer: Writer,
        sessions: Sessions,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings, self.writer, self.sessions, self.clock = settings, writer, sessions, clock
        self.hints = SolverProcesses("hints", settings.solver_processes, NICENESS)
        self.verdicts = SolverProcesses(
            "verdicts",
            settings.verdict_processes
            if settings.verdict_budget_s > 0 or settings.fair_play_s > 0
            else 0,
            BACKGROUND_NICENESS,
        )
        self._searches: set[asyncio.Task[None]] = set()
        """Deals being searched, and races being checked, after their race."""
        self.on_held: Callable[[], Awaitable[object]] | None = None
        """Called once a result is held for fair play: the service rebuilds its rank cache."""
        self._closed = False
        self._player_quota = AddressLimiter(
            settings.hints_per_player_per_min / 60,
            max(1.0, settings.hints_per_player_per_min / 4),
            settings.http_rate_clients,
        )
        self._address_quota = AddressLimiter(
            settings.hints_per_address_per_min / 60,
            max(1.0, settings.hints_per_address_per_min / 4),
            settings.http_rate_clients,
        )
        self._hinting = InFlight(settings.hints_at_once_per_address, settings.hint_queue_max)
        self._turns = Turns(settings.solver_processes)
        self._verdicting = InFlight(
            settings.verdicts_at_once_per_address, settings.verdict_queue_max
        )
        self._following: dict[tuple[str, str], Following] = {}
        """Racers saying the live verdict, by race and player: at most one per seat of a race
        of one racer, each forgotten once its game is over or its room closed."""
        self._live_player_quota = AddressLimiter(
            settings.live_verdicts_per_player_per_min / 60,
            max(1.0, settings.live_verdicts_per_player_per_min / 4),
            settings.http_rate_clients,
        )
        self._live_address_quota = AddressLimiter(
            settings.live_verdicts_per_address_per_min / 60,
            max(1.0, settings.live_verdicts_per_address_per_min / 4),
            settings.http_rate_clients,
        )

    async def start(self) -> None:
        """Start and warm the processes: the hints' first, as a player waits for a hint."""
        await self.hints.start()
        await self.verdicts.start()

    async def hint(
        self, race: Race, player_id: str, address: str, request_id: str | None, now: float
    ) -> HintGiven:
        """A hint for the player's position now, or the refusal raised. ``address``: whom the
        asking connection counts against (``server.core.budgets.address_of``)."""
        refused = refusal(race, player_id)
        if refused is not None:
            raise refused
        settings, addresses = self.settings, (address,)
        crowded = self._hinting.refusal(addresses)
        if crowded == "total":
            raise Refusal(ErrorCode.UNAVAILABLE, "the solver is busy: try again in a moment")
        if crowded == "client":
            raise Refusal(
                ErrorCode.RATE_LIMITED,
                f"at most {settings.hints_at_once_per_address} "
                "hints at once from one address: ask again once one is answered",
            )
        if self._player_quota.take(player_id, now) > 0:
            raise Refusal(
                ErrorCode.RATE_LIMITED,
                f"at most {settings.hints_per_player_per_min:g} hints a minute",
            )
        if self._address_quota.take(address, now) > 0:
            raise Refusal(
                ErrorCode.RATE_LIMITED,
                f"at most {settings.hints_per_address_per_min:g} hints a minute from one address",
            )
        game = race.racers[player_id].game
        assert game is not None
        moves = len(game.history)
        seconds = settings.hint_budget_s or hint_budget(race.terms.rule_set).seconds
        assert seconds is not None
        log_json = MoveLog.of(game).to_json()
        self._hinting.begin(addresses)
        try:
            async with self._turns.turn(address):
                answer = await self.hints.run(
                    hint_for_log, log_json, seconds, within_s=seconds + SLACK_S
                )
        finally:
            self._hinting.end(addresses)
        return HintGiven(id=request_id, after_moves=moves, knowledge=FULL_KNOWLEDGE, **answer)

    # -- the live verdict --------------------------------------------------------------------

    def follow(
        self,
        race: Race,
        player_id: str,
        address: str,
        send: Callable[[LiveVerdictGiven], object],
        on: bool,
    ) -> None:
        """Say the live verdict on the player's position (``send``) at once and after each of
        their moves (``moved``), or (``on`` false) no more. Refused as a hint is."""
        key = (race.terms.race_id, player_id)
        if not on:
            stopped = self._following.pop(key, None)
            if stopped is not None and stopped.task is not None:
                stopped.task.cancel()
            return
        refused = refusal(race, player_id)
        if refused is not None:
            raise refused
        following = self._following.get(key)
        if following is None:
            following = self._following[key] = Following(race, player_id, address, send)
        following.address, following.send, following.said = address, send, -1
        self.moved(race, player_id)

    def moved(self, race: Race, player_id: str) -> None:
        """The player's position has changed (a move of theirs was accepted): say the live
        verdict on it, if they follow it. A search under way is not interrupted (it ends by its
        budget): once it has, the newest position is searched, the ones passed meanwhile never."""
        following = self._following.get((race.terms.race_id, player_id))
        if following is None or self._closed:
            return
        if following.task is None or following.task.done():
            following.task = asyncio.create_task(self._say_verdicts(following))

    def forget_race(self, race_id: str) -> None:
        """The race's room is closed, or has a new race: its racers' live verdicts stop."""
        for key in [key for key in self._following if key[0] == race_id]:
            stopped = self._following.pop(key)
            if stopped.task is not None:
                stopped.task.cancel()

    def _position(self, following: Following) -> list[str] | None:
        """The moves to the follower's position now, or None when no verdict is wanted any
        more (the game is over, the race not one a hint is given in)."""
        if refusal(following.race, following.player_id) is not None:
            return None
        game = following.race.racers[following.player_id].game
        assert game is not None
        return [str(move) for move in game.history]

    async def _say_verdicts(self, following: Following) -> None:
        """Say the verdict on the follower's newest position: at once if earlier searches
        settle it, else once searched; then that of the newest again, until said."""
        key = (following.race.terms.race_id, following.player_id)
        searched: tuple[int, Result] | None = None
        while True:
            moves = self._position(following)
            if moves is None:
                if self._following.get(key) is following:
                    del self._following[key]
                return
            made = len(moves)
            if following.said == made:
                return
            known = following.foresight.known(moves)
            if known is None and searched is not None and searched[0] == made:
                known = searched[1]
            if known is not None:
                following.said = made
                following.send(
                    LiveVerdictGiven(
                        after_moves=made,
                        result=known.value,
                        message=LIVE_WORDS[known],
                        knowledge=FULL_KNOWLEDGE,
                    )
                )
                return
            searched = await self._search_live(following, made)

    async def _search_live(self, following: Following, made: int) -> tuple[int, Result]:
        """Search the follower's newest position once its turn comes (within the hints'
        bounds: it is "unknown" past them), and learn from the answer: after how many moves
        the position searched was, and its verdict."""
        address, now = following.address, self.clock()
        if (
            self._hinting.refusal((address,)) is not None
            or self._live_player_quota.take(following.player_id, now) > 0
            or self._live_address_quota.take(address, now) > 0
        ):
            return made, Result.UNKNOWN
        seconds = self.settings.hint_budget_s or hint_budget(following.race.terms.rule_set).seconds
        assert seconds is not None
        self._hinting.begin((address,))
        try:
            async with self._turns.turn(address):
                moves = self._position(following)
                if moves is None:  # (over while it waited: the loop forgets it)
                    return made, Result.UNKNOWN
                game = following.race.racers[following.player_id].game
                assert game is not None
                log_json = MoveLog.of(game).to_json()
                try:
                    answer = await self.hints.run(
                        verdict_for_log, log_json, seconds, within_s=seconds + SLACK_S
                    )
                except Refusal:  # the solver failed or was late
                    return len(moves), Result.UNKNOWN
        finally:
            self._hinting.end((address,))
        result = Result(answer["result"])
        following.foresight.learn(moves, result, answer["line"])
        return len(moves), result

    def after_race(self, race: Race, addresses: Collection[str], rated: bool = False) -> None:
        """Search the race's deal in the background and store the verdict, and if the race
        ``rated`` anyone check its racers' fair play (``_check``), unless too many
        are waiting already, in all or for one of ``addresses`` (its racers'): that race's
        record then says ``winnable: null``, or its racers go unchecked."""
        if self._closed:
            return
        if rated and self.settings.fair_play_s > 0:
            self._in_background(race, addresses, "its racers are left unchecked", self._check)
        if self.settings.verdict_budget_s > 0 and not race.terms.winnable:
            # (a deal from the winnable pool has its verdict already)
            self._in_background(race, addresses, "its deal is left unsearched", self._search)

    def _in_background(
        self,
        race: Race,
        addresses: Collection[str],
        left: str,
        work: Callable[[Race], Coroutine[Any, Any, None]],
    ) -> None:
        crowded = self._verdicting.refusal(addresses)
        if crowded is not None:
            log.warning(
                "race %s: %s, %d others are waiting%s",
                race.terms.race_id,
                left,
                self._verdicting.count,
                " for races of one of its racers' addresses" * (crowded == "client"),
            )
            return
        self._verdicting.begin(addresses)
        task = asyncio.create_task(work(race))
        self._searches.add(task)
        task.add_done_callback(self._searches.discard)
        task.add_done_callback(lambda _: self._verdicting.end(addresses))

    async def _check(self, race: Race) -> None:
        """The fair-play check of a rated race (``server.core.fairplay``): each racer's signals
        measured in the verdicts' processes from their stored moves, and stored; a flagged
        result is held off the boards and the ratings from then on
        (``server.storage.fairplay``), and the rank cache rebuilt (``on_held``)."""
        race_id, seconds = race.terms.race_id, self.settings.fair_play_s
        try:
            stored = await race_to_check(self.sessions, race_id)
        except Exception:  # the database is down: the race goes unchecked, as when crowded
            log.warning("race %s: its racers were not checked", race_id, exc_info=True)
            return
        verdicts: dict[str, Verdict] = {}
        for player_id, moves in stored.moves.items():
            try:
                signals = await self.verdicts.run(
                    check_racer,
                    stored.rule_set,
                    stored.seed,
                    stored.algorithm,
                    stored.rules,
                    moves,
                    seconds,
                    within_s=seconds + SLACK_S,
                )
            except Refusal as failed:
                log.warning("race %s: its racers were not checked: %s", race_id, failed.message)
                return
            verdicts[player_id] = judge(Signals.from_json(signals))
        now = datetime.now(UTC)
        flagged = await self.writer.run_returning(
            lambda: record_checks(self.sessions, race_id, verdicts, now)
        )
        if isinstance(flagged, list) and flagged:
            log.warning("race %s: held for review, flagged %s", race_id, ", ".join(flagged))
            if self.on_held is not None:
                await self.on_held()

    async def _search(self, race: Race) -> None:
        seconds = self.settings.verdict_budget_s
        try:
            answer = await self.verdicts.run(
                solve_deal,
                race.terms.rule_set,
                race.terms.seed,
                race.terms.algorithm,
                race.terms.rules,
                seconds,
                within_s=seconds + SLACK_S,
            )
        except Refusal as failed:
            log.warning(
                "race %s: its deal was not searched: %s", race.terms.race_id, failed.message
            )
            return
        now = datetime.now(UTC)
        await self.writer.run(
            lambda: save_verdict(
                self.sessions,
                race.terms.rule_set,
                race.terms.seed,
                race.terms.algorithm,
                race.terms.rules,
                answer["result"],
                answer["line"],
                seconds,
                now,
            )
        )

    def health(self) -> dict[str, Any]:
        """For ``/healthz``: the core that searches, and each kind's processes."""
        return {"core": core(), "hints": self.hints.health(), "verdicts": self.verdicts.health()}

    def close(self) -> None:
        """Stop the processes (a search under way is dropped)."""
        self._closed = True
        for task in self._searches:
            task.cancel()
        for following in self._following.values():
            if following.task is not None:
                following.task.cancel()
        self.hints.close()
        self.verdicts.close()
