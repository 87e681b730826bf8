"""A protocol fuzzer (issue 10, "hostile clients"): hypothesis draws whole client sessions of
hostile and odd frames and plays them against a real server on real sockets, while two honest
racers race on the same server.

What is drawn (``sessions``): every client message type with fields missing, extra, of the wrong
type, huge and tiny numbers (past 2^64, negative, floats, NaN and Infinity as Python's json
writes them, integers thousands of digits long), odd unicode (NUL and other controls, bidi
overrides, lone surrogates escaped, combining marks, digits such as ``²``, long multi-byte
texts), deep nesting (thousands deep), random move texts and objects (card and pile tokens,
mutated legal moves), JSON that is no object, malformed JSON, frames over the limit in bytes,
binary frames, text frames that are not UTF-8, frames over 1 MiB, and random orders of valid
requests (hello, create_room, join, spectate, ready, start, move, resign, leave, resume, daily,
rematch, leaderboard, race_record) with pauses, so that rooms start and moves get real answers. Some
sessions are floods.

What is checked, for every frame:

- exactly one reply, and a documented one (``SERVER_MESSAGE``): an ``error`` (its code an
  ``ErrorCode``) or the request's own reply (docs/protocol.md); the only other frames are room
  events and unasked views. To find where one frame's answers end, every frame is followed by a
  sentinel request with an id of its own (``race_record`` of an id that cannot be one:
  ``not_found``, no database query), whose reply closes the window. A reply carries its
  request's id: with one, the reply is told by it; without one (the fuzzed id was no text, or
  the frame was not read), it is the one frame in the window of a reply's type, or for a room
  reply (join, spectate, create_room, daily) a ``room``;
- or a documented close: 1009 for a frame over 1 MiB, 1007 for a text frame that is not UTF-8
  (both the WebSocket layer's), 1008 for a flood; never 1011, never silence (every wait has a
  timeout);
- no log record with a traceback, and none at ERROR, from the start of the server to its stop;
- the two honest racers race again and again meanwhile; every move of theirs is acknowledged,
  every race finishes, and the database holds exactly the moves acknowledged.

Design: hypothesis runs in a worker thread (``asyncio.to_thread``) while the server, the honest
racers and every fuzzed session run on the test's own event loop; each example is handed to the
loop with ``run_coroutine_threadsafe``. So the server starts once per test, not per example, and
keeps running between examples, as a real server would while hostile clients come and go; and
hypothesis keeps its shrinking. ``derandomize=True``: the same examples on every run, so CI
cannot flake on a newly drawn one; a failure is found again by running the test again.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from sqlalchemy import func, select
from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from clients.sdk import RaceClient
from engine.registry import RULE_SET_NAMES
from server.core.budgets import frame_problem
from server.main import TRANSPORT_MAX_BYTES
from server.storage.models import MoveRow
from tests.server.test_server import (
    DEAL,
    Server,
    Sessions,
    make_settings,
    start_server,
    stop_server,
)
from wire.protocol import (
    SERVER_MESSAGE,
    MoveAccepted,
    RaceFinished,
    RaceStarted,
    YourView,
)

pytestmark = pytest.mark.filterwarnings(
    # The server's loop runs beside hypothesis, in another thread, and websockets draws its
    # pings' payloads from the global ``random``: hypothesis sees that state change while it
    # draws an example, and takes it for the strategy's doing.
    "ignore:Do not use the `random` module inside strategies"
)

FUZZ_LIMITS: dict[str, Any] = {
    "rate_per_s": 100,
    "rate_burst": 150,
    "flood_close_after": 100,
    "flood_forgive_per_s": 10,
    "new_players_per_address_per_min": 1_000_000,
    "rooms_per_player_per_hour": 1_000_000,
    "http_rate_per_s": 1_000_000,
    "http_rate_burst": 1_000_000,  # (the sentinel is a read)
}
"""Generous enough that a session of fuzzed frames gets real answers, not rate_limited; a flood
(``Flood``) still runs into the rate and the allowance of errors, and is closed (1008)."""
MAX_FRAME = 16384
REPLY_WAIT_S = 10.0
"""A reply that does not come within this fails the test (a missing reply), not hangs it."""
EXAMPLES = 200

# What each request is answered with, besides an error (docs/protocol.md).
REPLIES = {
    "hello": {"welcome"},
    "create_room": {"room"},
    "join": {"room"},
    "spectate": {"room"},
    "daily": {"room"},
    "ready": {"ok"},
    "start": {"ok"},
    "leave": {"ok"},
    "move": {"move_ok"},
    "resign": {"move_ok"},
    "resume": {"resumed"},
    "leaderboard": {"leaderboard"},
    "race_record": {"race_record"},
    "rematch": {"ok"},
}
REPLY_ONLY = {"welcome", "ok", "error", "move_ok", "resumed", "leaderboard", "race_record"}
"""Types that are only ever replies (an ``error`` with id null is a reply too, but for
``room_closed``, which comes unasked; no lobby lives long enough here for that)."""
EVENTS = {"room", "countdown", "race_started", "progress", "race_finished", "rematch_offer"}


# -- frames -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Raw:
    """JSON text put into a frame as it is: numbers longer than Python's int() takes, nesting
    deeper than json.dumps writes, broken JSON."""

    text: str


@dataclass(frozen=True)
class Huge:
    """A hello frame of more than ``size`` bytes (written when sent: short to show)."""

    size: int


@dataclass(frozen=True)
class Ref:
    """A value known only when the frame is sent: a room code, a legal move of the session's
    own game (``mutation`` changes it a little)."""

    what: str
    index: int
    mutation: str = ""


@dataclass(frozen=True)
class Send:
    value: Any
    """A JSON tree (with ``Raw`` and ``Ref`` in it), or bytes for a binary frame."""
    ascii: bool = True
    not_utf8: bool = False
    """Send ``value`` (bytes) as a text frame anyway: the WebSocket layer closes, 1007."""


@dataclass(frozen=True)
class Pause:
    seconds: float


@dataclass(frozen=True)
class Session:
    player: int | None
    """Which fuzz identity says hello first (by token), or None: start unidentified."""
    steps: tuple[Send | Pause, ...]


@dataclass(frozen=True)
class Flood:
    """Many frames at once, unawaited: rate_limited, and the allowance runs out (1008)."""

    frame: str
    count: int


@dataclass
class Shared:
    """What the sessions may refer to: the codes of rooms seen, the honest race's room once it
    is racing (joining it then is refused; spectating it is allowed)."""

    tokens: list[str] = field(default_factory=list)
    seen: Counter[str] = field(default_factory=Counter)
    """What the fuzzed frames got: reply types, error codes, close codes."""
    codes: list[str] = field(default_factory=list)
    race_ids: list[str] = field(default_factory=list)


@dataclass
class SessionState:
    codes: list[str]
    legal: list[str] = field(default_factory=list)


MUTATIONS = ("", "", "upper", "lower", "bottom", "drop", "superscript", "double_space", "nul")


def mutate(move: str, how: str) -> str:
    words = move.split(" ")
    match how:
        case "upper":
            return move.upper()
        case "lower":
            return move.lower()
        case "bottom":
            return move + " bottom"
        case "drop":
            return " ".join(words[1:])
        case "superscript":
            return move.replace("1", "¹").replace("2", "²").replace("3", "³")
        case "double_space":
            return "  ".join(words)
        case "nul":
            return move + "\x00"
    return move


def resolve(value: Any, state: SessionState) -> Any:
    if isinstance(value, Ref):
        pool = state.legal if value.what == "legal" else state.codes
        if not pool:
            return "resign" if value.what == "legal" else "ZZZZ2345"
        picked = pool[value.index % len(pool)]
        return mutate(picked, value.mutation) if value.what == "legal" else picked
    if isinstance(value, dict):
        return {key: resolve(item, state) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve(item, state) for item in value]
    return value


def encode(value: Any, ascii: bool) -> str:
    """JSON text of a tree that may hold ``Raw``: NaN and Infinity as Python writes them; a
    lone surrogate always escaped (it cannot be sent as UTF-8)."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, Huge):
        return '{"type": "hello", "name": "' + "a" * value.size + '"}'
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(
                f"{encode(key, ascii)}: {encode(item, ascii)}" for key, item in value.items()
            )
            + "}"
        )
    if isinstance(value, list):
        return "[" + ", ".join(encode(item, ascii) for item in value) + "]"
    if isinstance(value, str):
        surrogate = any(0xD800 <= ord(char) <= 0xDFFF for char in value)
        return json.dumps(value, ensure_ascii=ascii or surrogate)
    return json.dumps(value)


