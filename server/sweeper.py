"""What nobody closes by themselves, closed on a timer: idle connections and stale lobbies.

The service (``server.service``) runs ``sweep`` every ``sweep_interval(settings)`` seconds:

- a connection that has not said hello within ``hello_deadline_s`` of opening is closed (1008);
- a connection that has sent nothing for ``idle_timeout_s`` is closed (1000), unless it is in a
  room whose race is counting down or on (racers think, spectators watch). A connection whose
  room is held by another worker (``Elsewhere``) is closed once it has sent nothing for
  ``idle_timeout_s`` beyond the longest a room can last (``longest_room_s``): this worker does
  not see that room's phase, but no race outlives that;
- a lobby (a room whose race has not begun its countdown) nobody has been in for
  ``lobby_empty_s``, or opened more than ``lobby_max_s`` ago, is closed: its members get
  ``room_closed``, its code is free, and its stored row (a race never started) is deleted, so
  it is not restored at the next start; a winnable deal it took goes back to the pool.

A sweep walks every connection and room once: microseconds each, once a second at most.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from server.core.race import Phase, as_frame
from server.net.connection import Elsewhere
from server.rooms.host import Room
from server.settings import Settings
from server.storage.races import delete_unstarted_race
from wire.protocol import ErrorCode, ErrorMessage

if TYPE_CHECKING:
    from server.net.connection import Client
    from server.rooms.host import RoomHost
    from server.service import Service

HELLO_CLOSE = (1008, "no hello in time")
IDLE_CLOSE = (1000, "idle")


def sweep_interval(settings: Settings) -> float:
    """Often enough that nothing outlives its limit by more than a quarter of it."""
    return max(0.02, min(1.0, settings.hello_deadline_s / 4, settings.idle_timeout_s / 4,
                         settings.lobby_empty_s / 4, settings.lobby_max_s / 4))


def longest_room_s(settings: Settings) -> float:
    """The longest a room can last: its lobby, the countdown and the longest race."""
    return settings.lobby_max_s + settings.countdown_s + settings.max_race_s


def overdue(client: Client, settings: Settings, now: float) -> tuple[int, str] | None:
    """How to close a connection that is past its deadline, or None."""
    if client.player_id is None and now - client.since > settings.hello_deadline_s:
        return HELLO_CLOSE
    silent = now - max(client.since, client.active)
    if silent > settings.idle_timeout_s:
        room = client.room
        if room is None or (isinstance(room, Room)
                            and room.race.phase in (Phase.LOBBY, Phase.FINISHED)):
            return IDLE_CLOSE
        if isinstance(room, Elsewhere) and silent > settings.idle_timeout_s + longest_room_s(
                settings):
            return IDLE_CLOSE
    return None


def expired(room: Room, settings: Settings, now: float) -> bool:
    """Whether a lobby is to be closed (updating since when it has been empty)."""
    if room.race.phase is not Phase.LOBBY:
        return False
    if room.members:
        room.empty_since = None
    elif room.empty_since is None:
        room.empty_since = now
    return (now - room.opened > settings.lobby_max_s
            or (room.empty_since is not None and now - room.empty_since > settings.lobby_empty_s))


def sweep(service: Service, now: float) -> None:
    settings = service.settings
    for client in service.clients:
        close = overdue(client, settings, now)
        if close is not None:
            service.close_connection(client, *close)
    host = service.host
    for room in [room for room in host.rooms.values() if expired(room, settings, now)]:
        close_lobby(host, room)


def close_lobby(host: RoomHost, room: Room) -> None:
    notice = ErrorMessage(code=ErrorCode.ROOM_CLOSED,
                          message=f"room {room.race.code} closed: its race never started")
    host.hand_over(list(room.members), as_frame(notice))
    host.forget_room(room)
    race_id, epoch = room.race.race_id, room.epoch
    host.writer.run(lambda: delete_unstarted_race(host.sessions, race_id, epoch))
