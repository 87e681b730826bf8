"""Hostile clients (issue 10), one small function each, for tests/server/test_attacks.py and
bench/abuse_bench.py: what each sends, and what it got back, counted on the attacker's side.

Each attack is ``async def attack(target, seconds, counts)``: it runs for ``seconds`` against
the server at ``target`` and adds to ``counts`` what it sent and what came back:
``sent``, ``error:<code>``, ``reply:<type>``, ``close:<code>`` (a WebSocket the server closed,
with its code), ``http:<status>``, ``refused:<exception>`` (a connection not even opened).

``run_attack(name, target, seconds, stop)`` runs one in a fresh event loop, for a child process
(the attacker's CPU is then not in the loop of the racer it is measured against), until
``seconds`` are up or ``stop`` (a ``multiprocessing`` event) is set, whichever comes first.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any, Protocol

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidStatus

Counts = Counter[str]

HOSTILE_NAMES = ("[/]", "[@click=app.quit]", "<script>alert(1)</script>", "'; DROP TABLE--")
"""Names a client would misrender if it read them as markup: the server keeps them as text."""
REFUSED_NAMES = ("Ann\u202eevil", "\x1b[31mAnn", "A" * 33)
"""Names the server refuses (``invalid_message``): bidirectional control, escape, too long."""
DEEP = "[" * 8000 + "]" * 8000
"""JSON nested 8,000 deep: 16,000 bytes, under the frame limit."""
TOO_LARGE = json.dumps({"type": "hello", "name": "é" * 9000}, ensure_ascii=False)
"""Under 16,384 characters, over 16,384 bytes of UTF-8."""
ODD_MOVES = ("AS x² heap:1 -> heap:2", "²H heap:1 -> heap:2", "AS heap:٣ -> heap:2")
BAD_VALUES = (
    {"type": "leaderboard", "rule_set": "octagon", "board": "daily", "day": "2026-13-45"},
    {"type": "leaderboard", "rule_set": "octagon", "board": "deal", "deal": "18446744073709551616"},
    {
        "type": "create_room",
        "rule_set": "octagon",
        "deal": {"kind": "number", "number": "18446744073709551616"},
    },
)
BAD_HTTP = (
    ("POST", "/api/games"),
    ("PUT", "/api/races/x"),
    ("DELETE", "/api/leaderboards/octagon"),
    ("GET", "/api/leaderboards/octagon?board=daily&day=2026-13-45"),
    ("GET", "/api/leaderboards/octagon?board=deal&deal=18446744073709551616"),
    ("GET", "/api/leaderboards/octagon?bogus=1"),
    ("GET", "/api/races/%00/replay"),
)


@dataclass(frozen=True)
class Target:
    """Where to attack, and what the attacks need of the honest racer's world."""

    url: str
    """The WebSocket URL, ws://host:port/ws."""
    http: str
    """http://host:port"""
    room: str
    """The honest racer's room code."""
    tokens: tuple[str, ...]
    """Identities made beforehand for the attackers (new ones per address are limited): their
    names are ``HOSTILE_NAMES``."""
    race_id: str = ""
    """A finished race with many moves (for replay hammering), and one of its racers."""
    player_id: str = ""


# -- plumbing -------------------------------------------------------------------------------------


async def read_counting(ws: ClientConnection, counts: Counts) -> None:
    """Count what the server sends: errors by code, other frames by type."""
    with contextlib.suppress(ConnectionClosed):
        async for frame in ws:
            if isinstance(frame, bytes):
                counts["reply:binary"] += 1
                continue
            message = json.loads(frame)
            if message.get("type") == "error":
                counts[f"error:{message['code']}"] += 1
            else:
                counts[f"reply:{message.get('type')}"] += 1


async def connection(
    target: Target,
    seconds: float,
    counts: Counts,
    body: Callable[[ClientConnection, float], Awaitable[None]],
    token: str | None = None,
    headers: dict[str, str] | None = None,
    reader: Callable[[ClientConnection, Counts], Awaitable[None]] = read_counting,
) -> None:
    """Run ``body(ws, end)`` on a connection (as the player of ``token``, if given; with
    ``headers`` in its handshake) until ``seconds`` are up, connecting again whenever the
    server closes it; each close is counted with its code, what comes back by ``reader``."""
    end = time.monotonic() + seconds
    while going(end):
        try:
            async with connect(
                target.url, open_timeout=5, close_timeout=2, additional_headers=headers
            ) as ws:
                if token is not None:
                    await ws.send(json.dumps({"type": "hello", "token": token}))
                    await ws.recv()  # the welcome
                reading = asyncio.create_task(reader(ws, counts))
                try:
                    await body(ws, end)
                    with contextlib.suppress(TimeoutError):  # what is still on its way
                        await asyncio.wait_for(asyncio.shield(reading), 0.1)
                except ConnectionClosed:
                    pass
                if ws.close_code is not None:
                    counts[f"close:{ws.close_code}"] += 1
                reading.cancel()
        except (OSError, InvalidStatus, TimeoutError) as refused:
            counts[f"refused:{type(refused).__name__}"] += 1
            await asyncio.sleep(0.1)


