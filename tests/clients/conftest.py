"""The clients are tested against a real server and database: the server tests' fixtures.

``server``: the server tests' one, but where a client may say where it comes from, so that a
rated race can be raced by two clients of this one machine (``rated_racer``), and every rated
player is on the rated board.

``hopping``: every ``RaceClient`` stays on the worker it reached, ignoring ``reconnect_to``, so
that its requests take the hop and it is closed with 1012 when the room's worker goes.
"""

from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from clients.sdk import RaceClient
from tests.server.conftest import (  # noqa: F401
    database_kind,
    database_url,
    redis_url,
    sessions,
)
from tests.server.test_server import Server, make_settings, start_server, stop_server

RATED_BETWEEN_CLIENTS: dict[str, Any] = {
    "trusted_proxies": frozenset({"127.0.0.1"}),
    "rating_provisional_s": 0.0,
    "rating_board_min_races": 1,
}
"""127.0.0.1 is taken for a reverse proxy: a client that sends ``X-Forwarded-For`` comes from
the address it names (one that does not, from 127.0.0.1), as racers on machines of their own;
the tests' identities are new, and race rated all the same."""


@pytest_asyncio.fixture
async def server(
    sessions: async_sessionmaker[AsyncSession],  # noqa: F811
    database_url: str,  # noqa: F811
) -> AsyncIterator[Server]:
    """The real server on an ephemeral port, on an emptied database (``sessions``)."""
    running = await start_server(make_settings(database_url, **RATED_BETWEEN_CLIENTS))
    try:
        yield running
    finally:
        await stop_server(running)


async def rated_racer(server: Server, name: str) -> RaceClient:
    """A racer from an address of its own (``RATED_BETWEEN_CLIENTS``), as a machine apart from
    the client under test: a race between the two may be rated."""
    client = await RaceClient.connect(
        server.url, additional_headers={"X-Forwarded-For": "10.9.0.2"}
    )
    await client.hello(name=name)
    return client


@pytest.fixture
def hopping(monkeypatch: pytest.MonkeyPatch) -> None:
    connect = RaceClient.connect

    async def staying(
        url: str, record: bool = False, follow_reconnect_to: bool = True, **options: Any
    ) -> RaceClient:
        return await connect(url, record, False, **options)

    monkeypatch.setattr(RaceClient, "connect", staying)
