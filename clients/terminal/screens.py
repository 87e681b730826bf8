"""The terminal racer's screens around the race: the start form, the room, the leaderboards.

Every screen draws from the session's state in ``show`` (the app calls it after each change) and
sends requests through the session in workers, so the screen stays live while a reply is on its
way; a refusal is shown in the screen's status line (``say``).
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import ClassVar

from pydantic import ValidationError
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.visual import VisualType
from textual.widgets import (
    Button,
    DataTable,
    Footer,
    Input,
    Label,
    Select,
    Static,
    TabbedContent,
    TabPane,
)

from clients.sdk import CONNECTION_ERRORS, RequestRefused
from clients.terminal.session import DEFAULT_SERVER, RaceSession, default_name
from engine.registry import all_rule_sets, find_rule_set
from wire.protocol import LeaderboardEntry, RoomState
from wire.ratings import RatingBoard, RatingChange

DEAL_CHOICES = [
    ("a secret deal", "secret"),
    ("a chosen deal number", "number"),
    ("today's daily deal (alone)", "daily"),
]
BOARDS = [("fastest", "Fastest wins"), ("most_wins", "Most wins"), ("daily", "Today's daily")]


def rule_set_choices() -> list[tuple[str, str]]:
    return [(f"{game.title} ({game.name})", game.name) for game in all_rule_sets()]


def duration(ms: int | None) -> str:
    """``1:05.3``: minutes, seconds and tenths."""
    if ms is None:
        return "-"
    minutes, seconds = divmod(ms / 1000, 60)
    return f"{int(minutes)}:{seconds:04.1f}"


def clock(ms: int) -> str:
    """``1:05``: minutes and whole seconds."""
    minutes, seconds = divmod(ms // 1000, 60)
    return f"{minutes}:{seconds:02d}"


def racer_name(name: str, mine: bool, bot: bool = False) -> Text:
    """A player's name as the screens list it: "(you)" for yours, "[bot]" for a bot account's
    (``Hello.bot``)."""
    text = Text(f"{name} (you)", style="bold") if mine else Text(name)
    if bot:
        text.append(" [bot]", style="dim")
    return text


def rating_text(change: RatingChange | None) -> Text:
    """A racer's rating after a race and its change (``1540? (+40)``: "?" while provisional),
    or that the race was not rated (a chosen or daily deal, or a racer alone)."""
    if change is None:
        return Text("not rated", style="dim")
    gained = change.gained
    return Text(str(change), style="green" if gained > 0 else "red" if gained < 0 else "")


def plain(value: object) -> object:
    """A table cell as written: Textual reads a ``str`` cell as markup (``[/]`` in a name ends the
    app, ``[@click=app.quit]`` would be a link), so texts become Rich ``Text``."""
    return Text(value) if isinstance(value, str) else value


class Plain(Static):
    """A ``Static`` that shows its text as written, never as markup: what it shows may come from
    other players or the server."""

    def __init__(self, content: VisualType = "", *, id: str | None = None) -> None:
        super().__init__(content, markup=False, id=id)


def join_hint(code: str, server: str) -> str:
    """The command a friend types to join: it names the server unless it is the default."""
    command = f"patience-race race {code}"
    return command if server == DEFAULT_SERVER else f"{command} --server {server}"


def room_summary(room: RoomState) -> str:
    deal = {
        "secret": "a secret deal",
        "number": "a chosen deal",
        "daily": "today's daily deal",
    }.get(room.deal_kind, room.deal_kind)
    seats = "alone" if room.seats_max == 1 else f"{room.seats_max} seats"
    limit = f"{room.time_limit_s} s time limit" if room.time_limit_s else "no time limit"
    return f"Room {room.code} · {find_rule_set(room.rule_set).title} · {deal} · {seats} · {limit}"


class RacerScreen(Screen[None]):
    """A screen that draws from the session's state and sends requests through it."""

    def __init__(self, session: RaceSession) -> None:
        super().__init__()
        self.session = session
        self.status = Text()

    def on_mount(self) -> None:
        self.query_one("#status", Plain).update(self.status)
        self.show()

    def show(self) -> None:
        """Draw the session's state (called after every change, once the screen is mounted)."""

    def say(self, text: str, error: bool = False) -> None:
        """Put a line in the status line: what happened, or in red what went wrong."""
        self.status = Text(text, style="bold red" if error else "")
        if self.is_mounted:
            self.query_one("#status", Plain).update(self.status)

    @work(group="requests")
    async def send(self, request: Callable[[], Awaitable[object]]) -> None:
        """Send a request (its effect comes back as room events); say why it was refused."""
        try:
            await request()
        except RequestRefused as refused:
            self.say(refused.message, error=True)
        except CONNECTION_ERRORS as error:
            self.say(
                f"not sent, the connection is down ({error}): try again in a moment", error=True
            )


