"""What a connection, an address and a player may cost (``server.core.budgets``), with plain
numbers for the time: frames refused unread, the text of a refused message and the id its reply
echoes, a connection's rate and allowance of errors, the caps per address, and the key an
address counts against."""

from __future__ import annotations

from typing import get_args

import pytest
from pydantic import ValidationError

from server.core.budgets import (
    CLIENT_KINDS,
    WATCHING,
    AddressBook,
    Budget,
    address_of,
    frame_problem,
    invalid_text,
    is_known_type,
    request_id,
)
from wire.protocol import CLIENT_MESSAGE, ErrorCode


def test_a_binary_frame_is_refused_as_not_understood() -> None:
    refused = frame_problem(b'{"type": "hello"}', 100)
    assert refused is not None and refused[0] is ErrorCode.INVALID_MESSAGE


def test_a_text_frame_up_to_the_limit_is_read_and_one_over_it_is_too_large() -> None:
    assert frame_problem("x" * 100, 100) is None
    refused = frame_problem("x" * 101, 100)
    assert refused is not None and refused[0] is ErrorCode.TOO_LARGE and "100 bytes" in refused[1]


def test_the_limit_counts_utf8_bytes_not_characters() -> None:
    assert frame_problem("é" * 50, 100) is None  # 100 bytes
    refused = frame_problem("é" * 51, 100)  # 51 characters, 102 bytes
    assert refused is not None and refused[0] is ErrorCode.TOO_LARGE


def refusal_of(data: object) -> ValidationError:
    with pytest.raises(ValidationError) as refused:
        CLIENT_MESSAGE.validate_python(data)
    return refused.value


def test_an_invalid_message_is_described_by_the_field_it_names() -> None:
    assert invalid_text(refusal_of({"type": "hello", "name": 5})) == (
        "name: Input should be a valid string"
    )


def test_a_known_fields_problem_is_said_in_words() -> None:
    """Issue 26: the lobby form showed ``deal.number: String should match pattern ...``."""
    chosen = {"type": "create_room", "rule_set": "octagon", "deal": {"kind": "number"}}
    assert invalid_text(refusal_of({**chosen, "deal": {"kind": "number", "number": 42}})) == (
        'the deal number must be 1 to 20 digits (0-9), sent as text: "42"'
    )
    assert invalid_text(refusal_of({**chosen, "deal": {"kind": "number", "number": "4x"}})) == (
        "a deal number is written in the digits 0-9 only, not '4x'"
    ), "a validator's own sentence, as it is"
    secret = {**chosen, "deal": {"kind": "secret"}}
    assert invalid_text(refusal_of({**secret, "seats": 9, "time_limit_s": 5})) == (
        "the seats must be a whole number from 2 to 8; "
        "the time limit must be 30 to 86400 seconds, or none"
    )
    assert invalid_text(refusal_of(chosen)) == "a chosen deal needs a number 0..2^64-1"
    assert invalid_text(refusal_of({"type": "join", "code": "a"})) == (
        "a room code is 4 to 16 letters and digits"
    )


def test_a_problem_with_no_field_is_the_messages_and_at_most_three_are_told() -> None:
    assert invalid_text(refusal_of({})).startswith("message: ")
    many = refusal_of({"type": "move", "id": 2, "move": 1, "extra": 1})
    assert len(many.errors()) > 3
    assert invalid_text(many).count("; ") == 2


def test_the_id_a_reply_echoes_is_the_requests_text_cut_at_64_characters() -> None:
    assert request_id({"id": "m1"}) == "m1"
    assert request_id({"id": "x" * 100}) == "x" * 64


def test_no_id_is_echoed_when_there_is_none_it_is_not_text_or_cannot_be_encoded() -> None:
    assert request_id({"type": "move"}) is None
    assert request_id({"id": 7}) is None
    assert request_id(["m1"]) is None
    assert request_id({"id": "\ud800"}) is None


def test_only_the_client_message_types_are_known() -> None:
    assert "move" in CLIENT_KINDS and "hello" in CLIENT_KINDS
    assert is_known_type({"type": "move"})
    assert not is_known_type({"type": "room"}), "a server message is not a request"
    assert not is_known_type({"move": "x"})
    assert not is_known_type(["move"])


def test_an_anonymous_connection_may_watch_and_read_but_never_open_join_or_race() -> None:
    watching = {get_args(kind.model_fields["type"].annotation)[0] for kind in WATCHING}
    assert watching == {"spectate", "leave", "resume", "leaderboard", "race_record"}