# -- strategies -------------------------------------------------------------------------------


ODD_CHARS = [
    "\x00",
    "\x07",
    "\x1b",
    "\n",
    "\t",
    "\u202e",
    "\u202d",
    "\u2066",
    "\u2069",
    "\ufeff",
    "\u200b",
    "\u200d",
    "\u2028",
    "\ud800",
    "\udfff",
    "\u0301",
    "\u0336",
    "²",
    "٣",
    "𝟘",
    "Ａ",
    "ß",
    "İ",
    "\U0001f600",
    "\U000e0041",
    "\uffff",
    "é",
    "中",
]
odd_texts = st.lists(st.one_of(st.sampled_from(ODD_CHARS), st.text(max_size=4)), max_size=12).map(
    "".join
)
long_texts = st.builds(
    lambda piece, n: piece * n,
    st.sampled_from(["a", "é", "中", "\U0001f600", "e\u0301", "\x00"]),
    st.integers(30, 3000),
)
texts = st.one_of(st.text(max_size=20), odd_texts, long_texts)
huge_digits = st.integers(19, 6000).map(lambda n: Raw("9" * n))
ints = st.one_of(
    st.integers(-5, 120),
    st.integers(),
    st.sampled_from([2**63 - 1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1, -1, 0, 10**30]),
    huge_digits,
    st.sampled_from([Raw("-0"), Raw("1e400"), Raw("-1e400"), Raw("1E2")]),
)
floats = st.one_of(st.floats(), st.sampled_from([math.nan, math.inf, -math.inf, -0.0, 2.0, 0.5]))
depths = st.integers(2, 8000)
deep = st.one_of(
    depths.map(lambda n: Raw("[" * n + "]" * n)),
    depths.map(lambda n: Raw('{"a": ' * n + "1" + "}" * n)),
    st.integers(2, 400).map(lambda n: Raw("[" * n + "]" * n)),
)
leaves = st.one_of(st.none(), st.booleans(), ints, floats, texts)
json_values = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=12,
)
anything = st.one_of(json_values, deep)

