"""When a connection or a lobby has outlived its time: pure, fed the time.

The sweeper (``server.sweeper``) asks these rules of every connection and every lobby, and
closes what they name; how the limits are set is ``server.settings``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

HELLO_CLOSE = (1008, "no hello in time")
IDLE_CLOSE = (1000, "idle")


class Whereabouts(Enum):
    """Where a connection is, as far as its deadlines care."""

    NO_ROOM = "no room"
    QUIET_ROOM = "a room in its lobby or finished"
    RACING_ROOM = "a room counting down or racing"
    ELSEWHERE = "a room held by another worker"


@dataclass(frozen=True, slots=True)
class Deadlines:
    hello_s: float
    """A connection must say hello within this of opening."""
    idle_s: float
    """A connection that sends nothing for this long is closed, unless it is racing."""
    lobby_empty_s: float
    lobby_max_s: float
    longest_room_s: float
    """The longest a room can last: its lobby, the countdown and the longest race."""

    def interval(self) -> float:
        """How often to look: nothing outlives its limit by more than a quarter of it."""
        return max(
            0.02,
            min(
                1.0, self.hello_s / 4, self.idle_s / 4, self.lobby_empty_s / 4, self.lobby_max_s / 4
            ),
        )

    def connection_close(
        self, *, said_hello: bool, since: float, active: float, where: Whereabouts, now: float
    ) -> tuple[int, str] | None:
        """How to close a connection that is past its deadline, or None. A connection in a
        room of another worker is closed once no room could still be on: this worker cannot
        see that room's phase."""
        if not said_hello and now - since > self.hello_s:
            return HELLO_CLOSE
        silent = now - max(since, active)
        if silent <= self.idle_s or where is Whereabouts.RACING_ROOM:
            return None
        if where is Whereabouts.ELSEWHERE and silent <= self.idle_s + self.longest_room_s:
            return None
        return IDLE_CLOSE

    def lobby_expired(self, *, opened: float, empty_since: float | None, now: float) -> bool:
        """Whether a lobby opened at ``opened``, empty since ``empty_since`` (None: someone is
        in it), is to be closed."""
        return now - opened > self.lobby_max_s or (
            empty_since is not None and now - empty_since > self.lobby_empty_s
        )