async def send_paced(
    ws: ClientConnection,
    end: float,
    per_s: float,
    counts: Counts,
    frames: Callable[[int], str | bytes],
) -> None:
    """Send ``frames(n)`` ``per_s`` times a second until ``end`` (or the server closes)."""
    n, began = 0, time.monotonic()
    while going(end):
        await ws.send(frames(n))
        counts["sent"] += 1
        n += 1
        await asyncio.sleep(max(0.0, began + n / per_s - time.monotonic()))


async def flood(
    target: Target,
    seconds: float,
    counts: Counts,
    connections: int,
    per_s: float,
    frames: Callable[[int], str | bytes],
) -> None:
    async def body(ws: ClientConnection, end: float) -> None:
        await send_paced(ws, end, per_s, counts, frames)

    await asyncio.gather(*(connection(target, seconds, counts, body) for _ in range(connections)))


def constant(frame: str | bytes) -> Callable[[int], str | bytes]:
    return lambda _: frame


# -- the attacks ---------------------------------------------------------------------------------


async def invalid_hello_flood(target: Target, seconds: float, counts: Counts) -> None:
    """8 connections, each sending 45 ``{"type": "hello", "name": 5}`` a second."""
    await flood(target, seconds, counts, 8, 45, constant('{"type": "hello", "name": 5}'))


async def sustained_flood(target: Target, seconds: float, counts: Counts) -> None:
    """One connection at 30 times the rate (50 a second): 1,500 ``leave`` a second."""
    await flood(target, seconds, counts, 1, 1500, constant('{"type": "leave"}'))


async def connection_hog(target: Target, seconds: float, counts: Counts) -> None:
    """Open connections (never saying hello), 16 at a time, up to the per-address cap and past
    it: those taken are held, those refused are tried again at once."""
    end = time.monotonic() + seconds
    held: list[ClientConnection] = []

    async def one() -> None:
        try:
            ws = await connect(target.url, open_timeout=5, close_timeout=1)
        except InvalidStatus as refused:  # refused at the handshake
            counts[f"http:{refused.response.status_code}"] += 1
            return
        except (OSError, TimeoutError) as refused:
            counts[f"refused:{type(refused).__name__}"] += 1
            return
        counts["sent"] += 1
        try:
            frame = await asyncio.wait_for(ws.recv(), 0.1)
        except TimeoutError:
            held.append(ws)  # taken: hold it
            return
        except ConnectionClosed:
            frame = None
        if frame is not None:
            counts[f"error:{json.loads(frame)['code']}"] += 1
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ws.wait_closed(), 1)
        counts[f"close:{ws.close_code}"] += 1

    try:
        while going(end):
            await asyncio.gather(*(one() for _ in range(16)))
            counts["held"] = len(held)
    finally:
        await asyncio.gather(*(ws.close() for ws in held), return_exceptions=True)


async def new_identity_flood(target: Target, seconds: float, counts: Counts) -> None:
    """Two connections saying hello with a fresh name 45 times a second each."""
    await flood(
        target,
        seconds,
        counts,
        2,
        45,
        lambda n: json.dumps({"type": "hello", "name": f"N{time.monotonic_ns()}{n}"}),
    )


async def lobby_flood(target: Target, seconds: float, counts: Counts) -> None:
    """Every identity at hand opens a room and leaves it, again and again, as fast as the
    replies come (30 rooms an hour each are allowed)."""

    async def one(token: str) -> None:
        async def body(ws: ClientConnection, end: float) -> None:
            while going(end):
                await ws.send('{"type": "create_room", "rule_set": "octagon", "seats": 8}')
                await ws.send('{"type": "leave"}')
                counts["sent"] += 2
                await asyncio.sleep(0.05)

        await connection(target, seconds, counts, body, token)

    await asyncio.gather(*(one(token) for token in target.tokens))


async def silent_connections(target: Target, seconds: float, counts: Counts) -> None:
    """40 connections that never say hello, opened again whenever the server closes them."""

    async def body(ws: ClientConnection, end: float) -> None:
        counts["sent"] += 1  # a connection opened
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ws.wait_closed(), max(0.0, end - time.monotonic()))

    await asyncio.gather(*(connection(target, seconds, counts, body) for _ in range(40)))