CARDS = [
    "AS",
    "10H",
    "QD",
    "8H",
    "KC",
    "5D",
    "2C",
    "1H",
    "11H",
    "0S",
    "AZ",
    "8²H",
    "٣H",
    "ＡS",
    "10♥",
    "as",
    "",
    "X",
    "AS²",
    "10HH",
]
PILES = [
    "heap:3",
    "heap:1",
    "foundation:2",
    "waste",
    "stock",
    "hand",
    "reserve:2",
    "corner:1",
    "heap:0",
    "heap:-1",
    "heap:99999999999999999999",
    "heap:²",
    "heap:3:4",
    "HEAP:3",
    ":",
    "foundation:",
    "tableau:1",
    "heap: 3",
    "heap:٣",
]
COUNTS = ["x3", "x0", "x105", "x²", "x" + "9" * 30, "X2", "x-1", "x"]
ARROWS = ["->", "->", "→", "-->", "- >", "<-"]
SPACES = [" ", " ", "  ", "\t", "\u00a0", "\u3000", "\n"]
actions = st.sampled_from(["resign", "redeal", "turn", "afresh", "RESIGN", "Redeal", "fly"])
move_words = st.lists(
    st.one_of(
        st.sampled_from(CARDS),
        st.sampled_from(PILES),
        st.sampled_from(COUNTS),
        st.sampled_from(ARROWS),
        st.sampled_from(["bottom", "BOTTOM", "top"]),
    ),
    max_size=7,
)
random_move_texts = st.builds(
    lambda words, space: space.join(words), move_words, st.sampled_from(SPACES)
)
shaped_move_texts = st.builds(
    lambda card, count, source, arrow, target, tail: " ".join(
        part for part in (card, count, source, arrow, target, tail) if part
    ),
    st.sampled_from(CARDS),
    st.sampled_from(["", "", *COUNTS]),
    st.sampled_from(PILES),
    st.sampled_from(ARROWS),
    st.sampled_from(PILES),
    st.sampled_from(["", "", "bottom", "top"]),
)
legal_moves = st.builds(Ref, st.just("legal"), st.integers(0, 20), st.sampled_from(MUTATIONS))
move_objects = st.fixed_dictionaries(
    {},
    optional={
        "card": st.one_of(st.sampled_from(CARDS), anything),
        "from": st.one_of(st.sampled_from(PILES), anything),
        "to": st.one_of(st.sampled_from(PILES), anything),
        "count": ints,
        "bottom": st.one_of(st.booleans(), anything),
        "action": st.one_of(actions, anything),
        "extra": anything,
    },
)
moves = st.one_of(
    legal_moves,
    legal_moves,
    random_move_texts,
    shaped_move_texts,
    actions,
    move_objects,
    st.builds(lambda a: {"action": a}, actions),
    anything,
)

