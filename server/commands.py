"""The ``patience-race`` command: the client commands of ``clients.cli`` and the server's own,
``serve``, ``db upgrade``, ``ratings rebuild``, ``leaderboards rebuild`` and ``fairplay``, which
start or look after a server.

Each server command imports what it runs inside its function, so that a client command
(``patience-race games``) does not load the server's settings, database and network modules.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from clients import cli

if TYPE_CHECKING:
    from server.settings import Settings
    from server.storage.fairplay import Check

SERVER_COMMANDS = """\
    patience-race serve [--host H] [--port P] [--database-url URL]   run the race server
    patience-race db upgrade [--database-url URL]                    apply the migrations
    patience-race leaderboards rebuild [--database-url URL] [--redis-url URL]  refill the rank cache
    patience-race ratings rebuild [--database-url URL]   rate every stored race again, in order
    patience-race fairplay list | show RACE | clear RACE | ban PLAYER [--database-url URL]
                                          review the results the fair-play check held"""
"""The server's commands, one a line, as ``--help`` lists them for whoever runs a server."""


def server_settings(args: argparse.Namespace) -> Settings:
    from server.settings import Settings

    overrides = {
        key: value
        for key, value in (
            ("host", getattr(args, "host", None)),
            ("port", getattr(args, "port", None)),
            ("database_url", args.database_url),
            ("redis_url", getattr(args, "redis_url", None)),
            ("workers", getattr(args, "workers", None)),
        )
        if value is not None
    }
    return Settings(**overrides)


def cmd_serve(args: argparse.Namespace) -> int:
    from server.main import run_server
    from server.speedups import run

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(message)s")
    settings = server_settings(args)
    if settings.worker_count > 1:
        if settings.redis_url is None:
            print(
                "patience-race serve: --workers above 1 needs --redis-url (or "
                "PATIENCE_RACE_REDIS_URL): Redis carries the rooms between workers",
                file=sys.stderr,
            )
            return 2
        from server.cluster.workers import serve_workers

        return serve_workers(settings)
    run(run_server(settings), settings.event_loop)
    return 0


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    from server.storage.engine import upgrade_database

    settings = server_settings(args)
    asyncio.run(upgrade_database(settings.database_url))
    print(f"database at {settings.safe_database_url} is at the latest migration")
    return 0


def cmd_ratings_rebuild(args: argparse.Namespace) -> int:
    from server.storage.engine import make_engine, make_sessionmaker
    from server.storage.ratings import rebuild

    settings = server_settings(args)

    async def run() -> int:
        engine = make_engine(settings.database_url)
        try:
            return await rebuild(make_sessionmaker(engine))
        finally:
            await engine.dispose()

    rated = asyncio.run(run())
    print(
        f"ratings rebuilt from {rated} rated race{'s' if rated != 1 else ''} "
        f"in {settings.safe_database_url}"
    )
    return 0


def cmd_leaderboards_rebuild(args: argparse.Namespace) -> int:
    from server.cluster.rank_cache import RedisRanks
    from server.storage.engine import make_engine, make_sessionmaker

    settings = server_settings(args)
    if settings.redis_url is None:
        print(
            "patience-race leaderboards rebuild: no rank cache to rebuild without --redis-url "
            "(or PATIENCE_RACE_REDIS_URL); the database alone answers every board",
            file=sys.stderr,
        )
        return 2
    redis_url = settings.redis_url

    async def rebuild() -> int:
        engine = make_engine(settings.database_url)
        cache = RedisRanks(redis_url, settings.redis_prefix)
        try:
            return await cache.rebuild(make_sessionmaker(engine))
        finally:
            await cache.close()
            await engine.dispose()

    lines = asyncio.run(rebuild())
    print(f"rank cache rebuilt from {settings.safe_database_url}: {lines:,} lines")
    return 0


ID_HELP = "the {}'s id (after -- when it begins with -: patience-race fairplay show -- -x1)"
"""Ids are URL-safe text, and one in 64 begins with "-", which would read as an option."""


def cmd_fairplay(args: argparse.Namespace) -> int:
    """The operator's review of fair play (``server.storage.fairplay``): the results held,
    one race's checks, clearing a race's held results, banning a player. After a clear or a
    ban the rank cache is rebuilt, with ``--redis-url``."""
    from datetime import UTC, datetime

    from server.cluster.rank_cache import RedisRanks
    from server.storage import fairplay
    from server.storage.engine import make_engine, make_sessionmaker

    settings = server_settings(args)
    action: str = args.fairplay_command

    async def run() -> int:
        engine = make_engine(settings.database_url)
        sessions = make_sessionmaker(engine)
        try:
            if action == "list":
                return show_checks(await fairplay.flagged_checks(sessions), args.json)
            if action == "show":
                checks = await fairplay.race_checks(sessions, args.race)
                if not checks:
                    print(f"race {args.race} has no fair-play check", file=sys.stderr)
                    return 1
                return show_checks(checks, args.json)
            now = datetime.now(UTC)
            if action == "clear":
                cleared = await fairplay.clear(sessions, args.race, now)
                if not cleared:
                    print(f"race {args.race} has no result held for review", file=sys.stderr)
                    return 1
                print(
                    f"race {args.race}: back on the boards and in the ratings: {', '.join(cleared)}"
                )
            elif not await fairplay.ban(sessions, args.player, now):
                print(f"no player {args.player}", file=sys.stderr)
                return 1
            else:
                print(f"player {args.player} banned: their results are on no board, in no rating")
            if settings.redis_url is not None:
                cache = RedisRanks(settings.redis_url, settings.redis_prefix)
                try:
                    await cache.rebuild(sessions)
                finally:
                    await cache.close()
            return 0
        finally:
            await engine.dispose()

    return asyncio.run(run())


