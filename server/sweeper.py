"""What nobody closes by themselves, closed on a timer: idle connections and stale lobbies.

The service (``server.service``) runs ``sweep`` every ``Deadlines.interval()`` seconds; the
rules are ``server.core.deadlines``:

- a connection that has not said hello within ``hello_deadline_s`` of opening is closed (1008);
- a connection that has sent nothing for ``idle_timeout_s`` is closed (1000), unless it is in a
  room whose race is counting down or on (racers think, spectators watch). A connection whose
  room is held by another worker (``Elsewhere``) is closed once it has sent nothing for
  ``idle_timeout_s`` beyond the longest a room can last (``Deadlines.longest_room_s``): this worker
  does not see that room's phase, but no race outlives that;
- a lobby (a room whose race has not begun its countdown) nobody has been in for
  ``lobby_empty_s``, or opened more than ``lobby_max_s`` ago, is closed: its members get
  ``room_closed``, its code is free, and its stored row (a race never started) is deleted, so
  it is not restored at the next start; a winnable deal it took goes back to the pool.

A sweep walks every connection and room once: microseconds each, once a second at most.
"""

from __future__ import annotations

from server.core.deadlines import Deadlines, Whereabouts
from server.core.race import Phase
from server.core.said import as_frame
from server.net.connection import Gateway
from server.rooms.host import RoomHost
from server.rooms.room import Client, Elsewhere, Room
from server.settings import Settings
from server.storage.races import delete_unstarted_race
from wire.protocol import ErrorCode, ErrorMessage


def deadlines(settings: Settings) -> Deadlines:
    return Deadlines(
        hello_s=settings.hello_deadline_s,
        idle_s=settings.idle_timeout_s,
        lobby_empty_s=settings.lobby_empty_s,
        lobby_max_s=settings.lobby_max_s,
        longest_room_s=settings.lobby_max_s + settings.countdown_s + settings.max_race_s,
    )


def whereabouts(client: Client) -> Whereabouts:
    room = client.room
    if room is None:
        return Whereabouts.NO_ROOM
    if isinstance(room, Elsewhere):
        return Whereabouts.ELSEWHERE
    if room.race.phase in (Phase.LOBBY, Phase.FINISHED):
        return Whereabouts.QUIET_ROOM
    return Whereabouts.RACING_ROOM


def expired(room: Room, rules: Deadlines, now: float) -> bool:
    """Whether a lobby is to be closed (noting since when it has been empty)."""
    if room.race.phase is not Phase.LOBBY:
        return False
    if room.members:
        room.empty_since = None
    elif room.empty_since is None:
        room.empty_since = now
    return rules.lobby_expired(opened=room.opened, empty_since=room.empty_since, now=now)


def sweep(gateway: Gateway, host: RoomHost, rules: Deadlines, now: float) -> None:
    for client in list(gateway.clients.values()):
        close = rules.connection_close(
            said_hello=client.player_id is not None,
            since=client.since,
            active=client.active,
            where=whereabouts(client),
            now=now,
        )
        if close is not None:
            gateway.close_connection(client, *close)
    for room in [room for room in host.rooms.values() if expired(room, rules, now)]:
        close_lobby(host, room)


def close_lobby(host: RoomHost, room: Room) -> None:
    notice = ErrorMessage(
        code=ErrorCode.ROOM_CLOSED,
        message=f"room {room.race.terms.code} closed: its race never started",
    )
    host.delivery.hand_over(list(room.members), as_frame(notice))
    host.delivery.forget_room(room)
    race_id, epoch = room.race.terms.race_id, room.epoch
    host.writer.run(lambda: delete_unstarted_race(host.sessions, race_id, epoch))