async def spectate_amplification(target: Target, seconds: float, counts: Counts) -> None:
    """An outsider sending ``spectate`` for the racer's room 45 times a second."""
    message = json.dumps({"type": "spectate", "code": target.room})

    async def body(ws: ClientConnection, end: float) -> None:
        await send_paced(ws, end, 45, counts, constant(message))

    await connection(target, seconds, counts, body, target.tokens[0])


async def deep_json(target: Target, seconds: float, counts: Counts) -> None:
    """4 connections sending a list nested 8,000 deep, 45 times a second each."""
    await flood(target, seconds, counts, 4, 45, constant(DEEP))


async def odd_move_texts(target: Target, seconds: float, counts: Counts) -> None:
    """A racer in a room of its own sending moves with ``²`` and ``٣``, 45 a second."""

    async def body(ws: ClientConnection, end: float) -> None:
        for request in (
            {"type": "create_room", "rule_set": "octagon", "seats": 2},
            {"type": "start"},
        ):
            await ws.send(json.dumps(request))
        await send_paced(
            ws,
            end,
            45,
            counts,
            lambda n: json.dumps(
                {"type": "move", "move": ODD_MOVES[n % len(ODD_MOVES)]}, ensure_ascii=False
            ),
        )

    await connection(target, seconds, counts, body, target.tokens[1 % len(target.tokens)])


async def bad_values(target: Target, seconds: float, counts: Counts) -> None:
    """A player asking for the leaderboard of day 2026-13-45 and deal 2^64, and a room with
    deal 2^64, 45 times a second."""

    async def body(ws: ClientConnection, end: float) -> None:
        await send_paced(ws, end, 45, counts, lambda n: json.dumps(BAD_VALUES[n % len(BAD_VALUES)]))

    await connection(target, seconds, counts, body, target.tokens[2 % len(target.tokens)])


async def oversized_frames(target: Target, seconds: float, counts: Counts) -> None:
    """4 connections sending 18 kB frames (16,384 characters at most, 2 bytes each), 45 a
    second each."""
    await flood(target, seconds, counts, 4, 45, constant(TOO_LARGE))


async def binary_frames(target: Target, seconds: float, counts: Counts) -> None:
    """4 connections sending a hello in a binary frame, 45 a second each."""
    await flood(target, seconds, counts, 4, 45, constant(b'{"type": "hello", "name": "Ann"}'))


async def hostile_names(target: Target, seconds: float, counts: Counts) -> None:
    """The identities named ``HOSTILE_NAMES`` spectate the racer's room and try to join it,
    and new connections say hello with names the server refuses, 10 a second each."""
    join = json.dumps({"type": "join", "code": target.room})
    spectate = json.dumps({"type": "spectate", "code": target.room})

    async def named(token: str) -> None:
        async def body(ws: ClientConnection, end: float) -> None:
            await send_paced(ws, end, 10, counts, lambda n: spectate if n == 0 else join)

        await connection(target, seconds, counts, body, token)

    await asyncio.gather(
        *(named(token) for token in target.tokens),
        flood(
            target,
            seconds,
            counts,
            1,
            10,
            lambda n: json.dumps({"type": "hello", "name": REFUSED_NAMES[n % len(REFUSED_NAMES)]}),
        ),
    )


async def http_request(
    target: Target, method: str, path: str, counts: Counts, headers: str = ""
) -> bytes:
    """Send one request (``headers``: more header lines, each ending CRLF); count its status
    and return its body."""
    host, port = target.http.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        writer.write(
            f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n"
            f"{headers}Content-Length: 0\r\n\r\n".encode()
        )
        status = (await reader.readline()).split(b" ", 2)[1].decode()
        answer = await reader.read()
        counts[f"http:{status}"] += 1
        return answer.partition(b"\r\n\r\n")[2]
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()


async def http_paced(
    target: Target,
    seconds: float,
    counts: Counts,
    clients: int,
    per_s: float,
    requests: Callable[[int], tuple[str, str]],
) -> None:
    async def client() -> None:
        end, began, n = time.monotonic() + seconds, time.monotonic(), 0
        while going(end):
            try:
                await http_request(target, *requests(n), counts)
            except (OSError, IndexError) as failed:
                counts[f"refused:{type(failed).__name__}"] += 1
            counts["sent"] += 1
            n += 1
            await asyncio.sleep(max(0.0, began + n / per_s - time.monotonic()))

    await asyncio.gather(*(client() for _ in range(clients)))


async def replay_hammer(target: Target, seconds: float, counts: Counts) -> None:
    """8 clients each asking 25 times a second for the replay of a finished race."""
    path = f"/api/races/{target.race_id}/replay?player={target.player_id}"
    await http_paced(target, seconds, counts, 8, 25, lambda _: ("GET", path))