class StartScreen(RacerScreen):
    """Create a room (rule set, deal, seats, time limit), play today's daily deal, or join."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+l", "leaderboards", "Leaderboards"),
    ]
    DEFAULT_CSS = """
    StartScreen { align-horizontal: center; }
    StartScreen > Vertical { width: 100%; max-width: 90; height: auto; border: round $primary;
                             padding: 0 1; }
    StartScreen Horizontal { height: auto; }
    StartScreen Label { width: 16; padding: 1 0; }
    StartScreen #rule-set, StartScreen #deal { width: 1fr; }
    StartScreen Input { width: 1fr; }
    StartScreen #seats, StartScreen #time-limit { width: 12; }
    StartScreen #title { padding: 1 0; width: 100%; max-width: 90; }
    StartScreen #status { width: 100%; max-width: 90; padding: 1 0; }
    """

    def __init__(
        self, session: RaceSession, code: str | None = None, quick: str | None = None
    ) -> None:
        super().__init__(session)
        self.code = code
        self.quick = quick

    def compose(self) -> ComposeResult:
        yield Plain(id="title")
        if self.session.needs_name:
            with Vertical(id="identity") as box, Horizontal():
                box.border_title = "Who you are"
                yield Label("Your name")
                yield Input(default_name(), id="name", max_length=32)
        with Vertical(id="create") as box:
            box.border_title = "Create a room"
            with Horizontal():
                yield Label("Rule set")
                yield Select(rule_set_choices(), id="rule-set", allow_blank=False)
            with Horizontal():
                yield Label("Deal")
                yield Select(DEAL_CHOICES, id="deal", allow_blank=False)
                yield Input(
                    id="number", placeholder="deal number", restrict=r"[0-9]*", disabled=True
                )
            with Horizontal():
                yield Label("Seats")
                yield Input("2", id="seats", type="integer")
                yield Label("  Time limit (s)")
                yield Input(id="time-limit", placeholder="none", type="integer")
            yield Button("Create the room", id="create-room", variant="primary")
        with Vertical(id="join") as box, Horizontal():
            box.border_title = "Join a room"
            yield Label("Room code")
            yield Input(
                self.code or "",
                id="code",
                placeholder="the code a friend sent",
                restrict=r"[A-Za-z0-9]*",
            )
            yield Button("Join", id="join-room")
        yield Plain(id="status")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        if self.code:
            self.enter(lambda code=self.code: self.session.join(code))
        elif self.quick:
            self.enter(lambda rule_set=self.quick: self.session.quick_race(rule_set))
        elif not self.session.needs_name:
            self.enter(None)

    def show(self) -> None:
        welcome = self.session.welcome
        who = f"playing as {welcome.name}" if welcome else "not connected yet"
        self.query_one("#title", Plain).update(
            Text.assemble(("patience-race", "bold"), f"  ·  {self.session.server}  ·  {who}")
        )
        if welcome is not None:
            self.query("#identity").remove()

    @on(Select.Changed, "#deal")
    def deal_changed(self, event: Select.Changed) -> None:
        self.query_one("#number", Input).disabled = event.value != "number"
        for field in ("#seats", "#time-limit"):
            self.query_one(field, Input).disabled = event.value == "daily"

    @on(Button.Pressed, "#create-room")
    @on(Input.Submitted, "#number, #seats, #time-limit")
    def create_room(self) -> None:
        rule_set = str(self.query_one("#rule-set", Select).value)
        deal = str(self.query_one("#deal", Select).value)
        if deal == "daily":
            self.enter(lambda: self.session.daily(rule_set))
            return
        number = self.query_one("#number", Input).value
        seats = self.query_one("#seats", Input).value
        limit = self.query_one("#time-limit", Input).value
        if deal == "number" and not number:
            self.say("a chosen deal needs its number", error=True)
        elif not seats.isdigit() or not 2 <= int(seats) <= 8:
            self.say("a room has 2 to 8 seats", error=True)
        elif limit and not (limit.isdigit() and 30 <= int(limit) <= 86400):
            self.say("a time limit is 30 to 86400 seconds, or none", error=True)
        else:
            self.enter(
                lambda: self.session.create_room(
                    rule_set,
                    deal=deal,
                    number=int(number) if deal == "number" else None,
                    seats=int(seats),
                    time_limit_s=int(limit) if limit else None,
                )
            )

    @on(Button.Pressed, "#join-room")
    @on(Input.Submitted, "#code")
    def join_room(self) -> None:
        code = self.query_one("#code", Input).value.strip()
        if len(code) < 4:
            self.say("a room code has at least 4 letters and digits", error=True)
            return
        self.enter(lambda: self.session.join(code))

    @work(group="requests", exclusive=True)
    async def enter(self, request: Callable[[], Awaitable[object]] | None) -> None:
        """Connect (and say hello: as the name typed, for a new player) if not yet, then send
        the request that enters a room."""
        typed = self.query_one("#name", Input).value.strip() if self.session.needs_name else ""
        self.say(f"connecting to {self.session.server}…")
        try:
            await self.session.connect(typed or None)
            self.show()
            self.say("")
            if request is not None:
                await request()
        except RequestRefused as refused:
            self.say(refused.message, error=True)
        except ValidationError as invalid:  # the name, checked as the server would
            self.say(f"choose another name: {invalid.errors()[0]['msg']}", error=True)
        except CONNECTION_ERRORS as error:
            self.say(
                f"cannot reach {self.session.server} ({error}): is the server running? Try again.",
                error=True,
            )

    def action_leaderboards(self) -> None:
        self.app.push_screen(
            LeaderboardScreen(self.session, str(self.query_one("#rule-set", Select).value))
        )


class RoomScreen(RacerScreen):
    """Who sits in the room and who is ready; the host may start early; then the countdown."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "ready", "Ready / not ready"),
        Binding("s", "start", "Start now"),
        Binding("escape", "leave", "Leave the room"),
    ]
    DEFAULT_CSS = """
    RoomScreen { padding: 1 2; }
    RoomScreen #room-title { text-style: bold; }
    RoomScreen #share { color: $text-muted; padding-bottom: 1; }
    RoomScreen DataTable { height: auto; max-height: 12; width: 80; }
    RoomScreen #countdown { padding: 1 0; text-style: bold; }
    RoomScreen Horizontal { height: auto; }
    RoomScreen Button { margin-right: 2; }
    """

    def compose(self) -> ComposeResult:
        yield Plain(id="room-title")
        yield Plain(id="share")
        yield DataTable(id="seats", cursor_type="none")
        yield Plain(id="countdown")
        with Horizontal():
            yield Button("Ready", id="ready", variant="success")
            yield Button("Start now", id="start")
            yield Button("Leave", id="leave", variant="error")
        yield Plain(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#seats", DataTable).add_columns("Player", "Ready", "")
        super().on_mount()
        self.set_interval(0.1, self.show_countdown)

    def show(self) -> None:
        state = self.session.state
        room = state.room
        if room is None:
            return
        self.query_one("#room-title", Plain).update(room_summary(room))
        self.query_one("#share", Plain).update(
            "A quick race: the players matched are on their way; it starts by itself."
            if room.quick
            else f"Friends join with the code {room.code}: "
            f"{join_hint(room.code, self.session.server)}"
        )
        table = self.query_one("#seats", DataTable)
        table.clear()
        for seat in state.seats.values():
            notes = [
                note
                for note, applies in (
                    ("host", seat.player_id == room.host),
                    ("you", seat.player_id == state.player_id),
                    ("away", not seat.connected),
                )
                if applies
            ]
            table.add_row(
                racer_name(seat.name, False, seat.bot),
                Text("✔ ready", "bold green") if seat.ready else Text("· not yet", "dim"),
                Text(", ".join(notes)),
            )
        for _ in range(room.seats_max - len(state.seats)):
            table.add_row(Text("(empty seat)", "dim"), "", "")
        me = state.me
        ready = self.query_one("#ready", Button)
        ready.label = "Not ready" if me and me.ready else "Ready"
        waiting = state.phase == "lobby"
        ready.disabled = not waiting
        ready.display = room.quick is None
        start = self.query_one("#start", Button)
        start.display = state.is_host
        start.disabled = not waiting
        self.refresh_bindings()
        self.show_countdown()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Starting early is the host's alone: nobody else is shown the key for it. A quick
        race's room has neither key: it starts by itself."""
        if action == "ready":
            room = self.session.state.room
            return room is None or room.quick is None
        return self.session.state.is_host if action == "start" else True

    def show_countdown(self) -> None:
        state = self.session.state
        quick = state.room is not None and state.room.quick is not None
        if state.phase != "countdown" or state.starts_at_ms is None:
            text = (
                "Waiting for the players matched: it starts by itself."
                if quick
                else "Waiting until everyone is ready (2 at least), or the host starts."
            )
        else:
            left = state.starts_at_ms / 1000 - time.time()
            text = f"Starting in {left:.1f} s…" if left > 0 else "Dealing…"
        self.query_one("#countdown", Plain).update(text)

    @on(Button.Pressed, "#ready")
    def action_ready(self) -> None:
        me = self.session.state.me
        if self.session.state.phase == "lobby":
            self.send(lambda: self.session.ready(not (me and me.ready)))

    @on(Button.Pressed, "#start")
    def action_start(self) -> None:
        if self.session.state.is_host and self.session.state.phase == "lobby":
            self.send(self.session.start)

    @on(Button.Pressed, "#leave")
    def action_leave(self) -> None:
        self.send(self.session.leave)


class LeaderboardScreen(RacerScreen):
    """A rule set's boards: fastest wins, most wins, today's daily deal, and its rated board
    (players by rating, around you)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Back")]
    DEFAULT_CSS = """
    LeaderboardScreen { padding: 1 2; }
    LeaderboardScreen #board-rule-set { width: 60; }
    LeaderboardScreen DataTable { height: auto; }
    """

    def __init__(self, session: RaceSession, rule_set: str) -> None:
        super().__init__(session)
        self.rule_set = rule_set

    def compose(self) -> ComposeResult:
        yield Plain(Text("Leaderboards", style="bold"))
        yield Select(
            rule_set_choices(), id="board-rule-set", value=self.rule_set, allow_blank=False
        )
        with TabbedContent():
            for board, title in BOARDS:
                with TabPane(title, id=f"tab-{board}"):
                    yield DataTable(id=board, cursor_type="row")
            with TabPane("Ratings", id="tab-ratings"):
                yield DataTable(id="ratings", cursor_type="row")
        yield Plain(id="status")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.load()

    @on(Select.Changed, "#board-rule-set")
    def rule_set_changed(self, event: Select.Changed) -> None:
        if event.value != self.rule_set:
            self.rule_set = str(event.value)
            self.load()

    @work(group="boards", exclusive=True)
    async def load(self) -> None:
        self.say(f"loading the {self.rule_set} boards…")
        try:
            await self.session.connect()
            for board, _ in BOARDS:
                answer = await self.session.leaderboard(self.rule_set, board)
                self.fill(self.query_one(f"#{board}", DataTable), board, answer.entries)
            self.fill_ratings(await self.session.ratings(self.rule_set))
        except RequestRefused as refused:
            self.say(refused.message, error=True)
        except CONNECTION_ERRORS as error:
            self.say(f"cannot reach {self.session.server} ({error})", error=True)
        else:
            self.say("")

    def fill(self, table: DataTable[object], board: str, entries: list[LeaderboardEntry]) -> None:
        me = self.session.state.player_id

        def who(entry: LeaderboardEntry) -> Text:
            return racer_name(entry.name, entry.player_id == me, entry.bot)

        table.clear(columns=True)
        rows: list[tuple[object, ...]]
        if board == "most_wins":
            table.add_columns("Rank", "Player", "Wins", "Last win")
            rows = [(entry.rank, who(entry), entry.wins, entry.at[:10]) for entry in entries]
        elif board == "daily":
            table.add_columns("Rank", "Player", "Result", "Time", "Home")
            rows = [
                (
                    entry.rank,
                    who(entry),
                    entry.status,
                    duration(entry.time_ms),
                    entry.on_foundations,
                )
                for entry in entries
            ]
        else:
            table.add_columns("Rank", "Player", "Time", "Deal", "When")
            rows = [
                (
                    entry.rank,
                    who(entry),
                    duration(entry.time_ms),
                    entry.deal or "secret",
                    entry.at[:10],
                )
                for entry in entries
            ]
        table.add_rows([tuple(map(plain, row)) for row in rows])
        if not rows:
            table.add_row("", Text("nobody yet", style="dim"))

    def fill_ratings(self, board: RatingBoard) -> None:
        """The rated board: each player's rating as shown (``wire.ratings``), its two terms, and
        how many rated races made it (in the order of the conservative ordinal, mu − 3·sigma)."""
        table = self.query_one("#ratings", DataTable)
        me = self.session.state.player_id
        table.clear(columns=True)
        table.add_columns("Rank", "Player", "Rating", "μ", "σ", "Races")
        table.add_rows(
            [
                (
                    line.rank,
                    racer_name(line.name, line.player_id == me, line.bot),
                    str(line),
                    f"{line.mu:.1f}",
                    f"{line.sigma:.2f}",
                    line.races,
                )
                for line in board.lines
            ]
        )
        if not board.lines:
            table.add_row(
                "",
                Text(
                    f"nobody rated yet: the board shows players with "
                    f"{board.min_races} rated races or more",
                    style="dim",
                ),
            )