codes = st.one_of(
    st.builds(Ref, st.just("code"), st.integers(0, 20)),
    st.builds(Ref, st.just("code"), st.integers(0, 20)),
    st.sampled_from(
        ["ABCD2345", "abcd2345", "ABC", "A" * 17, "ABCD 234", "ＡBCD2345", "ABCD234\x00"]
    ),
    texts,
)
rule_sets = st.one_of(
    st.sampled_from(RULE_SET_NAMES), st.sampled_from(["", "OCTAGON", "x" * 41]), texts
)
deals = st.one_of(
    st.fixed_dictionaries(
        {"kind": st.sampled_from(["secret", "number", "daily", "other"])},
        optional={
            "number": st.one_of(
                st.sampled_from(
                    [
                        "7",
                        "0",
                        "18446744073709551615",
                        "18446744073709551616",
                        "007",
                        "²",
                        "-1",
                        "",
                        "1" * 21,
                    ]
                ),
                ints,
                anything,
            )
        },
    ),
    anything,
)
days = st.one_of(
    st.sampled_from(
        ["2026-11-24", "2026-13-45", "2026-02-30", "0000-01-01", "２026-01-01", "2026-1-1"]
    ),
    texts,
)
ids = st.one_of(
    st.text(min_size=1, max_size=64),
    st.text(min_size=65, max_size=80),
    odd_texts,
    ints,
    floats,
    st.none(),
    deep,
    json_values,
)

FIELDS: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "hello": {
        "name": st.one_of(
            st.sampled_from(["Ann", " Bob ", "[/]", "<b>x</b>", "e\u0301"]), texts, anything
        ),
        "token": st.one_of(st.sampled_from(["", "x" * 128, "x" * 129]), texts, anything),
    },
    "create_room": {
        "rule_set": rule_sets,
        "deal": deals,
        "seats": st.one_of(st.integers(0, 10), ints, anything),
        "time_limit_s": st.one_of(st.sampled_from([29, 30, 86400, 86401]), ints, anything),
        "public": st.one_of(st.booleans(), anything),
    },
    "join": {"code": codes},
    "spectate": {"code": codes},
    "leave": {},
    "start": {},
    "ready": {"ready": st.one_of(st.booleans(), anything)},
    "resign": {},
    "rematch": {"accept": st.one_of(st.booleans(), anything)},
    "move": {"move": moves},
    "resume": {"code": codes, "last_seq": st.one_of(st.integers(0, 100), ints, anything)},
    "daily": {"rule_set": rule_sets},
    "leaderboard": {
        "rule_set": rule_sets,
        "board": st.one_of(
            st.sampled_from(["fastest", "most_wins", "deal", "daily", "best"]), anything
        ),
        "period": st.one_of(st.sampled_from(["today", "week", "all", "year"]), anything),
        "deal": st.one_of(st.sampled_from(["7", "18446744073709551616", "²"]), ints, anything),
        "day": days,
        "around_me": st.one_of(st.booleans(), anything),
        "limit": st.one_of(st.integers(0, 101), ints, anything),
    },
    "race_record": {
        "race_id": st.one_of(
            st.sampled_from(["\x00", "a\x00b", "../x", "", "x" * 64, "0123456789abcdef"]),
            texts,
            anything,
        )
    },
}
VALID: dict[str, dict[str, st.SearchStrategy[Any]]] = {
    "hello": {"name": st.sampled_from(["Fuzz", "Zoë", "中文", "e\u0301"])},
    "create_room": {
        "rule_set": st.sampled_from(["octagon", "all-fours", "hidden-cards"]),
        "seats": st.integers(2, 3),
        "public": st.booleans(),
    },
    "join": {"code": codes},
    "spectate": {"code": codes},
    "leave": {},
    "start": {},
    "ready": {"ready": st.booleans()},
    "resign": {},
    "rematch": {"accept": st.booleans()},
    "move": {"move": st.one_of(legal_moves, legal_moves, legal_moves, shaped_move_texts)},
    "resume": {"code": codes, "last_seq": st.integers(0, 30)},
    "daily": {"rule_set": st.sampled_from(RULE_SET_NAMES)},
    "leaderboard": {
        "rule_set": st.sampled_from(RULE_SET_NAMES),
        "board": st.sampled_from(["fastest", "most_wins", "daily"]),
    },
    "race_record": {"race_id": st.sampled_from(["0123456789abcdef", "nosuchrace"])},
}
VALID_WEIGHTS = ["start"] * 4 + ["move"] * 8 + ["create_room"] * 3 + sorted(VALID)