async def http_bad_requests(target: Target, seconds: float, counts: Counts) -> None:
    """8 clients each sending 25 a second of other methods and bad queries."""
    await http_paced(target, seconds, counts, 8, 25, lambda n: BAD_HTTP[n % len(BAD_HTTP)])


Attack = Callable[[Target, float, Counts], Coroutine[Any, Any, None]]
ATTACKS: dict[str, Attack] = {
    attack.__name__.replace("_", "-"): attack
    for attack in (
        invalid_hello_flood,
        sustained_flood,
        connection_hog,
        new_identity_flood,
        silent_connections,
        spectate_amplification,
        deep_json,
        odd_move_texts,
        bad_values,
        oversized_frames,
        binary_frames,
        hostile_names,
        lobby_flood,
        replay_hammer,
        http_bad_requests,
    )
}
"""In the order the bench runs them against one server: the lobby flood spends its identities'
rooms, which odd_move_texts needs one of."""


# -- issue 23: one address taking what everyone shares ------------------------------------------

ATTACKER_ADDRESS = "198.51.100.23"
"""The address the attacks of this block claim in ``X-Forwarded-For``: a server that trusts
127.0.0.1 as a proxy (the tests') counts them against it, apart from the honest clients; any
other server ignores the header, and they count against 127.0.0.1 with everyone."""
FORWARDED = {"X-Forwarded-For": ATTACKER_ADDRESS}
LOBBY_IDENTITIES = 10
LOBBIES_EACH = 5
"""Connections per identity, each trying to hold a public lobby: 50 in all, as the probe's
60 lobbies of 10 identities."""
LOBBY_RETRY_S = 0.5
BOARD_READERS = 20


async def public_lobby_flood(target: Target, seconds: float, counts: Counts) -> None:
    """One address's identities (those at hand, then new ones up to ``LOBBY_IDENTITIES``)
    hold public lobbies, ``LOBBIES_EACH`` connections each, asking again every
    ``LOBBY_RETRY_S`` when refused; meanwhile the address reads ``GET /api/rooms``. Counted:
    ``listed-own-max``, the most of its lobbies the list showed, and ``listed-others-min``, the
    fewest other rooms it showed once the lobbies were all asked for."""
    end = time.monotonic() + seconds
    identities = [*target.tokens[:LOBBY_IDENTITIES]]
    for n in range(LOBBY_IDENTITIES - len(identities)):
        token = await new_identity(target, f"Lobby {n}", counts)
        if token is None:
            break
        identities.append(token)
    names = set(HOSTILE_NAMES) | {f"Lobby {n}" for n in range(LOBBY_IDENTITIES)}
    asked = asyncio.Event()
    waiting = len(identities) * LOBBIES_EACH

    def first_answer() -> None:
        nonlocal waiting
        waiting -= 1
        if waiting == 0:
            asked.set()

    holding = [
        hold_public_lobby(target, end, token, n, counts, first_answer)
        for token in identities
        for n in range(LOBBIES_EACH)
    ]
    await asyncio.gather(*holding, read_public_list(target, end, names, asked, counts))


async def new_identity(target: Target, name: str, counts: Counts) -> str | None:
    """A new player made from the attacker's address, or None once it may make no more."""
    async with connect(target.url, additional_headers=FORWARDED) as ws:
        await ws.send(json.dumps({"type": "hello", "name": name}))
        welcome = json.loads(await ws.recv())
    counts["sent"] += 1
    if welcome["type"] != "welcome":
        counts[f"error:{welcome['code']}"] += 1
        return None
    counts["reply:welcome"] += 1
    token: str = welcome["token"]
    return token


async def hold_public_lobby(
    target: Target, end: float, token: str, n: int, counts: Counts, first_answer: Callable[[], None]
) -> None:
    """One connection holding one public lobby until ``end`` (asking until it gets one);
    ``first_answer`` is called once its first request is answered (or it could not ask)."""
    answered = False
    try:
        async with connect(
            target.url, open_timeout=5, close_timeout=1, additional_headers=FORWARDED
        ) as ws:
            await ws.send(json.dumps({"type": "hello", "token": token}))
            await ws.recv()
            while going(end):
                await ws.send(
                    json.dumps(
                        {
                            "type": "create_room",
                            "public": True,
                            "seats": 8,
                            "rule_set": ("octagon", "all-fours")[n % 2],
                        }
                    )
                )
                counts["sent"] += 1
                answer = json.loads(await ws.recv())
                if not answered:
                    answered = True
                    first_answer()
                if answer["type"] == "room":
                    counts["reply:room"] += 1
                    break
                counts[f"error:{answer['code']}"] += 1
                await asyncio.sleep(LOBBY_RETRY_S)
            await asyncio.sleep(max(0.0, end - time.monotonic()))
    except (ConnectionClosed, OSError, InvalidStatus, TimeoutError) as refused:
        counts[f"refused:{type(refused).__name__}"] += 1
    finally:
        if not answered:
            first_answer()


