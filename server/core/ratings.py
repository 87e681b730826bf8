"""Ratings from races: the pure core (no database, no asyncio).

A rating is openskill's Plackett-Luce model of a free-for-all (Weng and Lin 2011, algorithm 4):
each racer is a team of one, ranked by the race's ranking. Racers tied on every ranking term
(``tied``) share a rank, which Plackett-Luce handles as openskill does: a tie counts as half a
win each way.

Who is rated in a race is decided in two steps, each from facts stored with the race, so that
``patience-race ratings rebuild`` decides the same (issue 23: one address made ten identities
and farmed a rating from them in a minute):

- at its start (``roles``): only races on a secret deal rate anyone (a chosen deal is known to
  its host beforehand, and the daily deal is the same for everyone all day, so neither says
  who plays better), no race opened unrated (the unrated quick race's, issue 27), and no race
  with a bot account in it (``Hello.bot``: a bot is never rated, and beating or losing to a
  program says nothing of how people play). A racer is left out who shares an address with
  another racer of the race (the server cannot tell them from one person's identities), who is
  in another rated race still under way (one rated race at a time), or who has started
  ``per_hour`` rated races in the hour before. The others are rated, ``established`` or, for an
  identity younger than ``provisional_s``, ``provisional``. Stored with each racer's entry
  (``entries.rated_as``).
- at its end (``rated_ranking``): of those, the racers who made a move (a resignation is no
  move: a throwaway that resigns at once hands over nothing). The race rates them if they are
  two or more and not all provisional: new identities race unrated against each other.

The model's settings are openskill's defaults (mu 25, sigma 25/3, beta 25/6, tau 25/300): they
are part of what ``patience-race ratings rebuild`` must reproduce, so they are spelled out here
rather than left to the library's defaults.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from openskill.models import PlackettLuce

from wire.protocol import RankEntry
from wire.ratings import Rating as RatingModel
from wire.ratings import RatingChange

MU = 25.0
SIGMA = MU / 3
MODEL = PlackettLuce(mu=MU, sigma=SIGMA, beta=SIGMA / 2, tau=MU / 300, limit_sigma=False)


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's rating in one rule set: ``Rating(25.0, 8.333)``; shown as players are shown it
    (``wire.ratings``: ``1500?``)."""

    mu: float = MU
    sigma: float = SIGMA

    @property
    def ordinal(self) -> float:
        """The conservative figure: mu − 3·sigma (0 for a new player)."""
        return self.mu - 3 * self.sigma

    def __str__(self) -> str:
        return str(self.wire())

    def wire(self) -> RatingModel:
        return RatingModel(mu=self.mu, sigma=self.sigma, ordinal=self.ordinal)


NEW = Rating()


RatedAs = Literal["established", "provisional"]
ESTABLISHED: RatedAs = "established"
PROVISIONAL: RatedAs = "provisional"
HOUR_S = 3600.0
RESIGNING = frozenset({"resigned", "abandoned"})
"""Finished words whose resignation is counted among the racer's moves (``RankEntry.moves``):
an abandoned racer's game is resigned for them."""


@dataclass(frozen=True, slots=True)
class RatingRules:
    """What a racer needs to be rated (settings ``rating_provisional_s`` and
    ``rated_races_per_player_per_hour``); ``longest_race_s`` (``max_race_s``): how long ago a
    rated race may have started and still be under way."""

    provisional_s: float = 24 * HOUR_S
    per_hour: int = 20
    longest_race_s: float = 2 * HOUR_S

    @property
    def looks_back_s(self) -> float:
        """How far back a racer's rated races matter at a start."""
        return max(HOUR_S, self.longest_race_s)


DEFAULT_RULES = RatingRules()


@dataclass(frozen=True, slots=True)
class Candidate:
    """A racer as a race starts: ``address`` they connected from, ``age_s`` of their identity,
    ``recent``: their rated races started in the ``looks_back_s`` before, each as (how many
    seconds before this start, whether it is still under way), and ``bot``: whether their
    account is a bot's (``players.bot``)."""

    player_id: str
    address: str
    age_s: float
    recent: Sequence[tuple[float, bool]] = ()
    bot: bool = False

    def busy(self) -> bool:
        return any(under_way for _, under_way in self.recent)

    def rated_last_hour(self) -> int:
        return sum(ago < HOUR_S for ago, _ in self.recent)


