"""The bounded tables of server/core/limits.py, as pure code with plain numbers for the time.

(On one machine every client of a real server is 127.0.0.1: the table's being per address is
tested here; tests/server/net/test_http.py sends the 429 end to end.)"""

from __future__ import annotations

import pytest

from server.core.limits import AddressLimiter, InFlight, LruCache, client_key, retry_after


def test_a_burst_then_one_request_per_token_earned() -> None:
    limiter = AddressLimiter(rate=2.0, burst=3, max_clients=10)
    assert [limiter.take("a", 100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.take("a", 100.0) == pytest.approx(0.5)
    assert limiter.take("a", 100.25) == pytest.approx(0.25)  # refused: not a whole token yet
    assert limiter.take("a", 100.5) == 0.0
    assert limiter.take("a", 100.5) == pytest.approx(0.5)
    assert [limiter.take("a", 200.0) for _ in range(4)][-1] > 0  # refills to the burst, no more


def test_each_address_has_its_own_bucket() -> None:
    limiter = AddressLimiter(rate=1.0, burst=2, max_clients=10)
    for _ in range(50):
        limiter.take("10.0.0.1", 5.0)
    assert limiter.take("10.0.0.1", 5.0) > 0
    assert limiter.take("10.0.0.2", 5.0) == 0.0
    assert limiter.take("10.0.0.2", 5.0) == 0.0
    assert limiter.take("10.0.0.2", 5.0) > 0


def test_the_table_is_bounded_and_forgets_the_least_recently_seen() -> None:
    limiter = AddressLimiter(rate=1.0, burst=1, max_clients=3)
    for number in range(1000):
        limiter.take(f"10.0.{number // 256}.{number % 256}", 0.0)
        assert len(limiter) <= 3
    limiter = AddressLimiter(rate=1.0, burst=1, max_clients=3)
    for address in ["a", "b", "c"]:
        limiter.take(address, 0.0)
    limiter.take("a", 0.0)  # seen again: now b is the least recently seen
    limiter.take("d", 0.0)
    assert "b" not in limiter and {"a", "c", "d"} == {x for x in "abcd" if x in limiter}
    assert limiter.take("a", 0.0) > 0  # a is still remembered, and still empty


def test_time_going_backwards_earns_nothing() -> None:
    limiter = AddressLimiter(rate=1.0, burst=1, max_clients=3)
    assert limiter.take("a", 10.0) == 0.0
    assert limiter.take("a", 5.0) > 0
    assert limiter.take("a", 10.5) > 0
    assert limiter.take("a", 11.0) == 0.0


def test_bad_limits_are_refused() -> None:
    for rate, burst, clients in [(0, 1, 1), (1, 0.5, 1), (1, 1, 0)]:
        with pytest.raises(ValueError):
            AddressLimiter(rate, burst, clients)


def test_a_client_is_an_ipv4_address_or_an_ipv6_64() -> None:
    assert client_key("192.0.2.7") == "192.0.2.7"
    assert (
        client_key("2001:db8:1:2:aaaa::1")
        == client_key("2001:db8:1:2:ffff::9")
        == ("2001:db8:1:2::/64")
    )
    assert client_key("2001:db8:1:3::1") != client_key("2001:db8:1:2::1")
    assert client_key("::ffff:192.0.2.7") == "192.0.2.7"
    assert client_key("fe80::1%eth0") == "fe80::/64"
    assert client_key("") == ""


def test_retry_after_is_whole_seconds_and_at_least_one() -> None:
    assert [retry_after(wait) for wait in (0.001, 0.5, 1.0, 1.2, 30.0)] == [
        "1",
        "1",
        "1",
        "2",
        "30",
    ]


# -- the cache ----------------------------------------------------------------------------------


def test_the_cache_keeps_what_fits_and_drops_the_least_recently_used() -> None:
    cache: LruCache[str] = LruCache(max_bytes=3 * (100 + LruCache.OVERHEAD))
    for key in "abc":
        cache.put(key, key.encode() * 100)
    assert cache.get("a") == b"a" * 100  # a is now the most recently used
    cache.put("d", b"d" * 100)
    assert "b" not in cache and all(key in cache for key in "acd")
    assert cache.size == 3 * (100 + LruCache.OVERHEAD) and len(cache) == 3
    cache.put("big", b"x" * 250)  # takes the room of two
    assert [key in cache for key in ("a", "c", "d", "big")] == [False, False, True, True]
    assert cache.size <= cache.max_bytes


def test_an_answer_bigger_than_the_cache_is_not_kept_and_a_key_is_replaced() -> None:
    cache: LruCache[str] = LruCache(max_bytes=1000)
    cache.put("a", b"a" * 10)
    cache.put("huge", b"h" * 1000)
    assert "huge" not in cache and cache.get("a") == b"a" * 10
    cache.put("a", b"b" * 20)
    assert cache.get("a") == b"b" * 20 and cache.size == 20 + LruCache.OVERHEAD
    cache.put("a", b"c" * 2000)  # too big: the old one is gone too, not kept stale
    assert "a" not in cache and cache.size == 0


# -- work under way per client (issue 23) ---------------------------------------------------------


def test_work_under_way_is_bounded_per_client_and_in_all() -> None:
    work = InFlight(per_client=2, total=3)
    for _ in range(2):
        assert work.refusal(["10.0.0.1"]) is None
        work.begin(["10.0.0.1"])
    assert work.refusal(["10.0.0.1"]) == "client"
    assert work.refusal(["10.0.0.2"]) is None  # another client has its own share
    work.begin(["10.0.0.2"])
    assert work.refusal(["10.0.0.3"]) == "total"
    work.end(["10.0.0.1"])
    assert work.refusal(["10.0.0.1"]) is None and work.of("10.0.0.1") == 1


def test_work_for_several_clients_counts_against_each_and_the_table_empties() -> None:
    work = InFlight(per_client=1, total=10)
    work.begin(["10.0.0.1", "10.0.0.2"])
    assert work.refusal(["10.0.0.2", "10.0.0.3"]) == "client"
    assert work.refusal(["10.0.0.3"]) is None and work.refusal([]) is None
    work.end(["10.0.0.1", "10.0.0.2"])
    assert (work.count, work.of("10.0.0.1"), work.of("10.0.0.2")) == (0, 0, 0)
    assert len(work) == 0, "a client with nothing under way is not kept"


def test_bad_bounds_of_work_are_refused() -> None:
    with pytest.raises(ValueError):
        InFlight(per_client=0, total=1)