@st.composite
def valid_requests(draw: st.DrawFn) -> dict[str, Any]:
    """A well-formed request of a random type (random order, random arguments), with an id."""
    kind = draw(st.sampled_from(VALID_WEIGHTS))
    message: dict[str, Any] = {"type": kind, "id": f"v{draw(st.integers(0, 10**6))}"}
    for name, values in VALID[kind].items():
        message[name] = draw(values)
    return message


@st.composite
def fuzzed_requests(draw: st.DrawFn) -> dict[str, Any]:
    """A request of a known type, each field left out, fuzzed or extra, the id odd or absent."""
    kind = draw(st.sampled_from(sorted(FIELDS)))
    message: dict[str, Any] = {"type": kind}
    for name, values in FIELDS[kind].items():
        if draw(st.booleans()):
            message[name] = draw(values)
    if draw(st.integers(0, 3)) == 0:
        message[draw(st.sampled_from(["player_id", "extra", "Type", "", "id\x00"]))] = draw(
            anything
        )
    if draw(st.integers(0, 2)) > 0:
        message["id"] = draw(ids)
    return message


def oversized(piece: str, over: int) -> Raw:
    """A hello whose name makes the frame ``over`` bytes past the limit (UTF-8)."""
    head, tail = '{"type": "hello", "id": "big", "name": "', '"}'
    room = MAX_FRAME - len(head) - len(tail) + over
    return Raw(
        head + piece * (room // len(piece.encode())) + "x" * (room % len(piece.encode())) + tail
    )


junk_frames = st.one_of(
    json_values.map(lambda value: Raw(encode(value, True))),  # no object, or an object of junk
    deep,
    st.sampled_from(
        [
            Raw(""),
            Raw("{"),
            Raw("{not json"),
            Raw('{"type": "hello", "name": '),
            Raw("\x00"),
            Raw("null"),
            Raw("[]"),
            Raw('"hello"'),
            Raw("NaN"),
            Raw('{"type": "hello"}{"type": "hello"}'),
            Raw("\ufeff{}"),
            Raw('{"type": "hello", "type": "join"}'),
            Raw('{"type": null}'),
            Raw('{"type": ["hello"]}'),
            Raw('{"type": "fly", "id": "t"}'),
        ]
    ),
    st.builds(
        lambda digits: Raw(
            '{"type": "resume", "code": "ABCD", "id": "n", "last_seq": ' + digits.text + "}"
        ),
        huge_digits,
    ),
    st.builds(oversized, st.sampled_from(["a", "é", "中", "\U0001f600"]), st.integers(-2, 40)),
    st.builds(lambda text: Raw(text), st.text(max_size=30)),
)

FRAME_KINDS: dict[str, st.SearchStrategy[Send | Pause]] = {
    "valid": valid_requests().map(Send),
    "fuzzed": fuzzed_requests().flatmap(
        lambda value: st.builds(Send, st.just(value), st.booleans())
    ),
    "junk": junk_frames.map(Send),
    "binary": st.binary(max_size=40).map(Send),
    "pause": st.floats(0.01, 0.2).map(Pause),
}
frames = st.sampled_from(
    ["valid"] * 6 + ["fuzzed"] * 5 + ["junk"] * 4 + ["binary", "pause"]
).flatmap(FRAME_KINDS.__getitem__)
closing_frames = st.sampled_from(
    [
        Send(b'{"type": "hello", "name": "\xff\xfe"}', not_utf8=True),
        Send(Huge(TRANSPORT_MAX_BYTES)),
    ]
)
racing = st.sampled_from(["octagon", "all-fours", "hidden-cards", "four-corners"]).map(
    lambda rule_set: (
        Send({"type": "create_room", "rule_set": rule_set, "seats": 2, "id": "race"}),
        Send({"type": "start", "id": "go"}),
        Pause(0.3),
    )
)
"""A session that starts its own race first, alone, so that its moves get real answers."""


@st.composite
def sessions(draw: st.DrawFn) -> Session:
    player = draw(st.sampled_from([0, 1, 2, None]))
    start = draw(racing) if player is not None and draw(st.booleans()) else ()
    steps = draw(st.lists(frames, min_size=1, max_size=30))
    end = (draw(closing_frames),) if draw(st.sampled_from([False] * 15 + [True])) else ()
    return Session(player, (*start, *steps, *end))


floods = st.builds(
    Flood,
    st.sampled_from(
        ['{"type": "leave"}', '{"type": "fly"}', "{", '{"type": "race_record", "race_id": "!"}']
    ),
    st.integers(300, 500),
)
cases = st.sampled_from([False] * 24 + [True]).flatmap(
    lambda flooding: floods if flooding else sessions()
)


# -- playing a session ------------------------------------------------------------------------


def render(step: Send, state: SessionState) -> str | bytes:
    if isinstance(step.value, bytes):
        return step.value
    return encode(resolve(step.value, state), step.ascii)


def expected_id(frame: str | bytes) -> str | None:
    """The id the server's reply will carry: the request's id if it is a text (cut at 64
    characters) in a frame that is read; None otherwise."""
    if frame_problem(frame, MAX_FRAME) is not None:
        return None
    try:
        data = json.loads(frame)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("id"), str):
        return None
    echoed = str(data["id"][:64])
    if any(0xD800 <= ord(char) <= 0xDFFF for char in echoed):
        return None  # no text: refused, and not echoed (docs/protocol.md)
    return echoed


