"""A Python (asyncio) client for protocol v1, built on the protocol models themselves.

A whole race of two, Ann and Bob, against a server started with ``patience-race serve``::

    import asyncio

    from clients.sdk import RaceClient
    from wire.protocol import RaceFinished, YourView

    URL = "ws://127.0.0.1:8765/ws"


    async def main() -> None:
        async with await RaceClient.connect(URL) as ann, await RaceClient.connect(URL) as bob:
            await ann.hello(name="Ann")
            await bob.hello(name="Bob")
            room = await ann.create_room("octagon", seats=2)
            await bob.join(room.code)
            await ann.ready()
            await bob.ready()  # everyone is ready: a countdown, then each racer's view
            view = (await ann.next_event(YourView)).view
            ack = await ann.move(next(move for move in view.legal_moves if move != "resign"))
            print(f"Ann: {ack.move}, {ack.on_foundations} cards home")
            await ann.resign()
            await bob.resign()  # everyone has finished: the result
            result = await ann.next_event(RaceFinished)
            for line in result.ranking:
                print(line.rank, line.name, line.status, line.on_foundations)


    asyncio.run(main())

No code to share: ``await ann.quick_race("octagon")`` waits in the rule set's queue, and
``matched, room = await ann.matched()`` returns once the server has matched Ann with others
waiting and joined her into the quick room (which starts by itself; docs/protocol.md, "Quick
race"); ``queue`` events say how the wait goes meanwhile.

A racer alone starts the race with ``start()`` instead of ``ready()`` (a chosen deal,
``create_room("octagon", deal="number", number=42)``, is practice: not ranked, and hints work).

Requests get an ``id`` and wait for the reply with that id; an error reply raises
``RequestRefused`` (with the protocol's ``code``). Everything else the server sends (room events,
your view) goes to the event stream. ``last_seq`` follows the room events, so ``reconnect``
resumes with exactly what was missed. A reply or an event that does not come in time raises
``StillWaiting``, which says what was awaited and what brings it (a ``TimeoutError``).

A server of several workers may hold the room on another worker than the one the connection
reached: the reply to join, spectate or resume then says ``reconnect_to`` (docs/protocol.md,
"Workers"). With ``follow_reconnect_to`` (the default) the client moves there before the request
returns: a new connection, hello with the token, resume with ``last_seq``, then the old
connection closes. The event stream goes on in order across the move (what the old connection
would still have said comes again through the resume), and ``connected_to`` says where the
client now is. ``url`` stays the server's own address: ``reconnect`` after a dropped connection
(a 1012 close when the room's worker died, say) goes there, never to a worker that may be gone.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, Self, TypeVar

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, WebSocketException

from wire.protocol import (
    SERVER_MESSAGE,
    AskHint,
    Countdown,
    CreateRoom,
    DealChoice,
    ErrorMessage,
    FollowVerdicts,
    GetLeaderboard,
    GetRace,
    Hello,
    HintGiven,
    JoinRoom,
    Leaderboard,
    LeaveQueue,
    LeaveRoom,
    MakeMove,
    Matched,
    Message,
    MoveAccepted,
    Ok,
    PlayDaily,
    Queued,
    QuickRace,
    RaceFinished,
    RaceRecord,
    RaceStarted,
    Ready,
    Rematch,
    RematchOffer,
    Resign,
    Resume,
    Resynced,
    RoomState,
    ServerMessage,
    Spectate,
    StartRace,
    Welcome,
    YourView,
)

M = TypeVar("M", bound=Message)
RATE_LIMIT_PAUSE_S = 0.05
CONNECTION_ERRORS = (OSError, ConnectionError, TimeoutError, WebSocketException)
"""What a lost or unreachable server raises (``ConnectionRefusedError`` is an ``OSError``; a
connection closed under a request, 1012 included, a ``ConnectionError``)."""


RACE_STARTS = (
    "the race starts when every racer seated is ready (two at least: ready() on "
    "each) or when the host calls start()"
)
WHAT_BRINGS: dict[type[Message], str] = {
    Countdown: RACE_STARTS,
    RaceStarted: RACE_STARTS,
    YourView: "a racer's view comes when the race starts; " + RACE_STARTS,
    RaceFinished: "the result comes when every racer has finished (won, lost or resigned)",
    RematchOffer: "a rematch offer comes when a racer makes one (rematch), again at each answer",
    Matched: "a quick race is matched when others wait in the same queue (quick_race) whose "
    "ratings fit yours; the window widens with the wait",
}
"""Why an event may be long in coming, said when it does not come in time."""


class StillWaiting(TimeoutError):
    """What the client waited for did not come in time: the message says what it was."""


def _type_of(kind: type[Message]) -> str:
    """A message's ``type`` on the wire."""
    return str(kind.model_fields["type"].default)


