"""A Python (asyncio) client for protocol v1, built on the protocol models themselves.

    async with await RaceClient.connect("ws://127.0.0.1:8765/ws") as client:
        await client.hello(name="Ann")
        room = await client.create_room("octagon", seats=2)
        await client.ready()
        view = (await client.next_event(YourView)).view
        ack = await client.move(view.legal_moves[0])
        async for event in client.events():
            ...

Requests get an ``id`` and wait for the reply with that id; an error reply raises
``RequestRefused`` (with the protocol's ``code``). Everything else the server sends (room events,
your view) goes to the event stream. ``last_seq`` follows the room events, so ``reconnect``
resumes with exactly what was missed.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, Self, TypeVar

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from server.protocol import (
    SERVER_MESSAGE,
    CreateRoom,
    DealChoice,
    ErrorMessage,
    GetLeaderboard,
    GetRace,
    Hello,
    JoinRoom,
    Leaderboard,
    LeaveRoom,
    MakeMove,
    Message,
    MoveAccepted,
    Ok,
    PlayDaily,
    RaceRecord,
    Ready,
    Resign,
    Resume,
    Resynced,
    RoomState,
    ServerMessage,
    Spectate,
    StartRace,
    Welcome,
)

M = TypeVar("M", bound=Message)
RATE_LIMIT_PAUSE_S = 0.05


class RequestRefused(Exception):
    """The server answered a request with an error message."""

    def __init__(self, error: ErrorMessage) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.code = error.code
        self.message = error.message


class RaceClient:
    def __init__(self, url: str, ws: ClientConnection, record: bool = False) -> None:
        self.url = url
        self.ws = ws
        self.received: list[str] | None = [] if record else None
        """With ``record``: every frame received, as sent (for audits and debugging)."""
        self.player_id: str | None = None
        self.token: str | None = None
        self.room_code: str | None = None
        self.last_seq = 0
        self._ids = itertools.count(1)
        self._waiting: dict[str, asyncio.Future[ServerMessage]] = {}
        self._events: asyncio.Queue[ServerMessage | None] = asyncio.Queue()
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def connect(cls, url: str, record: bool = False, **options: Any) -> RaceClient:
        return cls(url, await connect(url, **options), record)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, kind: type[BaseException] | None, error: BaseException | None,
                        traceback: TracebackType | None) -> None:
        await self.close()

    async def close(self) -> None:
        await self.ws.close()
        await self._reader

    # -- reading --------------------------------------------------------------------------------

    async def _read(self) -> None:
        try:
            async for frame in self.ws:
                if self.received is not None:
                    self.received.append(str(frame))
                message = SERVER_MESSAGE.validate_json(frame)
                request_id = getattr(message, "id", None)
                waiting = self._waiting.pop(request_id, None) if request_id else None
                if waiting is not None and not waiting.done():
                    waiting.set_result(message)
                    continue
                seq = getattr(message, "seq", None)
                if seq is not None:
                    self.last_seq = max(self.last_seq, seq)
                self._events.put_nowait(message)
        except ConnectionClosed:
            pass
        finally:
            for waiting in self._waiting.values():
                if not waiting.done():
                    waiting.set_exception(ConnectionError("the connection closed"))
            self._events.put_nowait(None)

    async def events(self) -> AsyncIterator[ServerMessage]:
        """Everything that is not a reply, in order, until the connection closes."""
        while (message := await self._events.get()) is not None:
            yield message

    async def next_event(self, kind: type[M], timeout: float = 10.0) -> M:
        """The next event of that type (earlier events of other types are dropped)."""
        async with asyncio.timeout(timeout):
            async for message in self.events():
                if isinstance(message, kind):
                    return message
        raise ConnectionError(f"the connection closed before a {kind.__name__} came")

    # -- requests -------------------------------------------------------------------------------

    async def request(self, message: Message, timeout: float = 10.0) -> ServerMessage:
        """Send a request with a fresh id and return the reply; raise on an error reply.
        A ``rate_limited`` refusal is retried after a pause that doubles each time."""
        pause = RATE_LIMIT_PAUSE_S
        while True:
            request_id = str(next(self._ids))
            future: asyncio.Future[ServerMessage] = asyncio.get_running_loop().create_future()
            self._waiting[request_id] = future
            await self.ws.send(message.model_copy(update={"id": request_id})
                               .model_dump_json(by_alias=True, exclude_none=True))
            async with asyncio.timeout(timeout):
                reply = await future
            if not isinstance(reply, ErrorMessage):
                return reply
            if reply.code != "rate_limited" or pause > timeout:
                raise RequestRefused(reply)
            await asyncio.sleep(pause)
            pause *= 2

    async def _expect(self, message: Message, kind: type[M]) -> M:
        reply = await self.request(message)
        if not isinstance(reply, kind):
            raise TypeError(f"expected {kind.__name__}, got {type(reply).__name__}")
        return reply

    async def hello(self, name: str | None = None, token: str | None = None) -> Welcome:
        welcome = await self._expect(Hello(type="hello", name=name, token=token or self.token),
                                     Welcome)
        self.player_id = welcome.player_id
        self.token = welcome.token or token or self.token
        return welcome

    async def create_room(self, rule_set: str, *, seats: int = 2, deal: str = "secret",
                          number: int | None = None, time_limit_s: int | None = None
                          ) -> RoomState:
        room = await self._expect(CreateRoom(
            type="create_room", rule_set=rule_set, seats=seats, time_limit_s=time_limit_s,
            deal=DealChoice(kind=deal, number=None if number is None else str(number))),
            RoomState)
        return self._entered(room)

    async def join(self, code: str) -> RoomState:
        return self._entered(await self._expect(JoinRoom(type="join", code=code), RoomState))

    async def spectate(self, code: str) -> RoomState:
        return self._entered(await self._expect(Spectate(type="spectate", code=code), RoomState))

    async def daily(self, rule_set: str) -> RoomState:
        return self._entered(await self._expect(PlayDaily(type="daily", rule_set=rule_set),
                                                RoomState))

    def _entered(self, room: RoomState) -> RoomState:
        self.room_code = room.code
        self.last_seq = max(self.last_seq, room.seq)
        return room

    async def leave(self) -> Ok:
        ok = await self._expect(LeaveRoom(type="leave"), Ok)
        self.room_code = None
        return ok

    async def ready(self, ready: bool = True) -> Ok:
        return await self._expect(Ready(type="ready", ready=ready), Ok)

    async def start(self) -> Ok:
        return await self._expect(StartRace(type="start"), Ok)

    async def move(self, move: str | dict[str, Any]) -> MoveAccepted:
        return await self._expect(MakeMove.model_validate({"type": "move", "move": move}),
                                  MoveAccepted)

    async def resign(self) -> MoveAccepted:
        return await self._expect(Resign(type="resign"), MoveAccepted)

    async def resume(self, code: str | None = None) -> Resynced:
        """Back into the room with what was missed: the missed room events go to the event
        stream, in order, before the view that follows (``last_seq`` follows them)."""
        code = code or self.room_code
        if code is None:
            raise ValueError("resume needs a room code")
        resynced = await self._expect(Resume(type="resume", code=code, last_seq=self.last_seq),
                                      Resynced)
        self.room_code = code
        if resynced.full:
            self.last_seq = 0
        for event in resynced.missed:
            message = SERVER_MESSAGE.validate_python(event)
            self.last_seq = max(self.last_seq, getattr(message, "seq", 0) or 0)
            self._events.put_nowait(message)
        return resynced

    async def leaderboard(self, rule_set: str, **query: Any) -> Leaderboard:
        return await self._expect(GetLeaderboard.model_validate(
            {"type": "leaderboard", "rule_set": rule_set, **query}), Leaderboard)

    async def race_record(self, race_id: str) -> dict[str, Any]:
        record = await self._expect(GetRace(type="race_record", race_id=race_id), RaceRecord)
        return record.record

    async def reconnect(self) -> Resynced:
        """A new connection as the same player, back in the same room with what was missed."""
        if self.token is None or self.room_code is None:
            raise ValueError("reconnect needs a token and a room: say hello and join first")
        await self.close()
        self.ws = await connect(self.url)
        self._events = asyncio.Queue()
        self._reader = asyncio.create_task(self._read())
        await self.hello(token=self.token)
        return await self.resume()
