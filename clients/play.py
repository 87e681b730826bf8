"""One game alone at the terminal (``patience-race play``): ``Session`` reads a line, acts on
it and says what happened, with the live verdict said as it comes (``clients.live_verdict``).
"""

from __future__ import annotations

import shutil
import sys
import threading
from collections.abc import Callable
from typing import TextIO

from clients.board import draw, draw_piles_whole
from clients.live_verdict import LiveVerdict
from engine.errors import EngineError, IllegalMoveError
from engine.game import Game
from engine.hints import LIVE_WORDS, hint
from engine.moves import Move
from engine.replay import MoveLog
from engine.solver import Budget, Result

try:
    import readline  # input() edits the line with it; ``Session.notice`` draws it again
except ImportError:  # (not on every platform)
    readline = None  # type: ignore[assignment]

PLAY_HELP = """\
Type a move's number, or the move itself (like '8H heap:3 -> foundation:2', 'redeal').
  board     draw the board again        look   every pile in full
  moves     list the legal moves        save FILE   save the move log now
  hint      the next move of a winning line (the solver sees the hidden cards)
  verdict   is a win still possible? (said by itself after each move, unless --no-verdict)
  resign    give up this game           help   this text
End of input (Ctrl-D) leaves the game unfinished."""


def terminal_width(stream: TextIO) -> int | None:
    """The terminal's width, to fold a board to, if ``stream`` is one (a file or pipe gets the
    board as the layout declares it)."""
    return shutil.get_terminal_size().columns if stream.isatty() else None


class Session:
    """One game at the terminal: read a line, act on it, say what happened. With
    ``live_verdict``, the solver's word on the position after each move is said once searched
    (``clients.live_verdict``), while the player goes on; with ``redraw`` (a terminal), a word
    said while the player types is written above the line being typed, which is drawn again."""

    def __init__(
        self,
        game: Game,
        read: Callable[[str], str],
        write: Callable[[str], None],
        colour: bool,
        live_verdict: bool = False,
        redraw: bool = False,
    ) -> None:
        self.game, self.read, self.write, self.colour = game, read, write, colour
        self.commands: dict[str, Callable[[str], None]] = {
            "help": lambda _: self.write(PLAY_HELP),
            "board": lambda _: self.show_board(),
            "look": lambda _: self.write(draw_piles_whole(self.game.view(), self.colour)),
            "moves": lambda _: self.show_moves(),
            "save": self.save,
            "hint": lambda _: self.write(str(hint(self.game, self.hint_budget))),
            "verdict": lambda _: self.show_verdict(),
        }
        self.hint_budget: Budget | None = None
        """A hint is searched here, in this process (the game is local), within this budget
        (None: the rule set's, ``engine.hints.hint_budget``)."""
        self.redraw = redraw
        self._output = threading.Lock()
        self._prompt: str | None = None
        """The prompt of the line being read, while one is."""
        self.live = LiveVerdict(self.say_verdict) if live_verdict else None

    def say_verdict(self, moves: int, result: Result) -> None:
        """The live verdict on the position after ``moves`` moves (from its search's thread)."""
        self.notice(verdict_line(moves, result))

    def show_verdict(self) -> None:
        if self.live is None:
            self.write("the live verdict is off ('hint' searches now)")
        elif self.game.outcome().is_over:
            self.write(f"the game is over: {self.game.outcome()}")
        elif self.live.latest is not None and self.live.latest[0] == len(self.game.history):
            self.write(verdict_line(*self.live.latest))
        else:
            self.write("solver: searching...")

    def notice(self, text: str) -> None:
        """Write a line that comes by itself, from another thread: on a terminal, above the
        line being typed, which is drawn again as it was."""
        with self._output:
            if self.redraw and self._prompt is not None:
                typed = readline.get_line_buffer() if readline is not None else ""
                sys.stdout.write(f"\r\x1b[K{text}\n{self._prompt}{typed}")
                sys.stdout.flush()
            else:
                self.write(text)

    def prompt(self, text: str) -> str:
        """Read a line (``notice`` knows that one is being typed meanwhile)."""
        with self._output:
            self._prompt = text
        try:
            return self.read(text)
        finally:
            with self._output:
                self._prompt = None

    def ask_verdict(self) -> None:
        """The position changed: the live verdict on it, if on and the game is still on."""
        if self.live is not None and not self.game.outcome().is_over:
            self.live.position(self.game)

    def show_board(self) -> None:
        self.write(
            draw(self.game.view(), self.game.layout, self.colour, terminal_width(sys.stdout))
        )

    def show_moves(self) -> None:
        for number, move in enumerate(self.game.legal_moves(), start=1):
            self.write(f"  {number:>3}. {move}")

    def save(self, path: str) -> None:
        if not path:
            self.write("save needs a file name: save game.json")
            return
        MoveLog.of(self.game).save(path)
        self.write(f"move log saved to {path}")

    def run(self) -> bool:
        """Play until the game ends (True) or the input does (False)."""
        self.write(f"{self.game.title}, deal {self.game.seed}. Type 'help' for help.")
        for event in self.game.opening_events:
            self.write(f"  {event}")
        self.show_board()
        self.ask_verdict()
        try:
            return self.play()
        finally:
            if self.live is not None:
                self.live.close()

    def play(self) -> bool:
        while not self.game.outcome().is_over:
            self.show_moves()
            try:
                line = self.prompt("move> ").strip()
            except EOFError:
                self.write("")
                return False
            if not line:
                continue
            word, _, rest = line.partition(" ")
            if word.lower() in self.commands:
                self.commands[word.lower()](rest.strip())
                continue
            self.attempt(line)
        self.write(f"Game over: {self.game.outcome()}. {self.game.progress()}.")
        return True

    def attempt(self, line: str) -> None:
        legal = self.game.legal_moves()
        try:
            # ASCII digits: int() refuses ² (which isdigit takes) and digits by the thousand
            number = int(line) if line.isascii() and line.isdigit() and len(line) < 6 else 0
            move = legal[number - 1] if 0 < number <= len(legal) else Move.parse(line)
            events = self.game.play(move)
        except IllegalMoveError as refused:
            self.write(f"Refused: {refused.reason}")
            return
        except EngineError as error:
            self.write(f"Not understood: {error}")
            return
        self.write(f"> {move}")
        for event in events:
            self.write(f"  {event}")
        self.show_board()
        self.ask_verdict()


def verdict_line(moves: int, result: Result) -> str:
    """The live verdict as the terminal says it."""
    return f"solver, after {moves} move{'s' * (moves != 1)}: {LIVE_WORDS[result]}"
