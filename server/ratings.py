"""Ratings from races: the pure core (no database, no asyncio).

A rating is openskill's Plackett-Luce model of a free-for-all (Weng and Lin 2011, algorithm 4):
each racer is a team of one, ranked by the race's ranking. Racers tied on every ranking term
(``tied``) share a rank, which Plackett-Luce handles as openskill does: a tie counts as half a
win each way. Only races on a secret deal with two racers or more are rated (``is_rated``): a
chosen deal is known to its host beforehand, and the daily deal is the same for everyone all
day, so neither says who plays better.

The model's settings are openskill's defaults (mu 25, sigma 25/3, beta 25/6, tau 25/300): they
are part of what ``patience-race ratings rebuild`` must reproduce, so they are spelled out here
rather than left to the library's defaults.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from openskill.models import PlackettLuce

from wire.protocol import RankEntry
from wire.ratings import Rating as RatingModel
from wire.ratings import RatingChange

MU = 25.0
SIGMA = MU / 3
MODEL = PlackettLuce(mu=MU, sigma=SIGMA, beta=SIGMA / 2, tau=MU / 300, limit_sigma=False)


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's rating in one rule set: ``Rating(25.0, 8.333)``; shown as its ordinal."""

    mu: float = MU
    sigma: float = SIGMA

    @property
    def ordinal(self) -> float:
        """The conservative figure: mu − 3·sigma (0 for a new player)."""
        return self.mu - 3 * self.sigma

    def __str__(self) -> str:
        return f"{self.ordinal:.1f}"

    def wire(self) -> RatingModel:
        return RatingModel(mu=self.mu, sigma=self.sigma, ordinal=self.ordinal)


NEW = Rating()


def is_rated(deal_kind: str, racers: int) -> bool:
    """Whether a race changes ratings: a secret deal, two racers or more."""
    return deal_kind == "secret" and racers >= 2


def ranking_key(entry: RankEntry) -> tuple[int, int, int, int]:
    """The terms a race ranks by (``server.race.Race.ranking``), as published in milliseconds:
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
    return {entry.player_id: Rating(team[0].mu, team[0].sigma)
            for entry, team in zip(ranking, after, strict=True)}


def changes(before: Mapping[str, Rating], after: Mapping[str, Rating]) -> dict[str, RatingChange]:
    """Each racer's change, as ``race_finished`` carries it."""
    return {player_id: RatingChange(before=before.get(player_id, NEW).wire(),
                                    after=rating.wire())
            for player_id, rating in after.items()}
