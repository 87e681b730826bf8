"""The ``patience-race`` command: the client commands of ``clients.cli`` and the server's own,
``serve``, ``db upgrade``, ``ratings rebuild`` and ``leaderboards rebuild``, which start or
look after a server.

Each server command imports what it runs inside its function, so that a client command
(``patience-race games``) does not load the server's settings, database and network modules.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from clients import cli

if TYPE_CHECKING:
    from server.settings import Settings

SERVER_COMMANDS = """\
    patience-race serve [--host H] [--port P] [--database-url URL]   run the race server
    patience-race db upgrade [--database-url URL]                    apply the migrations
    patience-race leaderboards rebuild [--database-url URL] [--redis-url URL]  refill the rank cache
    patience-race ratings rebuild [--database-url URL]   rate every stored race again, in order"""
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
