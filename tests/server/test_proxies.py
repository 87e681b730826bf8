"""Behind a reverse proxy (a load balancer in front of several servers), limits per address
count the client the proxy names in X-Forwarded-For, and only when the proxy is trusted."""

from __future__ import annotations

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

from server.core.limits import client_host
from tests.server.test_abuse import reply, server_with
from tests.server.test_server import Sessions

PROXY = "127.0.0.1"


def test_the_client_is_the_last_untrusted_hop_a_trusted_proxy_names() -> None:
    trusted = frozenset({PROXY, "10.0.0.2"})
    assert client_host(PROXY, "203.0.113.7", trusted) == "203.0.113.7"
    # whatever the client put in front proves nothing; the hop the proxy saw is the last one
    assert client_host(PROXY, "198.51.100.1, 203.0.113.7", trusted) == "203.0.113.7"
    assert client_host(PROXY, "203.0.113.7, 10.0.0.2", trusted) == "203.0.113.7"
    assert client_host("203.0.113.9", "198.51.100.1", trusted) == "203.0.113.9"  # not a proxy
    assert client_host(PROXY, None, trusted) == PROXY
    assert client_host(PROXY, "203.0.113.7", frozenset()) == PROXY


async def test_connections_behind_a_trusted_proxy_count_per_client(
    sessions: Sessions, database_url: str
) -> None:
    async with server_with(
        database_url, connections_per_address=1, trusted_proxies=frozenset({PROXY})
    ) as server:
        ann = await connect(server.url, additional_headers={"X-Forwarded-For": "203.0.113.1"})
        bob = await connect(server.url, additional_headers={"X-Forwarded-For": "203.0.113.2"})
        for ws, name in ((ann, "Ann"), (bob, "Bob")):
            await ws.send(f'{{"type": "hello", "name": "{name}"}}')
            assert (await reply(ws))["type"] == "welcome"
        with pytest.raises(InvalidStatus) as refused:
            await connect(server.url, additional_headers={"X-Forwarded-For": "203.0.113.1"})
        assert refused.value.response.status_code == 429
        await ann.close()
        await bob.close()


async def test_an_untrusted_peer_cannot_pose_as_many_clients(
    sessions: Sessions, database_url: str
) -> None:
    async with server_with(database_url, connections_per_address=1) as server:
        held = await connect(server.url, additional_headers={"X-Forwarded-For": "203.0.113.1"})
        with pytest.raises(InvalidStatus) as refused:
            await connect(server.url, additional_headers={"X-Forwarded-For": "203.0.113.2"})
        assert refused.value.response.status_code == 429
        await held.close()
