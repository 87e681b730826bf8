"""The race server, in five packages, each importing only those below it.

- ``server.net``: where a connection is handled. The WebSocket handler (``net.connection``:
  frames in, limits, ``hello``, refusals as error messages), the HTTP API on the same port
  (``net.http``), the browser client's files and the rules pages.
- ``server.cluster``: what carries requests and frames between workers. One small interface
  (``cluster.bus.Bus``), in one process (``LocalBus``) or across workers through Redis
  (``cluster.redis_bus``); the public list of rooms and the rank cache kept in Redis; the
  supervisor of several workers behind one port (``cluster.workers``).
- ``server.rooms``: where a room lives. The host of one process's rooms and their requests
  (``rooms.host``), how rooms are opened (``rooms.opening``), how what a race says leaves its
  room, stored first what must be (``rooms.delivery``, ``rooms.outbox``), the winnable pool and
  the solver processes.
- ``server.storage``: the database. Its models, what is stored (players, races, results,
  deals, ranks, ratings, leaderboards), the holder of each race, and the writer every write goes
  through (``storage.writer``).
- ``server.core``: pure, fed events and the time; no I/O. The race (``core.race``), its terms
  (``core.terms``), what it says and asks to store (``core.said``), what a player may ask of it
  (``core.room_view``), rematches, ratings, the limits' arithmetic, the lobby
  list's rules and the deadlines the sweeper applies.

At the top, the process itself: its settings (``server.settings``), the service that puts the
pieces together (``server.service``), starting and stopping (``server.main``) and the sweeper
(``server.sweeper``). ``tests/server/test_layers.py`` holds the layering to this.
"""
