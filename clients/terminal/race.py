"""The terminal racer's race and results screens.

The race screen draws your board in the rule set's layout (narrower on a narrow terminal), the
notes, the legal moves (Enter or a click plays the one highlighted) and every racer's progress,
live. A move is typed in its text form (Tab completes it from the legal moves) or as its number
in the list; a refused move's reason is shown in red under the board and the text stays in the
field to be corrected.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from typing import ClassVar

from pydantic import ValidationError
from rich.text import Text
from textual import events, on, work
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, ScrollableContainer, Vertical
from textual.message import Message
from textual.screen import ModalScreen
from textual.suggester import SuggestFromList
from textual.widgets import Button, DataTable, Footer, Input, OptionList

from clients.sdk import CONNECTION_ERRORS, RequestRefused
from clients.terminal.board import board_text, progress_bar, widest
from clients.terminal.screens import (
    LeaderboardScreen,
    Plain,
    RacerScreen,
    clock,
    duration,
    racer_name,
    rating_text,
    room_summary,
)
from clients.terminal.session import RaceSession
from clients.terminal.state import RaceState
from engine.registry import find_rule_set
from wire.commitment import commitment
from wire.protocol import SeatInfo

STATUS_STYLES = {
    "won": "bold green",
    "lost": "yellow",
    "resigned": "red",
    "timed_out": "red",
    "abandoned": "red",
    "racing": "",
    "waiting": "dim",
}


def status_text(status: str) -> Text:
    return Text(status.replace("_", " "), style=STATUS_STYLES.get(status, ""))


def fill_racers(table: DataTable[object], seats: Iterable[SeatInfo], me: str, total: int) -> None:
    """Every racer: name, progress bar, cards home of total, moves, status (and if away)."""
    table.clear()
    for seat in seats:
        seat_total = seat.total or total
        status = status_text(seat.status)
        if not seat.connected:
            status.append(", away", style="red")
        table.add_row(
            racer_name(seat.name, seat.player_id == me, seat.bot),
            progress_bar(seat.on_foundations, seat_total),
            Text(f"{seat.on_foundations}/{seat_total}"),
            seat.moves,
            status,
        )


class ConfirmScreen(ModalScreen[bool]):
    """A yes/no question over the current screen."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("y", "answer(True)", "Yes"),
        Binding("n,escape", "answer(False)", "No"),
    ]
    DEFAULT_CSS = """
    ConfirmScreen { align: center middle; }
    ConfirmScreen > Vertical { width: 50; height: auto; border: thick $error; padding: 1 2; }
    ConfirmScreen Horizontal { height: auto; padding-top: 1; }
    ConfirmScreen Button { margin-right: 2; }
    """

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Plain(self.question)
            with Horizontal():
                yield Button("Yes (y)", id="yes", variant="error")
                yield Button("No (n)", id="no")

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class MoveInput(Input):
    """The move field. Tab takes the suggested move, as the right arrow does at the end of the
    text (Textual binds Tab to moving the focus on); with nothing suggested, Tab moves on."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("tab", "complete", "Complete the move")]

    def action_complete(self) -> None:
        if not self._suggestion:
            raise SkipAction
        self.value = self._suggestion
        self.cursor_position = len(self.value)


class BoardBox(ScrollableContainer):
    """The box your board is drawn in. It tells the screen when its size changes (the terminal's
    did, or the lists below took or gave back room), so that the board is drawn again to fit."""

    class Resized(Message):
        """The box has a new size."""

    def on_resize(self) -> None:
        self.post_message(self.Resized())


class RaceScreen(RacerScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+r", "resign", "Resign"),
        Binding("ctrl+o", "focus_moves", "Pick from the list"),
        Binding("escape", "focus_input", "Type a move", show=False),
    ]
    DEFAULT_CSS = """
    RaceScreen #top { height: 1; background: $primary-background; padding: 0 1; }
    /* The board's box is as tall as its drawing (draw_board sets its max-height); the lists
       below take the rest of the room, and at least a quarter of it. */
    RaceScreen #board-box { height: 3fr; border: round $primary; padding: 0 0 0 1; }
    RaceScreen #board { width: auto; }
    RaceScreen #notes { color: $text-muted; padding: 0 1; }
    RaceScreen #lower { height: 1fr; }
    RaceScreen #moves { width: 1fr; border: round $secondary; }
    RaceScreen #racers { width: 1fr; border: round $secondary; }
    RaceScreen #last { padding: 0 1; }
    RaceScreen #status { padding: 0 1; }
    RaceScreen #move { padding: 0 1; }
    """

    def __init__(self, session: RaceSession) -> None:
        super().__init__(session)
        board = session.state.board
        assert board is not None, "the race screen is shown once your board has come"
        self.game = find_rule_set(board.rule_set)
        self.shown_moves: list[str] = []
        """The legal moves as listed: a number typed or a line picked is one of these."""

    def compose(self) -> ComposeResult:
        yield Plain(id="top")
        with BoardBox(id="board-box"):
            yield Plain(id="board")
        yield Plain(id="notes")
        with Horizontal(id="lower"):
            yield OptionList(id="moves", markup=False)
            yield DataTable(id="racers", cursor_type="none")
        yield Plain(id="last")
        yield Plain(id="status")
        yield MoveInput(
            id="move",
            compact=True,
            placeholder="type a move (like 8H heap:3 -> foundation:2) or its number, then Enter",
        )
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#board-box").border_title = f"Your board · {self.game.title}"
        self.query_one("#moves").border_title = "Legal moves (Enter or click plays)"
        self.query_one("#racers").border_title = "Racers"
        self.query_one("#racers", DataTable).add_columns(
            "Racer", "Progress", "Home", "Moves", "Status"
        )
        super().on_mount()
        self.query_one("#move", Input).focus()
        self.set_interval(1, self.show_clock)

    def show(self) -> None:
        state = self.session.state
        board = state.board
        if board is None:
            return
        self.draw_board()
        self.query_one("#notes", Plain).update("\n".join(board.notes))
        if board.legal_moves != self.shown_moves:
            self.shown_moves = list(board.legal_moves)
            moves = self.query_one("#moves", OptionList)
            moves.set_options(
                f"{number:>3}  {move}" for number, move in enumerate(board.legal_moves, 1)
            )
            moves.highlighted = 0
            self.query_one("#move", Input).suggester = SuggestFromList(
                board.legal_moves, case_sensitive=False
            )
        fill_racers(
            self.query_one("#racers", DataTable), state.seats.values(), state.player_id, board.total
        )
        if board.last_move:
            self.query_one("#last", Plain).update(
                Text.assemble(
                    ("You played ", "dim"),
                    (board.last_move, "bold"),
                    (": " + "; ".join(board.last_events) if board.last_events else "", ""),
                )
            )
        if state.finished_as is not None:
            reason = f" ({board.reason})" if board.reason else ""
            self.say(
                f"You have finished: {state.finished_as.replace('_', ' ')}{reason}. "
                "Waiting for the others…"
            )
            self.query_one("#move", Input).disabled = True
            self.query_one("#move", Input).value = ""
            self.query_one("#moves", OptionList).disabled = True
        self.show_clock()

    def draw_board(self) -> None:
        """Your board, drawn to fit the width of its box, and the box made as tall as the
        drawing (on a terminal too short for it and the lists below, the box scrolls)."""
        board = self.session.state.board
        box = self.query_one("#board-box", BoardBox)
        width = box.scrollable_content_region.width
        if board is None or width <= 0:
            return  # the box is not laid out yet: its first size brings it here again
        drawing = board_text(board.piles, self.game.layout, board.changed, width)
        self.query_one("#board", Plain).update(drawing)
        lines = drawing.split()
        scrollbar = box.styles.scrollbar_size_horizontal if widest(lines) > width else 0
        box.styles.max_height = len(lines) + box.styles.gutter.height + scrollbar

    @on(BoardBox.Resized)
    def box_resized(self) -> None:
        self.draw_board()

    def show_clock(self) -> None:
        state = self.session.state
        room, started = state.room, state.started
        if room is None:
            return
        start_ms = room.started_at_ms or (started.started_at_ms if started else None)
        parts = [room_summary(room)]
        if start_ms is not None:
            elapsed = max(0, round(time.time() * 1000) - start_ms)
            parts.append(f"⏱ {clock(elapsed)}")
            if room.time_limit_s:
                parts.append(f"{clock(max(0, room.time_limit_s * 1000 - elapsed))} left")
        self.query_one("#top", Plain).update(" · ".join(parts))

    @on(Input.Submitted, "#move")
    def typed(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        legal = self.shown_moves
        if text.isascii() and text.isdigit():  # int() refuses ², which isdigit takes
            if len(text) > 4 or not 1 <= int(text) <= len(legal):
                self.say(f"there is no move {text}: pick 1 to {len(legal)}", error=True)
                return
            text = legal[int(text) - 1]
        if text:
            self.play(text, typed=event.value)

    @on(OptionList.OptionSelected, "#moves")
    def picked(self, event: OptionList.OptionSelected) -> None:
        self.play(self.shown_moves[event.option_index])

    @work(group="moves")
    async def play(self, move: str, typed: str | None = None) -> None:
        """Send a move; once accepted, empty the field it was ``typed`` in (if still there)."""
        field = self.query_one("#move", Input)
        try:
            ack = await self.session.move(move)
        except RequestRefused as refused:
            self.say(f"✗ Refused: {move}: {refused.message}", error=True)
            return
        except ValidationError:
            self.say(f"✗ Refused: {move}: not a move (too long to be one)", error=True)
            return
        except CONNECTION_ERRORS as error:
            self.say(
                f"✗ Not sent, the connection is down ({error}): try again in a moment", error=True
            )
            return
        if typed is not None and field.value == typed:
            field.value = ""
        if ack.status == "in_progress":
            self.say("")

    def action_resign(self) -> None:
        if self.session.state.finished_as is not None:
            return

        def answered(resign: bool | None) -> None:
            if resign:
                self.send(self.session.resign)

        self.app.push_screen(ConfirmScreen("Resign this race? Your game ends now."), answered)

    def on_key(self, event: events.Key) -> None:
        """Typing while the list has the focus types into the move field."""
        field = self.query_one("#move", Input)
        if self.focused is self.query_one("#moves") and event.is_printable and event.character:
            field.focus()
            field.insert_text_at_cursor(event.character)
            event.stop()

    def action_focus_moves(self) -> None:
        self.query_one("#moves", OptionList).focus()

    def action_focus_input(self) -> None:
        self.query_one("#move", Input).focus()


def rematch_text(state: RaceState) -> Text:
    """What the rematch offer stands at, and what you may do about it: the finish screen's
    line."""
    room, offer = state.room, state.rematch
    if room is None or room.deal_kind == "daily" or state.me is None:
        return Text()
    if offer is None:
        declined = (
            f"{state.name_of(state.rematch_declined_by)} declined the rematch. "
            if state.rematch_declined_by is not None
            else ""
        )
        return Text(f"{declined}Press r to offer a rematch.")
    asked = len(offer.accepted) + len(offer.waiting)
    waiting = ", ".join(state.name_of(player) for player in offer.waiting)
    count = f"{len(offer.accepted)} of {asked} accepted"
    if state.player_id in offer.accepted:
        return Text(f"Rematch: {count}, waiting for {waiting}.")
    maker = state.name_of(offer.accepted[0])
    return Text.assemble(
        (f"{maker} offers a rematch ({count}): ", "bold"),
        "press r to accept, d to decline.",
    )


class ResultsScreen(RacerScreen):
    """The ranking, the revealed seed checked against the commitment, the rematch offer, the way
    to the boards."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "rematch", "Rematch"),
        Binding("d", "decline", "Decline"),
        Binding("l", "leaderboards", "Leaderboards"),
        Binding("n", "new_race", "New race"),
        Binding("q", "app.quit", "Quit"),
    ]
    DEFAULT_CSS = """
    ResultsScreen { padding: 1 2; }
    ResultsScreen #result-title { text-style: bold; padding-bottom: 1; }
    ResultsScreen DataTable { height: auto; max-height: 12; }
    ResultsScreen #seed { padding-top: 1; }
    """

    def compose(self) -> ComposeResult:
        yield Plain(id="result-title")
        yield DataTable(id="ranking", cursor_type="none")
        yield Plain(id="seed")
        yield Plain(id="rematch")
        yield Plain(id="status")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#ranking", DataTable).add_columns(
            "Rank", "Racer", "Result", "Time", "Home", "Reached at", "Moves", "Rating"
        )
        super().on_mount()

    def show(self) -> None:
        state = self.session.state
        room, finished = state.room, state.finished
        if room is None:
            return
        self.query_one("#result-title", Plain).update(
            f"Race over · {find_rule_set(room.rule_set).title} · room {room.code}"
        )
        self.query_one("#rematch", Plain).update(rematch_text(state))
        table = self.query_one("#ranking", DataTable)
        table.clear()
        if finished is None:
            self.query_one("#seed", Plain).update(
                "The ranking was announced while you were away: it is on the leaderboards."
            )
            return
        for entry in finished.ranking:
            table.add_row(
                entry.rank,
                racer_name(entry.name, entry.player_id == state.player_id, entry.bot),
                status_text(entry.status),
                duration(entry.time_ms),
                entry.on_foundations,
                duration(entry.reached_at_ms),
                entry.moves,
                rating_text(entry.rating),
            )
        self.query_one("#seed", Plain).update(self.fairness(finished.seed))
        if finished.seed is not None:
            self.say(
                f"Check it yourself: curl {self.session.api}/api/races/{finished.race_id}"
                " > race.json && patience-race verify race.json"
            )

    def fairness(self, seed: str | None) -> Text:
        """The revealed seed, checked here against the commitment published at the start."""
        state = self.session.state
        promised = (
            state.started.commitment
            if state.started
            else (state.room.commitment if state.room else None)
        )
        if seed is None:
            return Text("Today's daily deal stays secret until the day is over.")
        if promised is None:
            return Text(f"The deal was {seed}.")
        if commitment(int(seed)) == promised:
            return Text.assemble(
                f"The deal was {seed}: ",
                ("✔ it matches the commitment published at the start", "green"),
            )
        return Text(
            f"The deal was {seed}: ✘ it does NOT match the commitment {promised}", style="bold red"
        )

    def action_leaderboards(self) -> None:
        room = self.session.state.room
        if room is not None:
            self.app.push_screen(LeaderboardScreen(self.session, room.rule_set))

    def action_rematch(self) -> None:
        self.send(self.session.rematch)

    def action_decline(self) -> None:
        if self.session.state.rematch is not None:
            self.send(lambda: self.session.rematch(accept=False))

    def action_new_race(self) -> None:
        self.send(self.session.leave)
