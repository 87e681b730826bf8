"""The terminal racer's connection: who you are, the room you are in, staying connected.

``RaceSession`` wraps the SDK's ``RaceClient``. It says hello with your stored token (or, the
first time, with your name, and stores the token it gets), sends what the screens ask for, feeds
every reply and room event into a ``RaceState`` and calls ``on_change`` after each change. When
the connection drops it reconnects and resumes (the SDK's ``reconnect``), trying again with a
growing pause until the server is back.

Tokens are kept in a small JSON file only the user may read (``IdentityFile``): one per server
and name, so ``--name Bob`` on the same machine is another player, and coming back without a
name is the player who played last.

The rated board is read over HTTP (``/api/ratings``, on the server's one port): it is not a
WebSocket request.
"""

from __future__ import annotations

import asyncio
import getpass
import json
import os
import unicodedata
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import quote, urlencode

from clients.sdk import CONNECTION_ERRORS, RaceClient, RequestRefused
from clients.terminal.state import RaceState
from wire.protocol import (
    Leaderboard,
    Matched,
    MoveAccepted,
    QueueStatus,
    RoomState,
    ShuttingDown,
    Welcome,
)
from wire.ratings import RatingBoard

DEFAULT_SERVER = "ws://127.0.0.1:8765/ws"
"""Where ``patience-race serve`` listens unless told otherwise."""
FIRST_PAUSE_S = 0.25
LONGEST_PAUSE_S = 5.0
NAME_LIMIT = 32


def default_token_path() -> Path:
    config = os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config"
    return Path(config) / "patience-race" / "token.json"


def default_name() -> str:
    try:
        return getpass.getuser()[:NAME_LIMIT] or "player"
    except (OSError, KeyError):
        return "player"


@dataclass(frozen=True)
class Identity:
    server: str
    name: str
    player_id: str
    token: str


class IdentityFileError(Exception):
    """The token file exists but is not one: it is left alone for the user to look at."""