async def read_public_list(
    target: Target, end: float, names: set[str], asked: asyncio.Event, counts: Counts
) -> None:
    """Read the public list twice a second (its limit per address), as the attacker."""
    while going(end):
        body = await http_request(
            target, "GET", "/api/rooms", counts, f"X-Forwarded-For: {ATTACKER_ADDRESS}\r\n"
        )
        if body.startswith(b"{") and asked.is_set():
            rooms = json.loads(body)["rooms"]
            own = sum(room["host"] in names for room in rooms)
            counts["listed-own-max"] = max(counts["listed-own-max"], own)
            others = len(rooms) - own
            counts["listed-others-min"] = min(counts.get("listed-others-min", others), others)
        await asyncio.sleep(0.5)


async def spectator_churn(target: Target, seconds: float, counts: Counts) -> None:
    """16 anonymous connections, each spectating the racer's room and leaving it again, 40
    requests a second (inside the rate limit). Counted: ``spectators-max``, the most
    spectators a reply showed."""
    messages = (json.dumps({"type": "spectate", "code": target.room}), '{"type": "leave"}')

    async def body(ws: ClientConnection, end: float) -> None:
        await ws.send('{"type": "hello"}')
        await send_paced(ws, end, 40, counts, lambda n: messages[n % 2])

    await asyncio.gather(
        *(connection(target, seconds, counts, body, reader=read_spectators) for _ in range(16))
    )


async def read_spectators(ws: ClientConnection, counts: Counts) -> None:
    """``read_counting``, and the most spectators a ``room`` showed."""
    with contextlib.suppress(ConnectionClosed):
        async for frame in ws:
            message = json.loads(frame)
            if message.get("type") == "error":
                counts[f"error:{message['code']}"] += 1
                continue
            counts[f"reply:{message.get('type')}"] += 1
            if message.get("type") == "room":
                counts["spectators-max"] = max(counts["spectators-max"], message["spectators"])


async def unknown_codes(target: Target, seconds: float, counts: Counts) -> None:
    """4 anonymous connections, each spectating a room code nobody holds 45 times a second."""

    async def body(ws: ClientConnection, end: float) -> None:
        await ws.send('{"type": "hello"}')
        await send_paced(
            ws,
            end,
            45,
            counts,
            lambda n: json.dumps(
                {"type": "spectate", "code": f"ZZ{time.monotonic_ns() % 10**8:08d}{n}"[:16]}
            ),
        )

    await asyncio.gather(*(connection(target, seconds, counts, body) for _ in range(4)))


async def board_readers(target: Target, seconds: float, counts: Counts) -> None:
    """``BOARD_READERS`` anonymous connections from one address, each reading a leaderboard 10
    times a second (each inside its connection's rate: 200 boards a second in all)."""
    board = json.dumps({"type": "leaderboard", "rule_set": "octagon", "board": "most_wins"})

    async def body(ws: ClientConnection, end: float) -> None:
        await ws.send('{"type": "hello"}')
        await send_paced(ws, end, 10, counts, constant(board))

    await asyncio.gather(*(connection(target, seconds, counts, body) for _ in range(BOARD_READERS)))


ATTACKS.update(
    {
        attack.__name__.replace("_", "-"): attack
        for attack in (public_lobby_flood, spectator_churn, unknown_codes, board_readers)
    }
)


# -- the solver (issue 23, item 5) ----------------------------------------------------------------

SOLVER_IDENTITIES = 10
"""Identities the solver floods make from one address (as many as it may make in a minute)."""
VERDICT_IDENTITIES = 4
HARD_RULE_SET = "four-corners"
"""Where the solver seldom finds a win within its budget: every search runs it out."""
REFUSED_PAUSE_S = 0.2
"""How long a flooder waits after a refusal before it asks again (so as not to be closed)."""


