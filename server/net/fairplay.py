"""The operator's fair-play API over HTTP, as ``patience-race fairplay`` is on the command line:

    GET  /api/fairplay                        the results held for review, oldest first
    GET  /api/fairplay/<race-id>              that race's checks, every racer's
    POST /api/fairplay/<race-id>/clear        its held results back on the boards and ratings
    POST /api/fairplay/players/<player>/ban   ban the player: their results leave every board

Only for the operator: each request carries ``Authorization: Bearer <settings.operator_token>``,
compared in constant time. Without a token in the settings the API does not exist (404 to
everyone, as any path that names nothing); a request without the token, or with another, is a
401. A POST has no body. The writes go through the server's writer, in order with the others;
after a clear or a ban the rank cache (Redis) is rebuilt.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any

from websockets.datastructures import Headers
from websockets.http11 import Response

from server.cluster.rank_cache import RedisRanks
from server.net.responses import error_response, json_response
from server.settings import Settings
from server.storage import fairplay
from server.storage.engine import Sessions
from server.storage.players import ID
from server.storage.writer import Writer

PREFIX = "/api/fairplay"
WRITE_WITHIN_S = 30.0
"""How long a clear or a ban waits for the database's writer."""


def is_fairplay(path: str) -> bool:
    return path == PREFIX or path.startswith(PREFIX + "/")


def allowed_methods(path: str) -> tuple[str, ...]:
    """POST for the two writes, GET and HEAD for the rest."""
    return ("POST",) if path.endswith(("/clear", "/ban")) else ("GET", "HEAD")


class OperatorApi:
    """The API, answering from the database of the process's service."""

    def __init__(
        self,
        settings: Settings,
        sessions: Sessions,
        writer: Writer,
        rank_cache: RedisRanks | None,
    ) -> None:
        self.settings, self.sessions, self.writer = settings, sessions, writer
        self.rank_cache = rank_cache

    def refusal(self, path: str, headers: Headers) -> Response | None:
        """404 while no operator token is set, 401 unless the request carries it."""
        token = self.settings.operator_token
        if token is None:
            return error_response(HTTPStatus.NOT_FOUND, f"nothing at {path}")
        given = headers.get("Authorization", "")
        expected = f"Bearer {token.get_secret_value()}"
        if hmac.compare_digest(given.encode(), expected.encode()):
            return None
        response = error_response(
            HTTPStatus.UNAUTHORIZED, "the operator's token is needed: Authorization: Bearer TOKEN"
        )
        response.headers["WWW-Authenticate"] = 'Bearer realm="fair play"'
        return response

    async def answer(self, path: str) -> Response:
        sessions = self.sessions
        words = path.removeprefix(PREFIX).strip("/").split("/")
        if words == [""]:
            held = await fairplay.flagged_checks(sessions)
            return json_response(HTTPStatus.OK, {"held": [check.to_json() for check in held]})
        if (
            len(words) == 3
            and words[0] == "players"
            and words[2] == "ban"
            and ID.fullmatch(words[1])
        ):
            player_id = words[1]
            if not await self._write(lambda now: fairplay.ban(sessions, player_id, now)):
                return error_response(HTTPStatus.NOT_FOUND, f"no player {player_id}")
            return json_response(HTTPStatus.OK, {"player_id": player_id, "banned": True})
        if len(words) in (1, 2) and ID.fullmatch(words[0]) and words[1:] in ([], ["clear"]):
            race_id = words[0]
            if words[1:] == ["clear"]:
                cleared = await self._write(lambda now: fairplay.clear(sessions, race_id, now))
                if not cleared:
                    return error_response(
                        HTTPStatus.NOT_FOUND, f"race {race_id} has no result held for review"
                    )
                return json_response(HTTPStatus.OK, {"race_id": race_id, "cleared": cleared})
            checks = await fairplay.race_checks(sessions, race_id)
            if not checks:
                return error_response(
                    HTTPStatus.NOT_FOUND, f"race {race_id} has no fair-play check"
                )
            return json_response(
                HTTPStatus.OK, {"race_id": race_id, "checks": [c.to_json() for c in checks]}
            )
        return error_response(HTTPStatus.NOT_FOUND, f"nothing at {path}")

    async def _write(self, action: Callable[[datetime], Awaitable[Any]]) -> Any:
        """A clear or a ban, through the writer; then the rank cache rebuilt if anything
        changed."""
        now = datetime.now(UTC)
        done = await self.writer.call(lambda: action(now), WRITE_WITHIN_S)
        if done and self.rank_cache is not None:
            await self.rank_cache.rebuild(self.sessions)
        return done
