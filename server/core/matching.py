"""The quick race's matcher, pure: who waiting in a queue races whom, given the time.

Each rule set has two queues, rated and unrated. A ``Seeker`` waits in one. Every ``WAVE_S`` the
shell (``server.cluster.quick``) runs ``wave`` on the seekers of each queue and opens a quick
room for each group it forms.

The rated queue matches players of close ratings (shown rating, ``wire.ratings``), accepting a
wider difference the longer they wait, as lichess's pools do (``window``): +-100 for the first
10 seconds, then 50 more every 5 seconds, up to +-500 at 45 seconds; after a minute, anyone. Two
seekers fit when their difference is within both their windows: a newcomer is not matched
with someone far off because that one has waited long. The unrated queue has no window.

A wave takes the oldest seeker first and gathers, closest rating first, those who fit everyone
gathered so far, up to ``GROUP_MAX``. The group is formed once it is full, or once its oldest
has waited ``GATHER_S``: so several players pressing within seconds of each other race together
rather than in pairs. A seeker is in one group at most; those left wait for the next wave.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

WAVE_S = 2.0
"""How often the queues are matched."""
GATHER_S = 10.0
"""How long a group's oldest seeker waits for more racers before a group of 2 or more races."""
GROUP_MAX = 8
"""The most racers in one quick room (a room's most seats)."""
WINDOW_FIRST = 100
"""The rating difference accepted either way at first (shown points), for ``WINDOW_FIRST_S``."""
WINDOW_FIRST_S = 10.0
WINDOW_STEP = 50
WINDOW_STEP_S = 5.0
"""Then the window widens by ``WINDOW_STEP`` every ``WINDOW_STEP_S`` of waiting..."""
WINDOW_MOST = 500
"""... up to this ..."""
ANYONE_AFTER_S = 60.0
"""... and after this long, any rating is accepted."""


@dataclass(frozen=True, slots=True)
class Seeker:
    """A player waiting in a queue."""

    player_id: str
    name: str
    rating: int
    """Their shown rating in the queue's rule set (1500 for a player never rated)."""
    rated: bool
    since: float
    """When they asked (Unix seconds)."""
    bot_after_s: int | None = None
    """Race the practice bot if nobody is matched within this many seconds (``bot_due``)."""


def window(waited_s: float) -> int | None:
    """The rating difference accepted either way after waiting ``waited_s``; None: any."""
    if waited_s >= ANYONE_AFTER_S:
        return None
    steps = max(0, int((waited_s - WINDOW_FIRST_S) // WINDOW_STEP_S) + 1)
    return min(WINDOW_MOST, WINDOW_FIRST + WINDOW_STEP * steps)


def seeker_window(seeker: Seeker, now: float) -> int | None:
    """The seeker's window now: None in the unrated queue, or once they accept anyone."""
    return window(now - seeker.since) if seeker.rated else None


def fit(a: Seeker, b: Seeker, now: float) -> bool:
    """Whether two seekers of one queue may race each other now: within both windows."""
    difference = abs(a.rating - b.rating)
    return all(
        accepted is None or difference <= accepted
        for accepted in (seeker_window(a, now), seeker_window(b, now))
    )


def wave(seekers: Sequence[Seeker], now: float) -> list[list[Seeker]]:
    """The groups formed now from the seekers of one queue, each oldest first; every seeker in
    at most one. A seeker named twice (by two workers, say) counts once."""
    waiting = list({seeker.player_id: seeker for seeker in seekers}.values())
    waiting.sort(key=lambda seeker: (seeker.since, seeker.player_id))
    taken: set[str] = set()
    groups = []
    for oldest in waiting:
        if oldest.player_id in taken:
            continue
        group = _gather(oldest, [s for s in waiting if s.player_id not in taken], now)
        if len(group) >= 2 and (len(group) == GROUP_MAX or now - oldest.since >= GATHER_S):
            groups.append(group)
            taken.update(seeker.player_id for seeker in group)
    return groups


def _gather(oldest: Seeker, free: Sequence[Seeker], now: float) -> list[Seeker]:
    """``oldest`` and, closest rating first (then longest waiting), those who fit everyone
    gathered, up to ``GROUP_MAX``."""
    group = [oldest]
    others = sorted(
        (seeker for seeker in free if seeker.player_id != oldest.player_id),
        key=lambda seeker: (abs(seeker.rating - oldest.rating), seeker.since, seeker.player_id),
    )
    for candidate in others:
        if len(group) == GROUP_MAX:
            break
        if all(fit(candidate, member, now) for member in group):
            group.append(candidate)
    return sorted(group, key=lambda seeker: (seeker.since, seeker.player_id))


def bot_due(seekers: Sequence[Seeker], now: float) -> list[Seeker]:
    """Those who asked for the practice bot and have waited as long as they said."""
    return [
        seeker
        for seeker in seekers
        if seeker.bot_after_s is not None and now - seeker.since >= seeker.bot_after_s
    ]