def show_checks(checks: Sequence[Check], as_json: bool) -> int:
    """Print checks, a few lines each (or as JSON)."""
    if as_json:
        print(json.dumps([check.to_json() for check in checks], indent=2))
        return 0
    if not checks:
        print("no result is held for review")
    for check in checks:
        signals = check.signals
        print(
            f"race {check.race_id}  {check.rule_set}  player {check.player_id} "
            f"({cli.printable(check.name)}){' BANNED' * check.banned}: {check.status}"
            f"{', because of ' + ', '.join(signals['reasons']) if signals['reasons'] else ''}"
        )
        print(
            f"  {signals['moves']} moves timed: fast replies {figure(signals['fast_share'])}, "
            f"interval CV {figure(signals['interval_cv'])}, median "
            f"{figure(signals['median_ms'], 0)} ms; {signals['judged']} positions judged: "
            f"solver's move {figure(signals['agreement'])}, kept winnable "
            f"{figure(signals['kept'])}"
        )
        reviewed = "" if check.reviewed_at is None else f", reviewed {check.reviewed_at:%F %T}"
        print(f"  checked {check.checked_at:%F %T} UTC{reviewed}")
    return 0


def figure(value: float | None, places: int = 2) -> str:
    return "-" if value is None else f"{value:.{places}f}"


def add_server_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The server's commands (``SERVER_COMMANDS``)."""
    serve = commands.add_parser("serve", help="run the race server")
    serve.add_argument("--host", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, help="port (default 8765)")
    serve.add_argument(
        "--database-url",
        help="SQLAlchemy URL; default: a SQLite file here, or PATIENCE_RACE_DATABASE_URL",
    )
    serve.add_argument(
        "--redis-url",
        help="Redis, for rooms across workers and machines "
        "(redis://HOST:6379/0); default: none, one process",
    )
    serve.add_argument(
        "--workers", type=int, help="worker processes (default: the cores with --redis-url, else 1)"
    )
    serve.set_defaults(run=cmd_serve)
    db = commands.add_parser("db", help="database maintenance")
    db_commands = db.add_subparsers(dest="db_command", required=True, metavar="DB_COMMAND")
    upgrade = db_commands.add_parser("upgrade", help="apply the migrations")
    upgrade.add_argument("--database-url", help="SQLAlchemy URL (as for serve)")
    upgrade.set_defaults(run=cmd_db_upgrade)

    ratings = commands.add_parser("ratings", help="the players' ratings")
    ratings_commands = ratings.add_subparsers(
        dest="ratings_command", required=True, metavar="RATINGS_COMMAND"
    )
    rebuild = ratings_commands.add_parser(
        "rebuild", help="recompute every rating from the stored races, in the order they finished"
    )
    rebuild.add_argument("--database-url", help="SQLAlchemy URL (as for serve)")
    rebuild.set_defaults(run=cmd_ratings_rebuild)

    fair = commands.add_parser("fairplay", help="review the results the fair-play check held")
    fair_commands = fair.add_subparsers(
        dest="fairplay_command", required=True, metavar="FAIRPLAY_COMMAND"
    )
    listing = fair_commands.add_parser("list", help="the results held for review, oldest first")
    show = fair_commands.add_parser("show", help="a race's fair-play checks, every racer's")
    show.add_argument("race", metavar="RACE", help=ID_HELP.format("race"))
    cleared = fair_commands.add_parser(
        "clear", help="put a race's held results back on the boards and in the ratings"
    )
    cleared.add_argument("race", metavar="RACE", help=ID_HELP.format("race"))
    banned = fair_commands.add_parser(
        "ban", help="ban a player: every result of theirs leaves every board and rating"
    )
    banned.add_argument("player", metavar="PLAYER", help=ID_HELP.format("player"))
    for command in (listing, show):
        command.add_argument("--json", action="store_true", help="print the checks as JSON")
    for command in (listing, show, cleared, banned):
        command.add_argument("--database-url", help="SQLAlchemy URL (as for serve)")
        command.set_defaults(run=cmd_fairplay)
    for command in (cleared, banned):
        command.add_argument(
            "--redis-url", help="Redis URL (as for serve): its rank cache is rebuilt after"
        )

    boards = commands.add_parser("leaderboards", help="leaderboard maintenance")
    board_commands = boards.add_subparsers(
        dest="leaderboards_command", required=True, metavar="LEADERBOARDS_COMMAND"
    )
    rebuild = board_commands.add_parser(
        "rebuild",
        help="rebuild the Redis rank cache from the database (the server also does at start)",
    )
    rebuild.add_argument("--database-url", help="SQLAlchemy URL (as for serve)")
    rebuild.add_argument("--redis-url", help="Redis URL (as for serve)")
    rebuild.set_defaults(run=cmd_leaderboards_rebuild)


def build_parser() -> argparse.ArgumentParser:
    parser, commands = cli.command_parser(
        f"{cli.INTRODUCTION}\n\n{cli.COMMANDS}\n{SERVER_COMMANDS}"
    )
    cli.add_commands(commands)
    add_server_commands(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command, a client's or the server's (``clients.cli.run``)."""
    return cli.run(build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
