"""A clock the test moves by hand, for code that takes ``clock`` (``Service``, ``RoomHost``,
``Gateway``, ``run_server``) or ``now``: a deadline is passed by ``advance``, not by sleeping.

It starts at the real time (the service turns its readings into dates) and stands still until
advanced. Timers the loop runs (``call_later``, the sweeper's own period) still run on the
loop's time: advancing the clock makes the next of them see the deadline passed, it does not
make them fire sooner.
"""

from __future__ import annotations

import time


class FakeClock:
    def __init__(self, start: float | None = None) -> None:
        self.now = time.time() if start is None else start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        """Move the time on by ``seconds``; the new time."""
        assert seconds >= 0, "time does not go back"
        self.now += seconds
        return self.now