def request_type(frame: str | bytes) -> str | None:
    if isinstance(frame, bytes) or frame_problem(frame, MAX_FRAME) is not None:
        return None
    try:
        data = json.loads(frame)
    except (ValueError, RecursionError):
        return None
    kind = data.get("type") if isinstance(data, dict) else None
    return kind if isinstance(kind, str) and kind in REPLIES else None


async def read_frame(ws: ClientConnection, why: str) -> dict[str, Any]:
    """The next frame, checked to be a documented server message."""
    try:
        text = await asyncio.wait_for(ws.recv(), REPLY_WAIT_S)
    except TimeoutError:
        raise AssertionError(f"no reply within {REPLY_WAIT_S} s: {why}") from None
    except ConnectionClosed as closed:
        raise AssertionError(
            f"closed ({ws.close_code}, {ws.close_reason!r}) while waiting: {why}"
        ) from closed
    assert isinstance(text, str), "the server sends text frames only"
    SERVER_MESSAGE.validate_json(text)  # a documented message, an error's code an ErrorCode
    data: dict[str, Any] = json.loads(text)
    return data


def check_window(frame: str | bytes, window: list[dict[str, Any]]) -> None:
    """Everything the server sent in answer to one frame (before the sentinel's reply): room
    events and unasked views, and exactly one reply, of the request's documented kind."""
    rid, kind = expected_id(frame), request_type(frame)
    allowed = {"error"} | REPLIES.get(kind or "", set())
    shown = f"frame {frame[:300]!r} got {[(f['type'], f.get('id')) for f in window]}"
    for item in window:
        assert item.get("id") in (None, rid), f"a reply to another request: {shown}"
        if item.get("id") is None:
            assert item["type"] in EVENTS | {"view"} | (REPLY_ONLY if rid is None else set()), (
                f"unasked {item['type']}: {shown}"
            )
    if rid is not None:
        replies = [item for item in window if item.get("id") == rid]
        assert replies, f"no reply: {shown}"
        assert replies[0]["type"] in allowed, f"undocumented reply: {shown}"
        extra = [item["type"] for item in replies[1:]]
        assert extra in ([], ["view"]) and (not extra or replies[0]["type"] == "resumed"), (
            f"more than one reply: {shown}"
        )
        return
    replies = [item for item in window if item["type"] in REPLY_ONLY]
    if not replies and "room" in allowed:
        assert any(item["type"] == "room" for item in window), f"no reply: {shown}"
        return
    assert len(replies) == 1, f"not exactly one reply: {shown}"
    assert replies[0]["type"] in allowed, f"undocumented reply: {shown}"