async def until_reply(
    ws: ClientConnection, counts: Counts, request: dict[str, Any], kind: str | None = None
) -> dict[str, Any]:
    """Send ``request`` with an id and read until its reply, counted; with ``kind``, until a
    room event of that type too (it may come before the reply: what a request makes happen
    is said before the reply), which is returned unless the reply is an error."""
    request_id = f"r{time.monotonic_ns()}"
    await ws.send(json.dumps({**request, "id": request_id}))
    counts["sent"] += 1
    reply: dict[str, Any] | None = None
    event: dict[str, Any] | None = None
    while reply is None or (kind is not None and event is None):
        message = json.loads(await ws.recv())
        if message.get("id") == request_id:
            reply = dict(message)
            error = reply["type"] == "error"
            counts[f"error:{reply['code']}" if error else f"reply:{reply['type']}"] += 1
            if error:
                return reply
        elif kind is not None and message.get("type") == kind:
            event = dict(message)
    assert reply is not None
    return event or reply


async def answered_connection(
    target: Target,
    seconds: float,
    counts: Counts,
    token: str,
    body: Callable[[ClientConnection, float], Awaitable[None]],
) -> None:
    """``connection`` for a body that reads its own replies (``until_reply``)."""
    end = time.monotonic() + seconds
    while going(end):
        try:
            async with connect(target.url, open_timeout=5, close_timeout=2) as ws:
                try:
                    await until_reply(ws, counts, {"type": "hello", "token": token})
                    await body(ws, end)
                except ConnectionClosed:
                    pass
                if ws.close_code is not None:
                    counts[f"close:{ws.close_code}"] += 1
        except (OSError, InvalidStatus, TimeoutError) as refused:
            counts[f"refused:{type(refused).__name__}"] += 1
            await asyncio.sleep(0.1)


async def solver_identities(target: Target, counts: Counts, wanted: int) -> list[str]:
    """Tokens of ``wanted`` identities: the target's, then new ones made from this address
    (as many as the server lets it make; a refusal is counted)."""
    tokens = list(target.tokens[:wanted])
    async with connect(target.url, open_timeout=5, close_timeout=2) as ws:
        while len(tokens) < wanted:
            welcome = await until_reply(
                ws, counts, {"type": "hello", "name": f"Solver{len(tokens)}"}
            )
            if welcome["type"] != "welcome":
                break
            tokens.append(welcome["token"])
    return tokens


async def practising(ws: ClientConnection, counts: Counts) -> bool:
    """Open a room alone on a random chosen deal of the hard rule set and start it: whether
    the race is on."""
    opened = await until_reply(
        ws,
        counts,
        {
            "type": "create_room",
            "rule_set": HARD_RULE_SET,
            "seats": 2,
            "deal": {"kind": "number", "number": str(secrets.randbelow(2**63))},
        },
    )
    if opened["type"] == "error":
        return False
    started = await until_reply(ws, counts, {"type": "start"}, kind="race_started")
    return started["type"] != "error"


async def asking_hints(target: Target, seconds: float, counts: Counts, token: str) -> None:
    """One identity practising alone, asking for a hint again as soon as the last is answered
    (after a refusal, ``REFUSED_PAUSE_S`` later)."""

    async def body(ws: ClientConnection, end: float) -> None:
        if not await practising(ws, counts):
            return
        while going(end):
            given = await until_reply(ws, counts, {"type": "hint"})
            if given["type"] == "error":
                await asyncio.sleep(REFUSED_PAUSE_S)

    await answered_connection(target, seconds, counts, token, body)


async def finishing_races(target: Target, seconds: float, counts: Counts, token: str) -> None:
    """One identity starting races alone on random deals and resigning each at once: each
    finished race's deal is for the solver to search."""

    async def body(ws: ClientConnection, end: float) -> None:
        while going(end):
            if await practising(ws, counts):
                await until_reply(ws, counts, {"type": "resign"}, kind="race_finished")
                counts["races_finished"] += 1
            left = await until_reply(ws, counts, {"type": "leave"})
            if left["type"] == "error":
                await asyncio.sleep(REFUSED_PAUSE_S)

    await answered_connection(target, seconds, counts, token, body)


async def hint_flood(target: Target, seconds: float, counts: Counts) -> None:
    """Ten identities of one address, each practising alone on a hard deal and asking for
    hints as fast as they are answered."""
    tokens = await solver_identities(target, counts, SOLVER_IDENTITIES)
    await asyncio.gather(*(asking_hints(target, seconds, counts, token) for token in tokens))


async def verdict_flood(target: Target, seconds: float, counts: Counts) -> None:
    """Four identities of one address finishing races alone as fast as they can, each race's
    deal a new one for the solver to search (10 s each by default)."""
    tokens = await solver_identities(target, counts, VERDICT_IDENTITIES)
    await asyncio.gather(*(finishing_races(target, seconds, counts, token) for token in tokens))


