"""The database: what is stored, as SQLAlchemy models, one module per kind of thing stored.

Only facts are stored: who played, the seed and deal algorithm version of every race, every
accepted move with its server time, and the results. A position is rebuilt by replaying the
moves (``engine.replay``), never stored.

- ``base``: the declarative base and its naming convention, and the column types for UTC
  timestamps and seeds;
- ``players``: the players;
- ``races``: the races, each racer's entry in one, and the moves;
- ``boards``: what the boards keep beside the entries (each player's wins, the lines in each
  bucket of a board);
- ``deals``: the daily deals and plays, the solver's verdicts, the winnable deals;
- ``ratings``: the ratings and what each rated race changed;
- ``fairplay``: the fair-play checks of rated races.

This package is the one place that imports every table: whatever imports it (the store, the
Alembic migrations' ``env.py``, the test that checks them against the models) finds
``Base.metadata`` complete. Every row class is named here, so a module imports it from
``server.storage.models``.

How to connect is ``server.storage.engine``. The schema itself is created by the Alembic
migrations in ``migrations/``, whose constraint names come from ``NAMING_CONVENTION``.
"""

from server.storage.models.base import NAMING_CONVENTION, Base, Seed, UTCDateTime
from server.storage.models.boards import BoardCountRow, PlayerWinsRow
from server.storage.models.deals import DailyDealRow, DailyPlayRow, DealVerdictRow, WinnableDealRow
from server.storage.models.fairplay import FairPlayRow
from server.storage.models.players import PlayerRow
from server.storage.models.races import EntryRow, MoveRow, RaceRow
from server.storage.models.ratings import RatingChangeRow, RatingRow

__all__ = [
    "NAMING_CONVENTION",
    "Base",
    "BoardCountRow",
    "DailyDealRow",
    "DailyPlayRow",
    "DealVerdictRow",
    "EntryRow",
    "FairPlayRow",
    "MoveRow",
    "PlayerRow",
    "PlayerWinsRow",
    "RaceRow",
    "RatingChangeRow",
    "RatingRow",
    "Seed",
    "UTCDateTime",
    "WinnableDealRow",
]