def learn(state: SessionState, shared: Shared, window: list[dict[str, Any]]) -> None:
    for item in window:
        shared.seen[item["code"] if item["type"] == "error" else item["type"]] += 1
        if item["type"] == "room" and item["code"] not in state.codes:
            state.codes.append(item["code"])
            shared.codes.append(item["code"])
        elif item["type"] == "view":
            state.legal = item["view"]["legal_moves"]
        elif item["type"] == "move_ok":
            state.legal = item["legal_moves"]
        elif item["type"] == "race_finished":
            shared.race_ids.append(item["race_id"])


async def frames_until_closed(ws: ClientConnection) -> list[dict[str, Any]]:
    got = []
    try:
        async with asyncio.timeout(20):
            while True:
                got.append(await read_frame_or_close(ws))
    except ConnectionClosed:
        pass
    return got


async def read_frame_or_close(ws: ClientConnection) -> dict[str, Any]:
    text = await ws.recv()
    assert isinstance(text, str)
    SERVER_MESSAGE.validate_json(text)
    data: dict[str, Any] = json.loads(text)
    return data


async def play(server: Server, shared: Shared, case: Session | Flood) -> None:
    async with connect(server.url, max_size=None) as ws:
        if isinstance(case, Flood):
            shared.seen.update(await flood(ws, case))
            return
        state = SessionState(codes=list(shared.codes[-8:]))
        if case.player is not None:
            await ws.send(
                json.dumps({"type": "hello", "token": shared.tokens[case.player], "id": "hello"})
            )
            assert (await read_frame(ws, "hello"))["type"] == "welcome"
        for n, step in enumerate(case.steps):
            if isinstance(step, Pause):
                await asyncio.sleep(step.seconds)
                continue
            frame = render(step, state)
            if step.not_utf8:
                assert isinstance(frame, bytes)
                await ws.send(frame, text=True)
            else:
                await ws.send(frame)
            size = len(frame if isinstance(frame, bytes) else frame.encode("utf-8", "replace"))
            if step.not_utf8 or size > TRANSPORT_MAX_BYTES:
                await frames_until_closed(ws)
                expected = 1007 if step.not_utf8 else 1009
                assert ws.close_code == expected, (ws.close_code, ws.close_reason)
                shared.seen[f"close {expected}"] += 1
                return
            sentinel = f"~sentinel~{n}"
            await ws.send(json.dumps({"type": "race_record", "race_id": "!", "id": sentinel}))
            window = []
            while (item := await read_frame(ws, f"{frame[:200]!r}")).get("id") != sentinel:
                window.append(item)
            assert item["type"] == "error" and item["code"] in ("not_found", "not_identified")
            check_window(frame, window)
            learn(state, shared, window)


async def flood(ws: ClientConnection, case: Flood) -> Counter[str]:
    reading = asyncio.create_task(frames_until_closed(ws))
    try:
        for _ in range(case.count):
            await ws.send(case.frame)
    except ConnectionClosed:
        pass
    got = await reading
    assert ws.close_code == 1008, (ws.close_code, ws.close_reason)
    assert len(got) <= case.count
    codes = {item["code"] for item in got if item["type"] == "error"}
    if case.frame.startswith('{"type": "leave"'):  # understood: only the rate can refuse it
        assert "rate_limited" in codes, codes
        assert codes <= {"not_identified", "rate_limited"}, codes
    return Counter([*(item.get("code", item["type"]) for item in got), "close 1008"])


# -- the honest racers ------------------------------------------------------------------------


@dataclass
class HonestRace:
    race_id: str
    acknowledged: int
    ranked_moves: int