async def solver_flood(target: Target, seconds: float, counts: Counts) -> None:
    """Both at once from one address: four of its ten identities finish races, the other six
    ask for hints."""
    tokens = await solver_identities(target, counts, SOLVER_IDENTITIES)
    await asyncio.gather(
        *(finishing_races(target, seconds, counts, token) for token in tokens[:VERDICT_IDENTITIES]),
        *(asking_hints(target, seconds, counts, token) for token in tokens[VERDICT_IDENTITIES:]),
    )


ATTACKS.update(
    {
        attack.__name__.replace("_", "-"): attack
        for attack in (hint_flood, verdict_flood, solver_flood)
    }
)


def run_attack(
    name: str, target: Target, seconds: float, stop: Stop | None = None
) -> dict[str, Any]:
    """Run one attack in a new event loop (in a child process) for ``seconds``, or until
    ``stop`` is set: its counts."""
    counts = Counts()
    STOPPING.clear()
    asyncio.run(until_stopped(ATTACKS[name](target, seconds, counts), seconds, stop))
    return dict(counts)


class Stop(Protocol):
    """A ``multiprocessing`` event, as the parent's manager hands it to the child."""

    def wait(self, timeout: float | None = None) -> bool: ...


STOPPING = threading.Event()
"""Set when the parent says stop: the attack's loops end as at their deadline."""

STOP_GRACE_S = 2.0


def going(end: float) -> bool:
    """Whether an attack's loop goes on: before its deadline, and not told to stop."""
    return time.monotonic() < end and not STOPPING.is_set()


async def until_stopped(
    attack: Coroutine[Any, Any, None], seconds: float, stop: Stop | None
) -> None:
    """Run ``attack``. Once ``stop`` is set its loops end as at their deadline (so what is on
    its way is still read and counted); one still running ``STOP_GRACE_S`` later is
    cancelled."""
    running = asyncio.create_task(attack)
    if stop is None:
        await running
        return
    stopped = asyncio.create_task(asyncio.to_thread(stop.wait, seconds))
    await asyncio.wait([running, stopped], return_when=asyncio.FIRST_COMPLETED)
    STOPPING.set()
    with contextlib.suppress(TimeoutError, asyncio.CancelledError):
        await asyncio.wait_for(running, STOP_GRACE_S)
    await stopped


def ready() -> bool:
    """Nothing: submitted first to a child process, so it has imported this module."""
    return True


# -- farming ratings, rooms and the winnable pool (issue 23, items 1, 2 and 4) --------------------

FARM_RULE_SET = "all-fours"
"""Quick to deal and to move in, and pooled: nearly half its deals are won, each decided in
milliseconds (docs/winnability.md)."""
REPLY_S = 5.0
"""How long a farming client waits for a reply or an event before it gives up a round."""


@dataclass
class Player:
    """A farming client's connection, as the player of a token: its requests, and the frames
    read past meanwhile (a countdown of 0 s starts the race before the ``ready`` reply)."""

    ws: ClientConnection
    player_id: str
    passed: list[dict[str, Any]]

    @classmethod
    async def connect(cls, target: Target, token: str, address: str) -> Player:
        """Say hello as the player of ``token``, saying it comes from ``address``
        (``X-Forwarded-For``): a server that trusts no proxy ignores that, as it should; one
        behind a proxy it trusts takes it, as it would from the proxy (a player with many
        addresses)."""
        ws = await connect(
            target.url,
            open_timeout=5,
            close_timeout=1,
            additional_headers={"X-Forwarded-For": address},
        )
        await ws.send(json.dumps({"type": "hello", "token": token}))
        welcome = json.loads(await ws.recv())
        return cls(ws, welcome["player_id"], [])

    async def ask(self, request: dict[str, Any], counts: Counts) -> dict[str, Any]:
        """Send a request with an id of its own and read up to its reply: the reply, counted
        as ``reply:<type>`` or ``error:<code>``."""
        request_id = f"r{time.monotonic_ns()}"
        await self.ws.send(json.dumps({**request, "id": request_id}))
        counts["sent"] += 1
        async with asyncio.timeout(REPLY_S):
            while (message := json.loads(await self.ws.recv())).get("id") != request_id:
                self.passed.append(message)
        if message["type"] == "error":
            counts[f"error:{message['code']}"] += 1
        else:
            counts[f"reply:{message['type']}"] += 1
        return message  # type: ignore[no-any-return]

    async def until(self, kind: str) -> dict[str, Any]:
        """The next frame of type ``kind``, among those read past or still to come; what came
        before it is dropped."""
        while self.passed:
            message = self.passed.pop(0)
            if message["type"] == kind:
                return message
        async with asyncio.timeout(REPLY_S):
            while (message := json.loads(await self.ws.recv()))["type"] != kind:
                pass
        return message  # type: ignore[no-any-return]

    async def move_once(self, counts: Counts) -> None:
        """The first legal move of the board the race dealt (not to resign)."""
        view = await self.until("view")
        await self.ask(
            {
                "type": "move",
                "move": next(move for move in view["view"]["legal_moves"] if move != "resign"),
            },
            counts,
        )