def budget(**options: float) -> Budget:
    settings = dict(rate=2.0, burst=3.0, errors=3.0, forgive=0.5, stamp=0.0)
    settings.update(options)
    return Budget(**settings)


def test_a_burst_then_one_message_per_token_earned() -> None:
    connection = budget()
    assert [connection.allow(0.0) for _ in range(4)] == [True, True, True, False]
    assert connection.allow(0.5) is True  # 2 a second: one earned
    assert connection.allow(0.5) is False


def test_tokens_earned_while_quiet_never_exceed_the_burst() -> None:
    connection = budget()
    connection.allow(0.0)
    assert [connection.allow(1000.0) for _ in range(4)] == [True, True, True, False]


def test_time_going_backwards_earns_nothing() -> None:
    connection = budget()
    for _ in range(3):
        connection.allow(10.0)
    assert connection.allow(5.0) is False
    assert connection.allow(10.5) is True


def test_the_allowance_of_errors_runs_out_and_comes_back_slowly() -> None:
    connection = budget()
    assert [connection.error(0.0) for _ in range(3)] == [True, True, True]
    assert connection.error(0.0) is False, "the connection is to be closed"
    fresh = budget()
    for _ in range(3):
        fresh.error(0.0)
    assert fresh.error(2.0) is True  # 0.5 a second: one forgiven
    assert fresh.error(2.0) is False


def test_errors_forgiven_while_quiet_never_exceed_the_allowance() -> None:
    connection = budget()
    assert [connection.error(1000.0) for _ in range(4)] == [True, True, True, False]


def test_a_flood_that_earns_a_token_now_and_then_is_still_closed() -> None:
    connection = budget(rate=1.0, burst=5.0, errors=10.0, forgive=1.0)
    allowed, closed, now = 0, False, 0.0
    while not closed and now < 60:
        if connection.allow(now):
            allowed += 1
        else:
            closed = not connection.error(now)
        now += 0.1
    assert closed and allowed > 5, "some got through, and the flood was closed all the same"


def test_a_client_within_its_rate_is_never_refused() -> None:
    connection = budget(rate=2.0)
    assert all(connection.allow(second * 0.5) for second in range(1000))


def book() -> AddressBook:
    return AddressBook(
        connections_per_address=2,
        new_players_per_min=3,
        max_addresses=100,
        reads_per_s=2,
        reads_burst=2,
    )


def test_connections_per_address_are_capped_and_a_refused_one_is_not_counted() -> None:
    addresses = book()
    assert addresses.connect("1.2.3.4") and not addresses.full("1.2.3.4")
    assert addresses.connect("1.2.3.4") and addresses.full("1.2.3.4")
    assert not addresses.connect("1.2.3.4")
    addresses.disconnect("1.2.3.4")
    assert not addresses.full("1.2.3.4") and addresses.connect("1.2.3.4")
    assert addresses.connect("5.6.7.8"), "each address has its own"


def test_a_disconnect_never_counted_changes_nothing() -> None:
    addresses = book()
    addresses.disconnect("1.2.3.4")
    assert addresses.connect("1.2.3.4") and addresses.connect("1.2.3.4")
    assert not addresses.connect("1.2.3.4")


def test_new_players_per_address_a_minute() -> None:
    addresses = book()
    assert [addresses.new_player("1.2.3.4", 0.0) for _ in range(4)] == [True, True, True, False]
    assert addresses.new_player("5.6.7.8", 0.0), "each address has its own"
    assert addresses.new_player("1.2.3.4", 20.0), "3 a minute: one every 20 seconds"
    assert not addresses.new_player("1.2.3.4", 20.0)


def test_reads_per_address_say_how_long_until_the_next_one() -> None:
    addresses = book()
    assert [addresses.read("1.2.3.4", 0.0) for _ in range(2)] == [0.0, 0.0]
    assert addresses.read("1.2.3.4", 0.0) == pytest.approx(0.5)
    assert addresses.read("5.6.7.8", 0.0) == 0.0


def test_a_connection_counts_against_its_peers_address() -> None:
    assert address_of(("203.0.113.9", 51234)) == "203.0.113.9"
    assert address_of(("2001:db8::1", 51234, 0, 0)) == "2001:db8::/64"
    assert address_of("203.0.113.9") == "203.0.113.9"


def test_a_trusted_proxy_counts_the_client_it_forwarded_for_and_no_other_peer_does() -> None:
    proxies = frozenset({"10.0.0.1"})
    forwarded = "198.51.100.7, 203.0.113.9"
    assert address_of(("10.0.0.1", 443), forwarded, proxies) == "203.0.113.9"
    assert address_of(("192.0.2.1", 443), forwarded, proxies) == "192.0.2.1"