async def honest_races(server: Server, shared: Shared, stop: asyncio.Event) -> list[HonestRace]:
    """Two racers race the chosen deal of all-fours again and again until ``stop``; every move
    of theirs must be acknowledged (the SDK raises on an error or a missing reply)."""
    ann, bob = await server.client("Honest Ann"), await server.client("Honest Bob")
    races = []
    try:
        while not stop.is_set() or not races:
            room = await ann.create_room("all-fours", seats=2, deal="number", number=DEAL)
            await bob.join(room.code)
            await ann.ready()
            await bob.ready()
            await ann.next_event(RaceStarted)
            shared.codes.append(room.code)  # fuzzers may try it now: it is racing
            counts = await asyncio.gather(play_out(ann, 0.01), play_out(bob, 0.03))
            finished = await ann.next_event(RaceFinished, timeout=20)
            assert (await bob.next_event(RaceFinished, timeout=20)).race_id == finished.race_id
            races.append(
                HonestRace(
                    finished.race_id, sum(counts), sum(entry.moves for entry in finished.ranking)
                )
            )
            await ann.leave()
            await bob.leave()
    finally:
        await ann.close()
        await bob.close()
    return races


async def play_out(client: RaceClient, pause: float) -> int:
    moves = (await client.next_event(YourView)).view.legal_moves
    acknowledged = 0
    while True:
        ack = await client.move(next((m for m in moves if m != "resign"), moves[0]))
        assert isinstance(ack, MoveAccepted)
        acknowledged += 1
        if ack.status != "in_progress":
            return acknowledged
        moves = ack.legal_moves
        await asyncio.sleep(pause)


# -- the test ---------------------------------------------------------------------------------


class Tracebacks(logging.Handler):
    """Every log record that holds a traceback or is an error, from any logger."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if (
            record.exc_info
            or record.levelno >= logging.ERROR
            or "Traceback" in (record.getMessage())
        ):
            self.records.append(record)


async def test_hostile_frames_get_documented_answers_while_an_honest_race_goes_on(
    sessions: Sessions, database_url: str
) -> None:
    tracebacks = Tracebacks()
    logging.getLogger().addHandler(tracebacks)
    server = await start_server(make_settings(database_url, **FUZZ_LIMITS))
    loop = asyncio.get_running_loop()
    shared, stop = Shared(), asyncio.Event()
    try:
        for n in range(3):
            fuzzer = await server.client(f"Fuzz {n}")
            assert fuzzer.token is not None
            shared.tokens.append(fuzzer.token)
            await fuzzer.close()
        racing = asyncio.create_task(honest_races(server, shared, stop))

        @settings(
            max_examples=EXAMPLES,
            derandomize=True,
            database=None,
            deadline=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(cases)
        @example(Flood('{"type": "leave"}', 400))
        @example(
            Session(
                0,
                (
                    Send(Raw("[" * 8000 + "]" * 8000)),
                    Send({"type": "race_record", "race_id": "a\x00b", "id": "r"}),
                ),
            )
        )
        def fuzz(case: Session | Flood) -> None:
            if racing.done():  # a failed honest race fails the test at once
                return
            asyncio.run_coroutine_threadsafe(play(server, shared, case), loop).result(120)

        await asyncio.to_thread(fuzz)
        stop.set()
        races = await asyncio.wait_for(racing, 60)
        async with sessions() as session:
            for race in races:
                stored = await session.scalar(
                    select(func.count()).select_from(MoveRow).where(MoveRow.race_id == race.race_id)
                )
                assert stored == race.acknowledged == race.ranked_moves, race
        assert len(races) >= 2
        print(f"{len(races)} honest races; the fuzzed frames got {dict(shared.seen)}")
        # The fuzzer still reaches what it is for (the explicit examples guarantee the flood).
        assert {
            "rate_limited",
            "close 1008",
            "invalid_message",
            "bad_json",
            "unknown_type",
            "too_large",
            "welcome",
            "room",
        } <= set(shared.seen), shared.seen
    finally:
        stop.set()
        await stop_server(server)
        logging.getLogger().removeHandler(tracebacks)
    assert not tracebacks.records, [
        (record.name, record.getMessage(), record.exc_text or record.exc_info)
        for record in tracebacks.records
    ]
