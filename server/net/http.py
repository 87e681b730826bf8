"""Plain HTTP on the WebSocket port: health, and JSON under /api.

    GET /healthz                         ok or degraded (database writes failing, Redis down),
                                         counts, and the solver processes (warm or not,
                                         searches out)
    GET /api/games                       the rule sets, with their table layouts and rules pages
    GET /api/rooms                       public rooms open for racers, newest first (at most 50)
    GET /api/quick                       players waiting in the quick race queues, by rule set
    GET /api/leaderboards/<rule-set>     ?board=fastest|most_wins|deal|daily &period=today|week|all
                                         &deal=N &day=YYYY-MM-DD &player=ID &limit=N
    GET /api/ratings/<rule-set>          ?limit=N &around=PLAYER_ID: the rated board
    GET /api/races/<race-id>             a finished race: players, results, seed, move logs
    GET /api/races/<race-id>/replay      ?player=ID: that racer's game, the view after each move
    GET /api/races/<race-id>/solver      the solver's winning line on the race's deal, likewise
                                         (these three: server.net.records)
    GET /api/fairplay...                 the operator's review of fair play, with the operator's
                                         token (POSTs too; server.net.fairplay)
    GET /rules/<rule-set>                the rule set's rules, as a page (server.net.rules_pages)
    GET /, GET /<file>                   the browser client (server.net.static)

The query string is validated by the same model as the WebSocket request (``GetLeaderboard``).
WebSocket clients connect to ``/ws`` (an address already at its connection cap gets a 429 there,
before the WebSocket opens). HEAD is GET without the body; any other method is a 405 (but the
operator's two POSTs under /api/fairplay).
Requests under /api/ are rate-limited per client address (429 past it), by the same allowance
as the WebSocket's ``leaderboard`` and ``race_record`` (``server.core.budgets.AddressBook``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from datetime import UTC, datetime
from http import HTTPStatus
from typing import TYPE_CHECKING, Any, Protocol
from urllib.parse import parse_qsl, urlsplit

from pydantic import ValidationError
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from engine.registry import RULE_SET_NAMES
from server.cluster.rank_cache import RedisRanks
from server.cluster.redis_bus import RedisBus
from server.core.budgets import address_of
from server.core.limits import retry_after
from server.net.boards import leaderboard
from server.net.connection import Gateway
from server.net.fairplay import OperatorApi, allowed_methods, is_fairplay
from server.net.records import RaceRecords
from server.net.responses import error_response, game_info, json_response
from server.net.rules_pages import rules_response
from server.net.static import static_response
from server.rooms.host import RoomHost
from server.rooms.pool import PoolFiller
from server.rooms.room import Room, local_list
from server.settings import Settings
from server.storage.deals import ready_counts
from server.storage.engine import Sessions
from server.storage.players import ID
from server.storage.ratings import rating_board
from server.storage.writer import Writer
from wire.protocol import GetLeaderboard

if TYPE_CHECKING:
    from websockets.asyncio.server import ServerConnection


class Served(Protocol):
    """What the HTTP API reads of its process's service (``server.service.Service``)."""

    settings: Settings
    sessions: Sessions
    writer: Writer
    gateway: Gateway
    host: RoomHost
    redis_bus: RedisBus | None
    rank_cache: RedisRanks | None
    filler: PoolFiller | None

    @property
    def rooms(self) -> dict[str, Room]: ...

    @property
    def worker_name(self) -> str | None: ...


WEBSOCKET_PATH = "/ws"
HTTP_METHODS = ("GET", "HEAD")
WEBSOCKET_METHODS = ("GET",)
"""Any other method is a 405 with ``Allow``: nothing here changes anything over HTTP, but the
operator's fair-play API (``server.net.fairplay``)."""
LEADERBOARD_PARAMETERS = frozenset({"board", "period", "deal", "day", "player", "limit"})
RATINGS_PARAMETERS = frozenset({"limit", "around"})
POOL_COUNTS_S = 2.0
"""How old /healthz lets the winnable pool's counts get before they are read again."""


