"""What sending costs a worker on the Redis bus: one PUBLISH per message, or one per channel.

    python bench/bus_bench.py [--messages 20000] [--batch 8] [--redis-url URL] [--repeat 5]

Under load a worker queues several messages for another worker at once (a move's frames for
the connections there and the end of its request), and ``BusOutbox.write`` sends everything
queued in one pipeline. The 2-worker profile of issue 11 showed the bus at about a quarter of
the workers' samples, most of it redis-py building and sending commands. This sends
``--messages`` messages of a move's typical size to two workers' channels, in pipelines of
``--batch``, two ways: one ``PUBLISH`` per message (as the bus did first), and
``BusOutbox.write`` (one ``PUBLISH`` per channel per pipeline, the messages as a JSON list). A
subscriber on each channel reads them all, so the figures include Redis's answers.

Figures: this process's CPU time (user + system) per message, median of ``--repeat`` passes, and
the ratio. Markdown to stdout. Run by hand; never a timing assertion.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as redis  # noqa: E402

from server.cluster.bus_outbox import BusOutbox  # noqa: E402
from server.speedups import json_dumps  # noqa: E402

FRAME = json.dumps(
    {
        "type": "progress",
        "seq": 4711,
        "player_id": "p" * 22,
        "on_foundations": 17,
        "moves": 42,
        "status": "racing",
    }
)


def messages(count: int) -> list[tuple[str, str]]:
    """Frames for two connections on one of two workers, alternating workers."""
    return [
        (f"to:{index % 2}", json.dumps({"k": "frames", "conns": ["a" * 16], "frame": FRAME}))
        for index in range(count)
    ]


async def one_publish_each(connection: redis.Redis, batch: list[tuple[str, str]]) -> None:
    async with connection.pipeline(transaction=False) as pipe:
        for channel, payload in batch:
            pipe.publish(channel, payload)
        await pipe.execute()


def outbox_of(connection: redis.Redis, prefix: str) -> BusOutbox:
    """The bus's outbox alone (no bus, no loops): the real code is measured."""
    return BusOutbox(
        connection,
        lambda *parts: prefix + ":".join(parts),
        json_dumps("json"),
        failed=lambda error: None,
        down=lambda: False,
        nobody_listening=lambda worker: None,
    )


async def read(connection: redis.Redis, channels: list[str], expected: int) -> None:
    pubsub = connection.pubsub(ignore_subscribe_messages=True)
    await pubsub.subscribe(*channels)
    seen = 0
    async for message in pubsub.listen():
        data = json.loads(message["data"])
        seen += len(data) if isinstance(data, list) else 1
        if seen >= expected:
            break
    await pubsub.aclose()


async def one_pass(url: str, way: str, count: int, batch_size: int) -> float:
    """CPU seconds of this process to send ``count`` messages (and read them back)."""
    prefix = f"bench-{secrets.token_hex(3)}:"
    sender, receiver = redis.from_url(url), redis.from_url(url)
    outbox = outbox_of(sender, prefix)
    queued = [(prefix + channel, payload) for channel, payload in messages(count)]
    reading = asyncio.create_task(read(receiver, [prefix + "to:0", prefix + "to:1"], count))
    await asyncio.sleep(0.1)  # subscribed
    began = time.process_time()
    for start in range(0, count, batch_size):
        batch = queued[start : start + batch_size]
        if way == "one PUBLISH per message":
            await one_publish_each(sender, batch)
        else:
            await outbox.write(batch)
    await asyncio.wait_for(reading, 60)
    spent = time.process_time() - began
    await sender.aclose()
    await receiver.aclose()
    return spent


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=20000)
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    args = parser.parse_args()
    ways = ("one PUBLISH per message", "BusOutbox.write")
    spent: dict[str, list[float]] = {way: [] for way in ways}
    for number in range(args.repeat):
        for way in ways if number % 2 == 0 else reversed(ways):
            print(f"pass {number + 1}: {way}", file=sys.stderr)
            spent[way].append(await one_pass(args.redis_url, way, args.messages, args.batch))
    per = {way: statistics.median(times) / args.messages * 1e6 for way, times in spent.items()}
    print(
        f"{args.messages} messages to two workers' channels, pipelines of {args.batch}, "
        f"median of {args.repeat} passes (CPU of the sending and reading process)\n"
    )
    print("| how | µs of CPU per message |\n| --- | ---: |")
    for way in ways:
        print(f"| {way} | {per[way]:.1f} |")
    print(f"| ratio | {per[ways[1]] / per[ways[0]]:.2f} |")


if __name__ == "__main__":
    asyncio.run(main())
