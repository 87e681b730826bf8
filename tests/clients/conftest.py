"""The clients are tested against a real server and database: the server tests' fixtures."""

from tests.server.conftest import database_kind, database_url, server, sessions  # noqa: F401