class IdentityFile:
    """``{"players": [{"server", "name", "player_id", "token"}, ...]}``, most recent last."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self) -> list[Identity]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            return [Identity(**entry) for entry in data["players"]]
        except FileNotFoundError:
            return []
        except (OSError, ValueError, KeyError, TypeError) as error:
            raise IdentityFileError(
                f"{self.path} is not a token file ({error}): move it away "
                "or choose another with --token-file"
            ) from None

    def find(self, server: str, name: str | None = None) -> Identity | None:
        """The latest player on that server (with that name, if given: trimmed and in NFC, as
        the server stores names)."""
        if name is not None:
            name = unicodedata.normalize("NFC", name).strip()
        matching = [
            identity
            for identity in self.load()
            if identity.server == server and name in (None, identity.name)
        ]
        return matching[-1] if matching else None

    def save(self, identity: Identity) -> None:
        """Store (or move to the end, as the most recent) a player's token, readable only by the
        user: written to a new file, then renamed over the old one."""
        others = [
            entry
            for entry in self.load()
            if entry.server != identity.server
            or (identity.name != entry.name and identity.player_id != entry.player_id)
        ]
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fresh = self.path.with_name(self.path.name + ".new")
        descriptor = os.open(fresh, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as file:
            json.dump({"players": [asdict(entry) for entry in [*others, identity]]}, file, indent=2)
        os.replace(fresh, self.path)


def waiting_text(waiting: int, window: int | None, waited_s: int) -> str:
    """The quick race queue as the status line says it."""
    accepted = "any rating" if window is None else f"ratings within ±{window}"
    return f"looking for racers: {waiting} waiting, {accepted}, {waited_s} s"


class RaceSession:
    def __init__(self, server: str, identities: IdentityFile, name: str | None = None) -> None:
        self.server = server
        self.identities = identities
        self.name = name
        """The name asked for on the command line: that player's token, or a new player."""
        self.client: RaceClient | None = None
        self.welcome: Welcome | None = None
        self.state = RaceState("")
        self.on_change: Callable[[], None] = lambda: None
        self.on_notice: Callable[[str], None] = lambda text: None
        self._listener: asyncio.Task[None] | None = None
        self._connecting = asyncio.Lock()
        self._closing = False

    @property
    def needs_name(self) -> bool:
        """No name was given and no player of this server is stored: ask for one."""
        return self.name is None and self.identities.find(self.server) is None

    # -- identity -------------------------------------------------------------------------------

    async def connect(self, name: str | None = None) -> Welcome:
        """Connect and say hello, once; then listen for room events in the background."""
        async with self._connecting:
            if self.welcome is not None:
                return self.welcome
            client = await RaceClient.connect(self.server)
            try:
                welcome = await self._hello(client, name or self.name)
            except BaseException:
                await client.close()
                raise
            self.client, self.welcome = client, welcome
            self.state = RaceState(welcome.player_id)
            self._listener = asyncio.create_task(self._listen())
            self._listener.add_done_callback(self._listener_ended)
            return welcome

    async def _hello(self, client: RaceClient, name: str | None) -> Welcome:
        """With the stored token of that name (or of the latest player); else as a new player,
        whose token is stored at once."""
        known = self.identities.find(self.server, name)
        if known is not None:
            try:
                welcome = await client.hello(token=known.token)
            except RequestRefused as refused:
                if refused.code != "bad_token":
                    raise
                self.on_notice(
                    f"this server does not know {known.name} any more: joining as a new player"
                )
                name = known.name
            else:
                self.identities.save(known)
                return welcome
        welcome = await client.hello(name=name or default_name())
        assert welcome.token is not None, "a new player always gets a token"
        self.identities.save(Identity(self.server, welcome.name, welcome.player_id, welcome.token))
        return welcome

    def _connected(self) -> RaceClient:
        if self.client is None:
            raise ConnectionError("not connected to the server")
        return self.client

    # -- rooms ----------------------------------------------------------------------------------

    async def create_room(
        self, rule_set: str, *, deal: str, number: int | None, seats: int, time_limit_s: int | None
    ) -> None:
        room = await self._connected().create_room(
            rule_set, seats=seats, deal=deal, number=number, time_limit_s=time_limit_s
        )
        self._enter(room)

    async def daily(self, rule_set: str) -> None:
        self._enter(await self._connected().daily(rule_set))

    async def join(self, code: str) -> None:
        client = self._connected()
        self.state = RaceState(self.state.player_id)
        self.state.expect(code)
        try:
            room = await client.join(code)
        except Exception:  # not on cancellation: the room's events may have shown it already
            self.state = RaceState(self.state.player_id)
            raise
        self._enter(room)

    async def quick_race(self, rule_set: str) -> None:
        """Wait in the rule set's rated queue, the wait said as it goes (``queue``, by
        ``_listen``, which takes the room's events from ``matched`` on), until the room."""
        client = self._connected()
        queued = await client.quick_race(rule_set)
        self.on_notice(waiting_text(queued.waiting, queued.window, 0))
        _, room = await client.matched()
        self._enter(room)

    def _enter(self, room: RoomState) -> None:
        if self.state.code != room.code:
            self.state = RaceState(self.state.player_id)
        self.state.enter(room)
        self.on_change()

    async def leave(self) -> None:
        await self._connected().leave()
        self.state = RaceState(self.state.player_id)
        self.on_change()

    async def ready(self, ready: bool) -> None:
        await self._connected().ready(ready)

    async def start(self) -> None:
        await self._connected().start()

    async def rematch(self, accept: bool = True) -> None:
        """Offer a rematch, or accept (``accept`` false: decline) the one offered."""
        await self._connected().rematch(accept)

    # -- racing ---------------------------------------------------------------------------------

    async def move(self, move: str) -> MoveAccepted:
        return self._accepted(await self._connected().move(move))

    async def resign(self) -> MoveAccepted:
        return self._accepted(await self._connected().resign())

    def _accepted(self, ack: MoveAccepted) -> MoveAccepted:
        self.state.accept(ack)
        self.on_change()
        return ack

    async def leaderboard(self, rule_set: str, board: str) -> Leaderboard:
        return await self._connected().leaderboard(rule_set, board=board)

    @property
    def api(self) -> str:
        """The server's HTTP address: its WebSocket's, without ``/ws``."""
        return self.server.replace("ws", "http", 1).removesuffix("/ws")

    async def ratings(self, rule_set: str, limit: int = 20) -> RatingBoard:
        """The rule set's rated board, around this player once they are known."""
        query = {"limit": str(limit)}
        if self.state.player_id is not None:
            query["around"] = self.state.player_id
        url = f"{self.api}/api/ratings/{quote(rule_set)}?{urlencode(query)}"

        def fetch() -> bytes:
            with urllib.request.urlopen(url, timeout=10) as response:
                body: bytes = response.read()
                return body

        return RatingBoard.model_validate_json(await asyncio.to_thread(fetch))

    # -- the connection -------------------------------------------------------------------------

    async def _listen(self) -> None:
        """Apply every room event as it comes; reconnect whenever the connection drops."""
        while True:
            async for message in self._connected().events():
                if isinstance(message, ShuttingDown):
                    self.on_notice(message.message)
                    continue
                if isinstance(message, QueueStatus):
                    self.on_notice(waiting_text(message.waiting, message.window, message.waited_s))
                    continue
                if isinstance(message, Matched):  # the room's events follow: take them
                    self.state = RaceState(self.state.player_id)
                    self.state.expect(message.code)
                    self.on_notice(f"matched: {message.racers} racers, room {message.code}")
                    continue
                self.state.apply(message)
                self.on_change()
            if self._closing:
                return
            await self._reconnect()

    def _listener_ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self.on_notice(f"stopped listening to the server: {task.exception()!r}")

    async def _reconnect(self) -> None:
        pause = FIRST_PAUSE_S
        self.on_notice("connection lost: reconnecting…")
        while not self._closing:
            try:
                await self._resume()
            except CONNECTION_ERRORS:
                await asyncio.sleep(pause)
                pause = min(2 * pause, LONGEST_PAUSE_S)
                continue
            self.on_notice("reconnected")
            return

    async def _resume(self) -> None:
        """Back as the same player; back in the room with what was missed, if in one."""
        client = self._connected()
        if client.room_code is None:
            fresh = await RaceClient.connect(self.server)
            try:
                await fresh.hello(token=client.token)
            except BaseException:
                await fresh.close()
                raise
            self.client = fresh
            return
        try:
            await client.reconnect()
        except RequestRefused as refused:
            client.room_code = None
            self.state = RaceState(self.state.player_id)
            self.on_notice(f"could not return to the room: {refused.message}")
            self.on_change()

    async def close(self) -> None:
        self._closing = True
        if self._listener is not None:
            self._listener.cancel()
        if self.client is not None:
            await self.client.close()