def roles(
    deal_kind: str, racers: Sequence[Candidate], rules: RatingRules, unrated: bool = False
) -> dict[str, RatedAs | None]:
    """How each racer of a race starting now may be rated in it: ``ESTABLISHED``,
    ``PROVISIONAL``, or None (left out; see the module's docstring). ``unrated``: the race
    was opened unrated (an unrated quick race, ``RaceTerms.quick``): it rates nobody."""
    if unrated:
        return {racer.player_id: None for racer in racers}
    if deal_kind != "secret" or len(racers) < 2 or any(racer.bot for racer in racers):
        return {racer.player_id: None for racer in racers}
    sharing = Counter(racer.address for racer in racers)
    return {
        racer.player_id: None
        if (sharing[racer.address] > 1 or racer.busy() or racer.rated_last_hour() >= rules.per_hour)
        else PROVISIONAL
        if racer.age_s < rules.provisional_s
        else ESTABLISHED
        for racer in racers
    }


def moved(entry: RankEntry) -> bool:
    """Whether the racer made a move of their own, a resignation aside."""
    return entry.moves - (entry.status in RESIGNING) > 0


def rated_ranking(
    ranking: Sequence[RankEntry], rated_as: Mapping[str, str | None]
) -> list[RankEntry]:
    """The racers a finished race rates, in the race's order: those ``roles`` let in who made
    a move; none unless they are two or more and one of them is established."""
    counted = [
        entry for entry in ranking if rated_as.get(entry.player_id) is not None and moved(entry)
    ]
    if len(counted) < 2 or all(rated_as[entry.player_id] == PROVISIONAL for entry in counted):
        return []
    return counted


def ranking_key(entry: RankEntry) -> tuple[int, int, int, int]:
    """The terms a race ranks by (``server.core.race.Race.ranking``), as published in milliseconds:
    winners by time, then the rest by cards home and who reached that count first."""
    if entry.status == "won":
        return (0, entry.time_ms or 0, 0, 0)
    return (1, 0, -entry.on_foundations, entry.reached_at_ms or 0)


def tied_ranks(ranking: Sequence[RankEntry]) -> list[int]:
    """Each racer's place for the model: the race's rank, but racers tied on every ranking
    term share the first of their places (1, 2, 2, 4).

    The race gives tied racers ranks of their own in seat order; the published terms (times in
    milliseconds) decide the tie, so that a rebuild from the stored results finds the same."""
    places: list[int] = []
    for index, entry in enumerate(ranking):
        if index and ranking_key(entry) == ranking_key(ranking[index - 1]):
            places.append(places[-1])
        else:
            places.append(index + 1)
    return places


def rate(ranking: Sequence[RankEntry], current: Mapping[str, Rating]) -> dict[str, Rating]:
    """Every racer's rating after the race, given the ranking (best first, as the race gives
    it) and their ratings before it (a racer missing from ``current`` starts at ``NEW``)."""
    if len(ranking) < 2:
        raise ValueError(f"a rated race has two racers or more, not {len(ranking)}")
    before = [current.get(entry.player_id, NEW) for entry in ranking]
    teams = [[MODEL.create_rating([rating.mu, rating.sigma])] for rating in before]
    after = MODEL.rate(teams, ranks=[float(place) for place in tied_ranks(ranking)])
    return {
        entry.player_id: Rating(team[0].mu, team[0].sigma)
        for entry, team in zip(ranking, after, strict=True)
    }


def changes(before: Mapping[str, Rating], after: Mapping[str, Rating]) -> dict[str, RatingChange]:
    """Each racer's change, as ``race_finished`` carries it."""
    return {
        player_id: RatingChange(before=before.get(player_id, NEW).wire(), after=rating.wire())
        for player_id, rating in after.items()
    }
