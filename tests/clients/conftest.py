"""The clients are tested against a real server and database: the server tests' fixtures.

``hopping``: every ``RaceClient`` stays on the worker it reached, ignoring ``reconnect_to``, so
that its requests take the hop and it is closed with 1012 when the room's worker goes.
"""

from typing import Any

import pytest

from clients.sdk import RaceClient
from tests.server.conftest import (  # noqa: F401
    database_kind,
    database_url,
    redis_url,
    server,
    sessions,
)


@pytest.fixture
def hopping(monkeypatch: pytest.MonkeyPatch) -> None:
    connect = RaceClient.connect

    async def staying(url: str, record: bool = False, follow_reconnect_to: bool = True,
                      **options: Any) -> RaceClient:
        return await connect(url, record, False, **options)

    monkeypatch.setattr(RaceClient, "connect", staying)