class RequestRefused(Exception):
    """The server answered a request with an error message."""

    def __init__(self, error: ErrorMessage) -> None:
        super().__init__(f"{error.code}: {error.message}")
        self.code = error.code
        self.message = error.message


class RaceClient:
    def __init__(
        self, url: str, ws: ClientConnection, record: bool = False, follow_reconnect_to: bool = True
    ) -> None:
        self.url = url
        """The server's address: where ``reconnect`` goes."""
        self.ws = ws
        self.connected_to = url
        """The address of the current connection (a worker's own, after a ``reconnect_to``)."""
        self.follow_reconnect_to = follow_reconnect_to
        self.received: list[str] | None = [] if record else None
        """With ``record``: every frame received, as sent (for audits and debugging)."""
        self.player_id: str | None = None
        self.token: str | None = None
        self.room_code: str | None = None
        self.last_seq = 0
        self.own_progress = False
        """What ``hello`` said of the progress events of your own moves (again on reconnect)."""
        self.bot = False
        """What ``hello`` said of being a bot (again on reconnect)."""
        self._ids = itertools.count(1)
        self._queued_as: str | None = None
        """The id of the ``quick_race`` waiting: the ``room`` it is joined into answers it too
        (``_matching``), after ``matched`` (``_matched``)."""
        self._matching: asyncio.Future[ServerMessage] | None = None
        self._matched: Matched | None = None
        self._waiting: dict[str, tuple[ClientConnection, asyncio.Future[ServerMessage]]] = {}
        self._events: asyncio.Queue[ServerMessage | None] = asyncio.Queue()
        self._reader = asyncio.create_task(self._read(ws))

    @classmethod
    async def connect(
        cls, url: str, record: bool = False, follow_reconnect_to: bool = True, **options: Any
    ) -> RaceClient:
        return cls(url, await connect(url, **options), record, follow_reconnect_to)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        await self.ws.close()
        await self._reader

    # -- reading --------------------------------------------------------------------------------

    async def _read(self, ws: ClientConnection) -> None:
        """Replies to their requests, the rest to the event stream. A connection being left
        (after a ``reconnect_to``) still answers its requests, but its events are dropped: the
        resume on the new connection says them again, and its end ends no stream."""
        try:
            async for frame in ws:
                if self.received is not None:
                    self.received.append(str(frame))
                message = SERVER_MESSAGE.validate_json(frame)
                request_id = getattr(message, "id", None)
                _, waiting = self._waiting.pop(request_id, (ws, None)) if request_id else (ws, None)
                if waiting is not None and not waiting.done():
                    if isinstance(message, Resynced) and ws is self.ws:
                        self._missed(message)  # before the view that follows the reply
                    waiting.set_result(message)
                    continue
                if ws is self.ws:
                    self._event(message)
        except ConnectionClosed:
            pass
        finally:
            for request_id, (sent_on, waiting) in list(self._waiting.items()):
                if sent_on is ws:
                    del self._waiting[request_id]
                    if not waiting.done():
                        waiting.set_exception(ConnectionError("the connection closed"))
            if ws is self.ws:
                self._events.put_nowait(None)

    def _event(self, message: ServerMessage) -> None:
        if isinstance(message, Matched):  # (the room it is being joined into: its events follow)
            self.room_code, self._matched = message.code, message
        seq = getattr(message, "seq", None)
        if seq is not None:
            self.last_seq = max(self.last_seq, seq)
        self._events.put_nowait(message)

    def _missed(self, resynced: Resynced) -> None:
        """The room events a resume gives back go to the event stream (``last_seq`` follows)."""
        if resynced.full:
            self.last_seq = 0
        for event in resynced.missed:
            self._event(SERVER_MESSAGE.validate_python(event))

    async def events(self) -> AsyncIterator[ServerMessage]:
        """Everything that is not a reply, in order, until the connection closes."""
        while (message := await self._events.get()) is not None:
            yield message

    async def next_event(self, kind: type[M], timeout: float = 10.0) -> M:
        """The next event of that type (earlier events of other types are dropped);
        ``StillWaiting`` if none comes within ``timeout`` seconds."""
        try:
            async with asyncio.timeout(timeout):
                async for message in self.events():
                    if isinstance(message, kind):
                        return message
        except TimeoutError:
            wanted = _type_of(kind)
            where = f" in room {self.room_code}" if self.room_code else ", in no room"
            because = WHAT_BRINGS.get(kind)
            raise StillWaiting(
                f"waited {timeout:g} s for a {wanted!r} event{where}, and none "
                "came" + (f": {because}" if because else "")
            ) from None
        raise ConnectionError(f"the connection closed before a {kind.__name__} came")

    # -- requests -------------------------------------------------------------------------------

    async def request(
        self, message: Message, timeout: float = 10.0, ws: ClientConnection | None = None
    ) -> ServerMessage:
        """Send a request with a fresh id (on ``ws``, else the current connection) and return
        the reply; raise on an error reply.
        A ``rate_limited`` refusal is retried after a pause that doubles each time."""
        pause = RATE_LIMIT_PAUSE_S
        while True:
            request_id = str(next(self._ids))
            future: asyncio.Future[ServerMessage] = asyncio.get_running_loop().create_future()
            sent_on = ws or self.ws
            self._waiting[request_id] = (sent_on, future)
            try:
                await sent_on.send(
                    message.model_copy(update={"id": request_id}).model_dump_json(
                        by_alias=True, exclude_none=True
                    )
                )
            except BaseException:  # not sent: no reply to wait for, no error to leave unread
                self._waiting.pop(request_id, None)
                if future.done():
                    future.exception()
                raise
            try:
                async with asyncio.timeout(timeout):
                    reply = await future
            except TimeoutError:
                self._waiting.pop(request_id, None)
                raise StillWaiting(
                    f"waited {timeout:g} s for the reply to "
                    f"{_type_of(type(message))!r} "
                    f"(id {request_id}), and none came"
                ) from None
            if not isinstance(reply, ErrorMessage):
                return reply
            if reply.code != "rate_limited" or pause > timeout:
                raise RequestRefused(reply)
            await asyncio.sleep(pause)
            pause *= 2

    async def _expect(
        self, message: Message, kind: type[M], ws: ClientConnection | None = None
    ) -> M:
        reply = await self.request(message, ws=ws)
        if not isinstance(reply, kind):
            raise TypeError(f"expected {kind.__name__}, got {type(reply).__name__}")
        return reply

    async def hello(
        self,
        name: str | None = None,
        token: str | None = None,
        own_progress: bool = False,
        bot: bool = False,
    ) -> Welcome:
        """Say who you are; with neither name nor token (and none kept from before), watch
        without a name: ``welcome.anonymous``, and only ``spectate``, boards and race records
        are allowed. The SDK reads your own figures and the room's ``seq`` from each
        ``move_ok``, so unless told otherwise it asks not to get the progress events of your
        own moves (``Hello.own_progress``). A program that plays by itself says ``bot=True``
        (``Hello.bot``): its account is a bot's for ever, marked on the boards and never
        rated."""
        self.own_progress, self.bot = own_progress, bot
        welcome = await self._expect(
            Hello(
                type="hello",
                name=name,
                token=token or self.token,
                own_progress=own_progress,
                bot=bot,
            ),
            Welcome,
        )
        self.player_id = None if welcome.anonymous else welcome.player_id
        self.token = welcome.token or token or self.token
        return welcome

    async def create_room(
        self,
        rule_set: str,
        *,
        seats: int = 2,
        deal: str = "secret",
        number: int | None = None,
        time_limit_s: int | None = None,
        public: bool = False,
    ) -> RoomState:
        """Open a room (``public``: listed at ``GET /api/rooms`` while racers may join)."""
        room = await self._expect(
            CreateRoom(
                type="create_room",
                rule_set=rule_set,
                seats=seats,
                time_limit_s=time_limit_s,
                deal=DealChoice(kind=deal, number=None if number is None else str(number)),
                public=public,
            ),
            RoomState,
        )
        return await self._entered(room)

    async def join(self, code: str) -> RoomState:
        """Take a seat; with ``follow_reconnect_to``, on the room's worker when this returns."""
        return await self._entered(await self._expect(JoinRoom(type="join", code=code), RoomState))

    async def spectate(self, code: str) -> RoomState:
        """Watch; with ``follow_reconnect_to``, on the room's worker when this returns."""
        return await self._entered(
            await self._expect(Spectate(type="spectate", code=code), RoomState), spectating=True
        )

    async def daily(self, rule_set: str) -> RoomState:
        return await self._entered(
            await self._expect(PlayDaily(type="daily", rule_set=rule_set), RoomState)
        )

    async def quick_race(
        self, rule_set: str, rated: bool = True, bot_after_s: int | None = None
    ) -> Queued:
        """Wait in the rule set's quick race queue (docs/protocol.md, "Quick race"); then
        ``matched()`` waits to be matched and joined into the room. Meanwhile ``queue`` events,
        then ``matched``, are in the event stream."""
        queued = await self._expect(
            QuickRace(type="quick_race", rule_set=rule_set, rated=rated, bot_after_s=bot_after_s),
            Queued,
        )
        assert queued.id is not None  # (the request's own)
        self._matching = asyncio.get_running_loop().create_future()
        self._waiting[queued.id] = (self.ws, self._matching)  # the room answers it too
        self._queued_as = queued.id
        return queued

    async def leave_queue(self) -> Ok:
        ok = await self._expect(LeaveQueue(type="leave_queue"), Ok)
        if self._queued_as is not None:
            self._waiting.pop(self._queued_as, None)
        self._matching = self._queued_as = None
        return ok

    async def matched(self, timeout: float | None = None) -> tuple[Matched, RoomState]:
        """After ``quick_race``: wait until the queue matches this player, and return
        ``matched`` and the room the server joined them into (with ``follow_reconnect_to``, on
        the room's worker), as ``join`` would. ``timeout``: give up waiting (``StillWaiting``)
        after that long; the player waits on in the queue."""
        if self._matching is None:
            raise RuntimeError("matched() waits after quick_race()")
        try:
            async with asyncio.timeout(timeout):
                reply = await asyncio.shield(self._matching)
        except TimeoutError:
            raise StillWaiting(
                f"waited {timeout:g} s in the queue, and nobody was matched: "
                + WHAT_BRINGS[Matched]
            ) from None
        if isinstance(reply, ErrorMessage):
            raise RequestRefused(reply)
        if not isinstance(reply, RoomState) or self._matched is None:
            raise TypeError(f"expected the room after matched, got {type(reply).__name__}")
        self._matching = self._queued_as = None
        return self._matched, await self._entered(reply)

    async def _entered(self, room: RoomState, spectating: bool = False) -> RoomState:
        self.room_code = room.code
        self.last_seq = max(self.last_seq, room.seq)
        await self._follow(room.reconnect_to, spectating)
        return room

    async def leave(self) -> Ok:
        ok = await self._expect(LeaveRoom(type="leave"), Ok)
        self.room_code = None
        return ok

    async def ready(self, ready: bool = True) -> Ok:
        return await self._expect(Ready(type="ready", ready=ready), Ok)

    async def start(self) -> Ok:
        return await self._expect(StartRace(type="start"), Ok)

    async def rematch(self, accept: bool = True) -> Ok:
        """Once the room's race is over: offer to race again in this room, or accept the offer
        open (``accept`` false: decline it, which ends it). Each change of the offer is a
        ``rematch_offer`` event (``next_event(RematchOffer)``). Once every racer still in the
        room has accepted, the room has a new race on a new deal (the same number for a chosen
        deal), every racer who accepted seated and not ready: its ``room`` event (phase
        ``lobby``, ``next_lobby``) is in the event stream before the last acceptance returns."""
        return await self._expect(Rematch(type="rematch", accept=accept), Ok)

    async def decline_rematch(self) -> Ok:
        """Decline the room's rematch offer: it ends (anyone may offer again)."""
        return await self.rematch(accept=False)

    async def next_lobby(self, timeout: float = 10.0) -> RoomState:
        """The room's next ``room`` event in phase ``lobby``: after a rematch, the new race."""
        while True:
            room = await self.next_event(RoomState, timeout)
            if room.phase == "lobby":
                return room

    async def move(self, move: str | dict[str, Any]) -> MoveAccepted:
        return self._acknowledged(
            await self._expect(
                MakeMove.model_validate({"type": "move", "move": move}), MoveAccepted
            )
        )

    async def hint(self) -> HintGiven:
        """The next move of a winning line (practice alone only; the solver sees the hidden
        cards)."""
        return await self._expect(AskHint(type="hint"), HintGiven)

    async def follow_verdicts(self, on: bool = True) -> Ok:
        """Practising alone on a chosen deal: the solver's live verdict on your position, at
        once and after each move, as ``LiveVerdictGiven`` events (``on`` False: no more)."""
        return await self._expect(FollowVerdicts(type="live_verdict", on=on), Ok)

    async def resign(self) -> MoveAccepted:
        return self._acknowledged(await self._expect(Resign(type="resign"), MoveAccepted))

    def _acknowledged(self, ack: MoveAccepted) -> MoveAccepted:
        """The room's progress event for your own move is not sent to you: its ``seq`` comes in
        the reply, and counts as seen (a resume does not hand it back)."""
        if ack.seq is not None:
            self.last_seq = max(self.last_seq, ack.seq)
        return ack

    async def resume(self, code: str | None = None) -> Resynced:
        """Back into the room with what was missed: the missed room events go to the event
        stream, in order, before the view that follows (``last_seq`` follows them). With
        ``follow_reconnect_to``, on the room's worker when this returns (the reply returned is
        the first one, whose ``reconnect_to`` says where the room was)."""
        resynced = await self._resume(code)
        await self._follow(resynced.reconnect_to)
        return resynced

    async def _resume(self, code: str | None = None) -> Resynced:
        code = code or self.room_code
        if code is None:
            raise ValueError("resume needs a room code")
        resynced = await self._expect(
            Resume(type="resume", code=code, last_seq=self.last_seq), Resynced
        )
        self.room_code = code
        return resynced

    async def _follow(self, address: str | None, spectating: bool = False) -> None:
        """Move to the room's worker (``reconnect_to``), if following. The move is shielded: a
        caller cancelled meanwhile (a screen that moved on) does not leave it half done."""
        if not self.follow_reconnect_to or address is None or address == self.connected_to:
            return
        moving = asyncio.ensure_future(self._move_to(address, spectating))
        moving.add_done_callback(lambda task: task.cancelled() or task.exception())
        await asyncio.shield(moving)

    async def _move_to(self, address: str, spectating: bool) -> None:
        """Connect and hello there, make it the current connection (the old one's events are
        dropped from then on), resume or spectate there (which says again what was dropped),
        and only then close the old one, so the room never sees the player away. If the
        worker cannot be reached, stay."""
        try:
            ws = await connect(address)
        except CONNECTION_ERRORS:
            return
        reader = asyncio.create_task(self._read(ws))
        try:
            await self._expect(
                Hello(type="hello", token=self.token, own_progress=self.own_progress, bot=self.bot),
                Welcome,
                ws,
            )
        except (*CONNECTION_ERRORS, RequestRefused):
            await ws.close()
            await reader
            return
        old_ws, old_reader = self.ws, self._reader
        self.ws, self._reader, self.connected_to = ws, reader, address
        try:
            if spectating:
                assert self.room_code is not None
                room = await self._expect(Spectate(type="spectate", code=self.room_code), RoomState)
                self.last_seq = max(self.last_seq, room.seq)
            else:
                await self._resume()
        finally:
            await old_ws.close()
            await old_reader

    async def leaderboard(self, rule_set: str, **query: Any) -> Leaderboard:
        return await self._expect(
            GetLeaderboard.model_validate({"type": "leaderboard", "rule_set": rule_set, **query}),
            Leaderboard,
        )

    async def race_record(self, race_id: str) -> dict[str, Any]:
        record = await self._expect(GetRace(type="race_record", race_id=race_id), RaceRecord)
        return record.record

    async def reconnect(self) -> Resynced:
        """A new connection as the same player, back in the same room with what was missed."""
        if self.token is None or self.room_code is None:
            raise ValueError("reconnect needs a token and a room: say hello and join first")
        await self.close()
        self.ws = await connect(self.url)
        self.connected_to = self.url
        self._events = asyncio.Queue()
        self._reader = asyncio.create_task(self._read(self.ws))
        await self.hello(token=self.token, bot=self.bot)
        return await self.resume()