class HttpApi:
    def __init__(self, service: Served, clock: Callable[[], float] = time.monotonic) -> None:
        self.service, self.clock = service, clock
        settings = service.settings
        self.records = RaceRecords(service.sessions, settings.http_cache_bytes)
        self.operator = OperatorApi(settings, service.sessions, service.writer, service.rank_cache)
        self._pool_counts: dict[str, int] | None = None
        self._pool_counts_at: float | None = None
        self._pool_counting: asyncio.Task[None] | None = None

    def _client(self, connection: ServerConnection, request: Request) -> str:
        """Whom a request counts against (``server.core.budgets.address_of``)."""
        return address_of(
            connection.remote_address,
            request.headers.get("X-Forwarded-For"),
            self.service.settings.trusted_proxies,
        )

    async def __call__(self, connection: ServerConnection, request: Request) -> Response | None:
        """The answer to a plain HTTP request, or None to let a WebSocket handshake go on."""
        url = urlsplit(request.path)
        path = url.path.rstrip("/") or "/"
        allowed = WEBSOCKET_METHODS if path == WEBSOCKET_PATH else HTTP_METHODS
        if is_fairplay(path):
            response = await self.operator_answer(connection, request, path)
        elif request.method not in allowed:
            response = error_response(
                HTTPStatus.METHOD_NOT_ALLOWED,
                f"{request.method} is not answered here, only {' and '.join(allowed)}",
            )
            response.headers["Allow"] = ", ".join(allowed)
        elif path == WEBSOCKET_PATH:
            if not self.service.gateway.addresses.full(self._client(connection, request)):
                return None
            # Refused before the WebSocket opens: one response, rather than the handshake,
            # an error frame and a closing handshake (a client reconnecting in a loop cost the
            # server three times as many writes, and moved its racers).
            response = error_response(
                HTTPStatus.TOO_MANY_REQUESTS,
                "too_many_connections: at most "
                f"{self.service.settings.connections_per_address} connections from one address",
            )
        elif path.startswith("/api/") and (
            wait := self.service.gateway.read_wait(self._client(connection, request))
        ):
            response = self.too_many(wait)
        else:
            response = await self.answer(
                url.path, path, dict(parse_qsl(url.query)), request.headers
            )
        if request.method == "HEAD":
            # The headers of GET, Content-Length included, and no body (RFC 9110, 9.3.2).
            return dataclasses.replace(response, body=b"")
        return response

    async def operator_answer(
        self, connection: ServerConnection, request: Request, path: str
    ) -> Response:
        """The operator's API (``server.net.fairplay``): within the address's allowance as any
        request under /api/ (a token is not guessed at leisure), then 404 or 401 without the
        token, whatever the method, then the method."""
        wait = self.service.gateway.read_wait(self._client(connection, request))
        if wait:
            return self.too_many(wait)
        refused = self.operator.refusal(path, request.headers)
        if refused is not None:
            return refused
        allowed = allowed_methods(path)
        if request.method not in allowed:
            response = error_response(
                HTTPStatus.METHOD_NOT_ALLOWED,
                f"{request.method} is not answered here, only {' and '.join(allowed)}",
            )
            response.headers["Allow"] = ", ".join(allowed)
            return response
        return await self.operator.answer(path)

    async def answer(
        self, raw_path: str, path: str, query: dict[str, str], headers: Headers
    ) -> Response:
        if path == "/healthz":
            return self.health()
        if path == "/api/games":
            return json_response(HTTPStatus.OK, [game_info(name) for name in RULE_SET_NAMES])
        if path == "/api/rooms":
            return json_response(HTTPStatus.OK, {"rooms": await self.public_rooms()})
        if path == "/api/quick":
            waiting = await self.service.gateway.bus.waiting()
            return json_response(HTTPStatus.OK, {"waiting": waiting})
        if path.startswith("/rules/"):
            page = rules_response(path.removeprefix("/rules/"))
            if page is not None:
                return page
        if path.startswith("/api/leaderboards/"):
            return await self.leaderboard(path.removeprefix("/api/leaderboards/"), query)
        if path.startswith("/api/ratings/"):
            return await self.ratings(path.removeprefix("/api/ratings/"), query)
        if path.startswith("/api/races/") and path.endswith("/solver"):
            return await self.records.solver_line(
                path.removeprefix("/api/races/").removesuffix("/solver")
            )
        if path.startswith("/api/races/") and path.endswith("/replay"):
            race_id = path.removeprefix("/api/races/").removesuffix("/replay")
            return await self.records.replay(race_id, query.get("player", ""))
        if path.startswith("/api/races/"):
            return await self.records.race(path.removeprefix("/api/races/"))
        if not path.startswith("/api/"):
            static = static_response(raw_path, headers)
            if static is not None:
                return static
        return error_response(HTTPStatus.NOT_FOUND, f"nothing at {path}")

    async def public_rooms(self) -> list[dict[str, Any]]:
        """The public rooms open for racers (``server.cluster.listing``): every worker's, through
        Redis, when there are several."""
        bus = self.service.redis_bus
        return (
            local_list(self.service.rooms.values()) if bus is None else (await bus.listing.read())
        )

    def too_many(self, wait_s: float) -> Response:
        settings = self.service.settings
        response = error_response(
            HTTPStatus.TOO_MANY_REQUESTS,
            f"slow down: at most {settings.http_rate_per_s:g} requests a second under /api/ "
            f"from one address, {settings.http_rate_burst:g} at once",
        )
        response.headers["Retry-After"] = retry_after(wait_s)
        return response

    def _pool_ready(self) -> dict[str, int] | None:
        """The winnable pool's counts as last read: /healthz never waits for the database
        (it must answer while the database stalls). When they are older than
        ``POOL_COUNTS_S``, they are read again in the background, for the next request."""
        stale = self._pool_counts_at is None or (
            self.clock() - self._pool_counts_at > POOL_COUNTS_S
        )
        if stale and self._pool_counting is None:
            self._pool_counting = asyncio.create_task(self._count_pool())
        return self._pool_counts

    async def _count_pool(self) -> None:
        try:
            async with asyncio.timeout(POOL_COUNTS_S):
                self._pool_counts = await ready_counts(self.service.sessions)
        except Exception:  # the database is down or slow: the status says so already
            self._pool_counts = None
        finally:
            self._pool_counts_at, self._pool_counting = self.clock(), None

    def health(self) -> Response:
        writer = self.service.writer
        settings = self.service.settings
        ready = self._pool_ready()
        bus = self.service.redis_bus
        redis_down = bus is not None and bus.down_since is not None
        body = {
            "status": "degraded" if writer.failing_since is not None or redis_down else "ok",
            "database": {
                "writes_failing": writer.failing_since is not None,
                "last_error": writer.last_error,
                "queued_writes": writer.pending,
                "moves_stored": writer.moves_written,
                "move_commits": writer.batches,
            },
            "rooms": len(self.service.rooms),
            "connections": len(self.service.gateway.clients),
            "worker": self.service.worker_name,
            "redis": None if bus is None else "down" if redis_down else "ok",
            "winnable_pool": {
                "target": settings.winnable_pool_target,
                "ready": None
                if ready is None
                else {name: ready.get(name, 0) for name in settings.winnable_pool_rule_sets},
                "filled_here": self.service.filler is not None,
            },
            "solver": self._solver(),
        }
        status = HTTPStatus.OK if body["status"] == "ok" else HTTPStatus.SERVICE_UNAVAILABLE
        return json_response(status, body)

    def _solver(self) -> dict[str, Any]:
        """The solver processes of this process: for hints, for verdicts after races, and for
        the winnable pool if this process fills it."""
        health = self.service.host.solver.health()
        if self.service.filler is not None:
            health["winnable_pool"] = self.service.filler.solver.health()
        return health

    async def leaderboard(self, rule_set: str, query: dict[str, str]) -> Response:
        unknown = sorted(query.keys() - LEADERBOARD_PARAMETERS)
        if unknown:
            return error_response(
                HTTPStatus.BAD_REQUEST,
                f"unknown parameter {unknown[0]!r}: "
                f"use {', '.join(sorted(LEADERBOARD_PARAMETERS))}",
            )
        player = query.pop("player", None)
        if player is not None and not ID.fullmatch(player):
            return error_response(
                HTTPStatus.BAD_REQUEST, "player: a player id is 1 to 64 of A-Z a-z 0-9 _ -"
            )
        try:
            request = GetLeaderboard.model_validate(
                {
                    **query,
                    "type": "leaderboard",
                    "rule_set": rule_set,
                    "around_me": player is not None,
                }
            )
        except ValidationError as invalid:
            return error_response(
                HTTPStatus.BAD_REQUEST,
                "; ".join(
                    f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in invalid.errors()
                ),
            )
        if rule_set not in RULE_SET_NAMES:
            return error_response(HTTPStatus.NOT_FOUND, f"no rule set {rule_set!r}")
        board = await leaderboard(
            self.service.sessions, request, player, datetime.now(UTC), self.service.rank_cache
        )
        return json_response(HTTPStatus.OK, board.model_dump(mode="json", exclude={"id"}))

    async def ratings(self, rule_set: str, query: dict[str, str]) -> Response:
        """The rated board (``server.storage.ratings.rating_board``), as the leaderboards are
        asked for: ``limit`` 1 to 100 (20), ``around`` a player id."""
        unknown = sorted(query.keys() - RATINGS_PARAMETERS)
        if unknown:
            return error_response(
                HTTPStatus.BAD_REQUEST,
                f"unknown parameter {unknown[0]!r}: use {', '.join(sorted(RATINGS_PARAMETERS))}",
            )
        around = query.get("around")
        if around is not None and not ID.fullmatch(around):
            return error_response(
                HTTPStatus.BAD_REQUEST, "around: a player id is 1 to 64 of A-Z a-z 0-9 _ -"
            )
        limit = query.get("limit", "20")
        if not (limit.isascii() and limit.isdigit() and 1 <= int(limit) <= 100):
            return error_response(HTTPStatus.BAD_REQUEST, "limit: a whole number, 1 to 100")
        if rule_set not in RULE_SET_NAMES:
            return error_response(HTTPStatus.NOT_FOUND, f"no rule set {rule_set!r}")
        board = await rating_board(
            self.service.sessions,
            rule_set,
            int(limit),
            around,
            self.service.settings.rating_board_min_races,
        )
        return json_response(HTTPStatus.OK, board.model_dump(mode="json"))
