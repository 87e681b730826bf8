"""The terminal racer's app: the screen of the race's phase, kept drawn as the state changes
(the package's docstring, ``clients/terminal/__init__.py``, says what each module does)."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from clients.terminal.race import RaceScreen, ResultsScreen
from clients.terminal.screens import RacerScreen, RoomScreen, StartScreen
from clients.terminal.session import IdentityFile, IdentityFileError, RaceSession

PHASE_SCREENS: dict[str | None, type[RacerScreen]] = {
    None: StartScreen,
    "lobby": RoomScreen,
    "countdown": RoomScreen,
    "racing": RaceScreen,
    "finished": ResultsScreen,
}


class RacerApp(App[None]):
    """Shows the screen of the race's phase, and keeps it drawn as the session's state changes.
    Dialogs (a confirmation, the leaderboards) stay over it until the phase changes."""

    TITLE = "patience-race"

    def __init__(
        self, session: RaceSession, code: str | None = None, quick: str | None = None
    ) -> None:
        super().__init__()
        self.session = session
        self.code = code
        self.quick = quick
        """A rule set whose quick race queue to wait in at once (``race --quick``)."""
        self.phase: str | None = None

    def on_mount(self) -> None:
        self.session.on_change = self.follow
        self.session.on_notice = self.notice
        self.push_screen(StartScreen(self.session, self.code, self.quick))

    @property
    def phase_screen(self) -> RacerScreen:
        """The screen of the current phase: the top one, or the one under the dialogs."""
        return next(
            screen
            for screen in reversed(self.screen_stack)
            if type(screen) in PHASE_SCREENS.values() and isinstance(screen, RacerScreen)
        )

    def follow(self) -> None:
        phase = self.session.state.phase
        if phase == self.phase:
            if self.phase_screen.is_mounted:
                self.phase_screen.show()
            return
        self.phase = phase
        while self.screen is not self.phase_screen:
            self.pop_screen()
        self.switch_screen(PHASE_SCREENS[phase](self.session))

    def notice(self, text: str) -> None:
        self.phase_screen.say(text)

    async def on_unmount(self) -> None:
        await self.session.close()


def run_racer(
    server: str, code: str | None, name: str | None, token_file: Path, quick: str | None = None
) -> int:
    identities = IdentityFile(token_file)
    try:
        identities.load()
    except IdentityFileError as error:
        print(f"patience-race race: {error}")
        return 1
    RacerApp(RaceSession(server, identities, name), code, quick).run()
    return 0
