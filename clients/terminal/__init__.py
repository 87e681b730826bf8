"""``patience-race race``: race your friends in the terminal (a Textual app).

    patience-race race                 a form: create a room (rule set, deal, seats, time limit),
                                       play today's daily deal, or join a room by its code
    patience-race race K7M2XQ4B        join that room at once
    patience-race race --quick octagon wait in that rule set's quick race queue (the count and
                                       the rating window shown), then race whoever it matches
        --server ws://HOST:PORT/ws     the race server (default ws://127.0.0.1:8765/ws)
        --name NAME                    who you are: a new player the first time, then that
                                       player again (their token is kept)
        --token-file PATH              where tokens are kept (default: token.json in
                                       $XDG_CONFIG_HOME/patience-race or ~/.config/patience-race)

The screens follow the race: the start form, the room (seats, ready marks, the countdown), the
race (your board, the legal moves, everyone's progress) and the results (ranking with each
racer's rating, the revealed seed, the leaderboards and the rated board). The modules:

- ``state``: what the player knows, built from the server's messages (no I/O);
- ``session``: the connection over the SDK, the token file, reconnecting, the rated board;
- ``board``: the board and progress bars as styled text;
- ``screens`` and ``race``: the screens;
- ``app``: the app that shows the screen of the race's phase, and ``run_racer``.

This file imports nothing: the command line imports ``session`` for its default server
without loading Textual.
"""
