"""Finished races, as the HTTP API (``server.net.http``) answers them under /api/races/: a race's
record, a racer's game step by step, and the solver's winning line on the race's deal; each
built once its race is revealed (and so final), then answered from a cache of its encoding.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from http import HTTPStatus
from typing import Any

from websockets.http11 import Response

from engine.moves import Move
from engine.replay import MoveLog
from server.core.limits import LruCache
from server.net.responses import encode, encoded_response, error_response, replay_steps
from server.storage.deals import solver_fields
from server.storage.engine import Sessions
from server.storage.players import ID
from server.storage.races import race_record


class RaceRecords:
    """The answers under /api/races/: a race's record, its replay and the solver's line."""

    def __init__(self, sessions: Sessions, cache_bytes: int) -> None:
        self.sessions = sessions
        self.finished: LruCache[tuple[str, ...]] = LruCache(cache_bytes)
        """Finished races' records and replays, encoded, once their move logs are revealed:
        from then on they never change (the race is over, every move of it stored, the seed
        out), so each is built once rather than replayed again for every request."""

    async def race(self, race_id: str) -> Response:
        data = self.finished.get(("record", race_id))
        if data is None:
            _, data = await self._record(race_id)
        if data is None:
            return error_response(HTTPStatus.NOT_FOUND, f"no finished race {race_id!r}")
        return encoded_response(HTTPStatus.OK, data)

    async def _revealed(self, race_id: str) -> dict[str, Any] | Response:
        """The race's record once it reveals the deal and the move logs; else the answer."""
        record, _ = await self._record(race_id)
        if record is None:
            return error_response(HTTPStatus.NOT_FOUND, f"no race {race_id!r}")
        if record["logs"] is None:
            return error_response(
                HTTPStatus.FORBIDDEN,
                "the race is not over, or its deal is "
                "still secret (a daily deal's until the end of its day)",
            )
        return record

    async def replay(self, race_id: str, player_id: str) -> Response:
        """One racer's game of a finished race, position by position, for a replay viewer
        (a browser cannot run the engine). Only once ``race_record`` reveals the move logs."""
        return await self._revealed_once(
            ("replay", race_id, player_id),
            race_id,
            lambda record: self._replay(record, race_id, player_id),
        )

    @staticmethod
    def _replay(record: dict[str, Any], race_id: str, player_id: str) -> bytes | Response:
        log = record["logs"].get(player_id)
        if log is None:
            racers = ", ".join(player["player_id"] for player in record["players"])
            return error_response(
                HTTPStatus.NOT_FOUND,
                f"no racer {player_id!r} in that race: ?player= one of {racers}",
            )
        name = next(p["name"] for p in record["players"] if p["player_id"] == player_id)
        return encode(
            {
                "race_id": race_id,
                "rule_set": record["rule_set"],
                "player_id": player_id,
                "name": name,
                "steps": replay_steps(MoveLog.from_json(log)),
            }
        )

    async def solver_line(self, race_id: str) -> Response:
        """The solver's winning line on a finished race's deal, position by position, as a
        racer's replay: beside the racers' own games in the replay viewer. Only once the race
        record reveals the deal, and only for a deal the solver won."""
        return await self._revealed_once(
            ("solver", race_id), race_id, lambda record: self._solver_line(record, race_id)
        )

    @staticmethod
    def _solver_line(record: dict[str, Any], race_id: str) -> bytes | Response:
        solver = record.get("solver")
        if solver is None or solver["result"] != "won":
            return error_response(
                HTTPStatus.NOT_FOUND,
                "the solver has no winning line for "
                "this deal (not searched yet, lost, or undecided)",
            )
        log = MoveLog(
            record["rule_set"],
            int(record["seed"]),
            record["algorithm"],
            tuple(Move.parse(move) for move in solver["line"]),
            rules=record["rules"],
        )
        return encode(
            {
                "race_id": race_id,
                "rule_set": record["rule_set"],
                "player_id": None,
                "name": "the solver",
                "knowledge": solver["knowledge"],
                "steps": replay_steps(log),
            }
        )

    async def _revealed_once(
        self,
        key: tuple[str, ...],
        race_id: str,
        build: Callable[[dict[str, Any]], bytes | Response],
    ) -> Response:
        """What ``build`` makes of a revealed race's record, made once and then answered from
        the cache (a revealed race is final); a refusal is never kept."""
        data = self.finished.get(key)
        if data is None:
            record = await self._revealed(race_id)
            if isinstance(record, Response):
                return record
            built = build(record)
            if isinstance(built, Response):
                return built
            data = built
            self.finished.put(key, data)
        return encoded_response(HTTPStatus.OK, data)

    async def _record(self, race_id: str) -> tuple[dict[str, Any] | None, bytes | None]:
        """A race's record and its encoding; from the cache once it is revealed (and so final,
        but for the solver's verdict on its deal, stored a while after the race and looked
        for again until it is there), never before: a daily race's record hides its seed and
        logs until its day is over."""
        key = ("record", race_id)
        data = self.finished.get(key)
        if data is not None:
            record: dict[str, Any] = json.loads(data)
            if record["solver"] is None:  # the search after the race may have ended since
                record.update(await solver_fields(self.sessions, record))
                if record["solver"] is not None:
                    data = encode(record)
                    self.finished.put(key, data)
            return record, data
        if not ID.fullmatch(race_id):
            return None, None
        found = await race_record(self.sessions, race_id, datetime.now(UTC))
        if found is None:
            return None, None
        data = encode(found)
        if found["logs"] is not None:  # final from now on, but for the solver's verdict
            self.finished.put(key, data)
        return found, data
