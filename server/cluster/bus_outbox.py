"""What a worker writes to Redis, in order, and the wire format of what workers publish to each
other (``server.cluster.redis_bus``).

Each worker reads one channel, ``{prefix}to:{id}``. What goes to it, in order from each sender,
are JSON objects, each saying its kind in ``k`` (``server.cluster.hops`` makes and reads them):
requests of other workers' connections for its rooms (``req``), the end of each such request
(``done``), frames for its connections (``frames``), a connection closed (``gone``),
connections whose room has closed (``out``), connections whose room has moved (``moved``) and
connections the quick race's matcher matched (``matched``, ``server.cluster.redis_quick``).
Each published message is a JSON list of them: whatever a worker queued for one other while its
last pipeline was under way. The other writes (a room released, the public list) go in the same
pipelines, in the order they were queued.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import redis.asyncio as redis
from redis.exceptions import RedisError

from server.speedups import Dumps

log = logging.getLogger("patience_race.bus")

Queued = tuple[str, str] | Callable[[Any], None]
"""A message to publish (channel, payload), or another write (given the pipeline)."""


class BusOutbox:
    """Everything this worker publishes or writes to Redis, queued, and sent in that order in
    pipelines of as many as are waiting. A failure is ``failed``'s to report (``down`` says
    whether Redis is known to be away already); a channel nobody reads is ``nobody_listening``'s,
    given the worker it is for."""

    def __init__(
        self,
        client: redis.Redis,
        key: Callable[..., str],
        dumps: Dumps,
        failed: Callable[[Exception], None],
        down: Callable[[], bool],
        nobody_listening: Callable[[str], None],
    ) -> None:
        self.redis, self._key, self._dumps = client, key, dumps
        self._failed, self._down, self._nobody_listening = failed, down, nobody_listening
        self._outgoing: asyncio.Queue[Queued] = asyncio.Queue()
        """Messages to publish (channel, payload), and other writes (given the pipeline)."""

    def publish(self, worker: str, data: dict[str, Any]) -> None:
        self._outgoing.put_nowait((self._key("to", worker), self._dumps(data)))

    def put(self, write: Callable[[Any], None]) -> None:
        """Another write, made with the pipeline in its turn."""
        self._outgoing.put_nowait(write)

    async def send_forever(self) -> None:
        """Everything published or released, in the order it was queued, in pipelines of as
        many as are waiting."""
        while True:
            batch = [await self._outgoing.get()]
            while not self._outgoing.empty() and len(batch) < 1000:
                batch.append(self._outgoing.get_nowait())
            try:
                await self.write(batch)
            except RedisError as error:
                (log.debug if self._down() else log.warning)(
                    "the Redis bus could not send %d messages: %s", len(batch), error
                )
                self._failed(error)
            except Exception:
                log.exception("the Redis bus could not send %d messages", len(batch))

    async def flush(self) -> None:
        batch = []
        while not self._outgoing.empty():
            batch.append(self._outgoing.get_nowait())
        if batch:
            await self.write(batch)

    async def write(self, batch: list[Queued]) -> None:
        """One pipeline, and one ``PUBLISH`` per channel of the messages queued for it, as a
        JSON list in the order they were queued: under load a move's frames and the end of its
        request go together (each command costs redis-py more than its bytes do). Then the
        other writes (releases, the public list), in the order they were queued."""
        by_channel: dict[str, list[str]] = {}
        writes = []
        for queued in batch:
            if isinstance(queued, tuple):
                by_channel.setdefault(queued[0], []).append(queued[1])
            else:
                writes.append(queued)
        async with self.redis.pipeline(transaction=False) as pipe:
            for channel, payloads in by_channel.items():
                pipe.publish(channel, f"[{','.join(payloads)}]")
            for write in writes:
                write(pipe)
            answers = await pipe.execute()
        for channel, listening in zip(by_channel, answers, strict=False):
            if listening == 0:
                self._nobody_listening(channel.removeprefix(self._key("to", "")))