async def rating_farm(target: Target, seconds: float, counts: Counts) -> None:
    """The farm of issue 23: the first identity at hand sits in a rated room (a secret deal)
    with each of the others at once, and every race, both make a move and resign, and the first
    offers a rematch, which the other accepts, as fast as the replies come. Each identity says
    it comes from an address of its own. Counts the races finished (``race``) and those the
    first identity was rated in (``rated``)."""
    main, *throwaways = target.tokens
    end = time.monotonic() + seconds

    async def room(number: int, throwaway: str) -> None:
        host = await Player.connect(target, main, "10.66.0.1")
        other = await Player.connect(target, throwaway, f"10.66.1.{number}")
        try:
            opened = await host.ask(
                {"type": "create_room", "rule_set": FARM_RULE_SET, "seats": 2}, counts
            )
            if (
                opened["type"] == "error"
                or (await other.ask({"type": "join", "code": opened["code"]}, counts))["type"]
                == "error"
            ):
                return
            while going(end):
                for player in (host, other):
                    await player.ask({"type": "ready"}, counts)
                for player in (other, host):  # the throwaway resigns first
                    await player.move_once(counts)
                    await player.ask({"type": "resign"}, counts)
                finished = await host.until("race_finished")
                counts["race"] += 1
                mine = next(
                    entry for entry in finished["ranking"] if entry["player_id"] == host.player_id
                )
                counts["rated" if mine["rating"] else "unrated"] += 1
                while (
                    going(end) and (await host.ask({"type": "rematch"}, counts))["type"] == "error"
                ):
                    await asyncio.sleep(0.1)  # refused (the rooms quota): ask again later
                await other.ask({"type": "rematch"}, counts)  # the throwaway accepts the offer
        except (ConnectionClosed, TimeoutError):
            counts["gave_up"] += 1
        finally:
            await asyncio.gather(host.ws.close(), other.ws.close())

    await asyncio.gather(*(room(number, token) for number, token in enumerate(throwaways, start=1)))


async def rematch_churn(target: Target, seconds: float, counts: Counts) -> None:
    """One identity alone in a room on a secret deal: start, resign, rematch, again, as fast as
    the replies come (issue 23: 21 stored races in 61 s). Counts the races finished
    (``race``)."""
    end = time.monotonic() + seconds
    player = await Player.connect(target, target.tokens[-1], "10.66.2.1")
    try:
        opened = await player.ask(
            {"type": "create_room", "rule_set": FARM_RULE_SET, "seats": 2}, counts
        )
        if opened["type"] == "error":
            return
        while going(end):
            await player.ask({"type": "start"}, counts)
            await player.until("race_started")
            await player.ask({"type": "resign"}, counts)
            await player.until("race_finished")
            counts["race"] += 1
            while going(end) and (await player.ask({"type": "rematch"}, counts))["type"] == "error":
                await asyncio.sleep(0.05)  # refused (the rooms quota): ask again
    except (ConnectionClosed, TimeoutError):
        counts["gave_up"] += 1
    finally:
        await player.ws.close()


async def winnable_drain(target: Target, seconds: float, counts: Counts) -> None:
    """One identity opens rooms asking for a winnable deal and leaves each at once, as fast as
    the replies come (issue 23: the pool was empty in under 3 s). Counts the rooms that got a
    proved deal (``winnable:true``) and those that fell back (``winnable:false``)."""
    end = time.monotonic() + seconds
    player = await Player.connect(target, target.tokens[0], "10.66.3.1")
    request = {
        "type": "create_room",
        "rule_set": FARM_RULE_SET,
        "seats": 2,
        "deal": {"kind": "secret", "winnable": True},
    }
    try:
        while going(end):
            opened = await player.ask(request, counts)
            if opened["type"] == "room":
                counts[f"winnable:{json.dumps(opened['winnable'])}"] += 1
                await player.ask({"type": "leave"}, counts)
            else:
                await asyncio.sleep(0.05)  # refused: ask again
    except (ConnectionClosed, TimeoutError):
        counts["gave_up"] += 1
    finally:
        await player.ws.close()


ATTACKS.update(
    {
        attack.__name__.replace("_", "-"): attack
        for attack in (rating_farm, rematch_churn, winnable_drain)
    }
)
"""Each spends its identities' rooms: the bench runs them on a server of their own
(``--attack NAME``); after the lobby flood they are refused at once."""
