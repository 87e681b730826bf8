"""Bounded tables for the HTTP API: a token bucket per client address, and a cache of answers;
and the count of work under way per client (the solver's, ``server.rooms.solver``).

Pure: no I/O, no clock of their own (the caller passes the time), so they are tested with plain
numbers. Both are bounded, whatever clients send: a table keyed by what clients choose (their
address, a race id) that grew without end would be a way to exhaust the server's memory.
"""

from __future__ import annotations

import ipaddress
import math
from collections import OrderedDict
from collections.abc import Collection
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K")


def client_host(peer: str, forwarded_for: str | None, trusted_proxies: frozenset[str]) -> str:
    """Who a connection is from. Behind a reverse proxy every connection's peer is the proxy:
    when the peer is one of ``trusted_proxies``, the client is the last address its
    ``X-Forwarded-For`` names that is not itself a trusted proxy (the addresses before it are
    whatever the client chose to send, and prove nothing)."""
    if peer not in trusted_proxies or not forwarded_for:
        return peer
    for hop in reversed([hop.strip() for hop in forwarded_for.split(",")]):
        if hop and hop not in trusted_proxies:
            return hop
    return peer


def client_key(host: str) -> str:
    """Whom a request counts against: its IPv4 address; for IPv6, the /64 network it is from
    (one subscriber usually holds a whole /64, and could otherwise take a new address for each
    request). An IPv4 address mapped into IPv6 is that IPv4 address."""
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


@dataclass(slots=True)
class _Bucket:
    tokens: float
    stamp: float


class AddressLimiter:
    """A token bucket per client: ``rate`` requests a second on average, bursts up to ``burst``.

    The table holds at most ``max_clients`` buckets, the least recently seen forgotten first. A
    forgotten client starts again with a full bucket, which is what it would have by then
    anyway unless more than ``max_clients`` others were seen since its last request."""

    def __init__(self, rate: float, burst: float, max_clients: int) -> None:
        if rate <= 0 or burst < 1 or max_clients < 1:
            raise ValueError("a rate limit needs rate > 0, burst >= 1 and max_clients >= 1")
        self.rate, self.burst, self.max_clients = rate, burst, max_clients
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def __len__(self) -> int:
        return len(self._buckets)

    def __contains__(self, client: str) -> bool:
        return client in self._buckets

    def take(self, client: str, now: float) -> float:
        """Count one request of ``client`` at time ``now`` (seconds, any monotonic origin):
        0.0 if it is allowed, else how many seconds until the next one would be."""
        bucket = self._buckets.get(client)
        if bucket is None:
            bucket = self._buckets[client] = _Bucket(self.burst, now)
            if len(self._buckets) > self.max_clients:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(client)
            bucket.tokens = min(
                self.burst, bucket.tokens + max(0.0, now - bucket.stamp) * self.rate
            )
            bucket.stamp = max(bucket.stamp, now)
        if bucket.tokens >= 1:
            bucket.tokens -= 1
            return 0.0
        return (1 - bucket.tokens) / self.rate


def retry_after(wait_s: float) -> str:
    """A ``Retry-After`` value: whole seconds, at least 1."""
    return str(max(1, math.ceil(wait_s)))


class LruCache(Generic[K]):
    """Encoded answers by key, at most ``max_bytes`` of them (each counted with ``OVERHEAD``
    bytes more, for the key and the bookkeeping); the least recently used go first. An answer
    bigger than the whole cache is not kept."""

    OVERHEAD = 256

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.size = 0
        self._items: OrderedDict[K, bytes] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: K) -> bool:
        return key in self._items

    def get(self, key: K) -> bytes | None:
        data = self._items.get(key)
        if data is not None:
            self._items.move_to_end(key)
        return data

    def put(self, key: K, data: bytes) -> None:
        old = self._items.pop(key, None)
        if old is not None:
            self.size -= len(old) + self.OVERHEAD
        cost = len(data) + self.OVERHEAD
        if cost > self.max_bytes:
            return
        self._items[key] = data
        self.size += cost
        while self.size > self.max_bytes:
            _, dropped = self._items.popitem(last=False)
            self.size -= len(dropped) + self.OVERHEAD


# -- work under way per client (issue 23) ---------------------------------------------------------


class InFlight:
    """Work under way (searched or waiting), at most ``per_client`` of it for each client and
    ``total`` in all. A piece of work may count against several clients (a race's verdict,
    against each of its racers' addresses). Bounded: a client is in the table only while work
    of theirs is under way, and at most ``total`` pieces of work are."""

    def __init__(self, per_client: int, total: int) -> None:
        if per_client < 1 or total < 1:
            raise ValueError("work under way needs per_client >= 1 and total >= 1")
        self.per_client, self.total = per_client, total
        self.count = 0
        self._by_client: dict[str, int] = {}

    def __len__(self) -> int:
        """Clients with work under way."""
        return len(self._by_client)

    def of(self, client: str) -> int:
        """How much of ``client``'s work is under way."""
        return self._by_client.get(client, 0)

    def refusal(self, clients: Collection[str]) -> str | None:
        """Why one more piece of work for ``clients`` may not begin (``"total"`` or
        ``"client"``), or None."""
        if self.count >= self.total:
            return "total"
        if any(self.of(client) >= self.per_client for client in clients):
            return "client"
        return None

    def begin(self, clients: Collection[str]) -> None:
        """Count a piece of work for ``clients`` (``refusal`` said it may begin)."""
        self.count += 1
        for client in clients:
            self._by_client[client] = self.of(client) + 1

    def end(self, clients: Collection[str]) -> None:
        """That piece of work is done (or given up)."""
        self.count -= 1
        for client in clients:
            left = self.of(client) - 1
            if left > 0:
                self._by_client[client] = left
            else:
                del self._by_client[client]
