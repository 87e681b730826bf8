"""The top costs in a py-spy profile of the server, as Markdown tables.

    python bench/profile_summary.py PROFILE.txt [--top 25]

PROFILE.txt is py-spy's raw (collapsed) output, one stack a line with its sample count, as
``bench/load.py --profile FILE.txt`` writes it (for a server of several workers, py-spy's
``--subprocesses``: the samples of all its processes together). Only the event loops' threads
are summed up:
stacks rooted in ``Thread._bootstrap`` are worker threads (aiosqlite's, the executor's), which
py-spy samples while they wait as well as while they work; their share is given on its own line
(bench/load.py prints the CPU each thread really used). Functions are named without their line
numbers, so that every line of a function adds up. "Inclusive" counts the samples in which a
function is anywhere on the stack (once per sample), "self" those in which it is on top. Areas
group the stacks by the innermost frame that belongs to a known area.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

LINE_NUMBER = re.compile(r":\d+\)$")
AREAS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("json out (pydantic model_dump_json)", ("model_dump_json",)),
    ("pydantic validation and models", ("pydantic/", "validate_python", "model_copy")),
    ("json in (json.loads)", ("json/decoder.py", "json/__init__.py")),
    ("json in (orjson)", ("orjson",)),
    (
        "redis bus (server/cluster/redis_bus.py and its parts, redis-py)",
        (
            "server/cluster/redis_bus.py",
            "server/cluster/bus_outbox.py",
            "server/cluster/hops.py",
            "server/cluster/directory.py",
            "redis/",
        ),
    ),
    ("logging", ("logging/",)),
    ("database: sqlalchemy", ("sqlalchemy/",)),
    ("database: aiosqlite thread and sqlite3", ("aiosqlite/", "sqlite3")),
    ("database: asyncpg", ("asyncpg/",)),
    ("rules engine", ("engine/",)),
    # The race and the rest of the server, by path in this tree and in trees before issue 25
    # (server/race.py, server/app.py, ...), so that profiles of both sum up alike: a frame of
    # the server's own code that calls nothing known counts as the server's, not the loop's.
    (
        "race state machine (server/core/, before: server/race.py, room_events.py)",
        ("server/core/", "server/race.py", "server/room_events.py"),
    ),
    ("shell: the rest of server/ (connection, rooms, delivery, writer, ...)", ("server/",)),
    ("websockets", ("websockets/",)),
    ("asyncio event loop and sockets", ("asyncio/", "selectors.py", "socket.py", "uvloop")),
)


def stacks(path: Path) -> Iterator[tuple[list[str], int]]:
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            frames = [LINE_NUMBER.sub(")", frame) for frame in stack.split(";")]
            while frames and frames[0].startswith("process "):  # py-spy --subprocesses
                frames.pop(0)
            if frames:
                yield frames, int(count)


def area(stack: list[str]) -> str:
    for frame in reversed(stack):
        for name, markers in AREAS:
            if any(marker in frame for marker in markers):
                return name
    return "other"


def summary(path: Path, top: int) -> str:
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    areas: Counter[str] = Counter()
    total = workers = 0
    for stack, count in stacks(path):
        if stack[0].startswith("Thread._bootstrap"):
            workers += count
            continue
        total += count
        own[stack[-1]] += count
        areas[area(stack)] += count
        for frame in set(stack):
            inclusive[frame] += count
    if not total:
        return f"{path}: no samples"
    lines = [
        f"# {path.name}: {total} samples of the event loop's thread (and {workers} of "
        "worker threads, not counted below)",
        "",
        "| area (innermost known frame) | samples | share |",
        "| --- | ---: | ---: |",
    ]
    lines += [f"| {name} | {count} | {count / total:.1%} |" for name, count in areas.most_common()]
    for title, counter in (("Self", own), ("Inclusive", inclusive)):
        lines += ["", f"| {title}: function | samples | share |", "| --- | ---: | ---: |"]
        lines += [
            f"| `{name}` | {count} | {count / total:.1%} |"
            for name, count in counter.most_common(top)
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("profile", type=Path, help="py-spy raw output")
    parser.add_argument("--top", type=int, default=25, help="functions listed (default 25)")
    args = parser.parse_args()
    print(summary(args.profile, args.top))


if __name__ == "__main__":
    main()
