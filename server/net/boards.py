"""Leaderboards as protocol messages: one function serves the WebSocket and the HTTP API."""

from __future__ import annotations

from datetime import date, datetime

from server.storage.engine import Sessions
from server.storage.leaderboards import (
    Board,
    ResultLine,
    WinsLine,
    daily_board,
    deal_board,
    fastest_wins,
    most_wins,
)
from server.storage.races import utc_day
from server.storage.ranks import RankCache
from wire.protocol import GetLeaderboard, Leaderboard, LeaderboardEntry

_RANKED = (
    "Wins on secret deals, and on daily deals by identities made before that day. "
    "Chosen deals are practice, counted only on their deal's board."
)
COUNTS = {
    "fastest": _RANKED,
    "most_wins": _RANKED,
    "daily": "The day's deal, once per player; identities made that day play it unranked.",
    "deal": "Every race on this deal: chosen, secret or daily, ranked or not.",
}
"""Which races each board counts (``server.storage.races.ranked`` has the rule), for the reply to
say."""


def _entry(line: ResultLine | WinsLine) -> LeaderboardEntry:
    if isinstance(line, WinsLine):
        return LeaderboardEntry(
            rank=line.rank,
            player_id=line.player_id,
            name=line.name,
            wins=line.wins,
            at=line.last_win_at.isoformat(),
            bot=line.bot,
        )
    return LeaderboardEntry(
        rank=line.rank,
        player_id=line.player_id,
        name=line.name,
        race_id=line.race_id,
        status=line.status,
        time_ms=line.time_ms,
        on_foundations=line.on_foundations,
        deal=None if line.seed is None else str(line.seed),
        at=line.finished_at.isoformat(),
        bot=line.bot,
    )


async def leaderboard(
    sessions: Sessions,
    request: GetLeaderboard,
    player_id: str | None,
    now: datetime,
    cache: RankCache | None = None,
) -> Leaderboard:
    """The board the request asks for; ``player_id`` (with ``around_me``) centres it on them.
    ``cache`` (``server.cluster.rank_cache``) gives the ranks of the boards it holds."""
    around = player_id if request.around_me else None
    day: date | None = None
    rule_set, limit = request.rule_set, request.limit
    board: Board[ResultLine] | Board[WinsLine]
    if request.board == "fastest":
        board = await fastest_wins(
            sessions, rule_set, request.period, limit, now, around=around, cache=cache
        )
    elif request.board == "most_wins":
        board = await most_wins(sessions, rule_set, limit, around=around, cache=cache)
    elif request.board == "deal":
        board = await deal_board(
            sessions, rule_set, int(request.deal or 0), limit, around=around, cache=cache
        )
    else:
        day = date.fromisoformat(request.day) if request.day else utc_day(now)
        board = await daily_board(sessions, rule_set, day, limit, now, around=around, cache=cache)
    return Leaderboard(
        id=request.id,
        rule_set=request.rule_set,
        board=request.board,
        counts=COUNTS[request.board],
        period=request.period,
        day=None if day is None else day.isoformat(),
        deal=request.deal if request.board == "deal" else None,
        entries=[_entry(line) for line in board.lines],
        me=None if board.me is None else _entry(board.me),
    )
