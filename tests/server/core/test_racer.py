"""One seat of a race (``server.core.racer``): a move played gives the mover's reply and the
move to store, a resignation is stored only for a game still going, and ``ranking`` orders
winners by time, then the others by cards home and who reached that count first, equal results
sharing a place."""

from __future__ import annotations

import pytest

from engine.errors import IllegalMoveError
from engine.moves import RESIGN, Move
from engine.registry import find_rule_set
from server.core.racer import Racer, ranking
from server.core.said import MoveMade
from wire.protocol import SeatStatus

T0 = 1_000_000.0


def dealt(rule_set: str = "octagon") -> Racer:
    racer = Racer("p1", "Ann", status="racing")
    racer.deal(find_rule_set(rule_set)(7, keep_opening=False, undo=False), T0)
    return racer


def test_the_cards_the_deal_puts_home_count_as_reached_at_the_start() -> None:
    racer = dealt("octagon")
    assert (racer.reached, racer.reached_at) == (8, T0)


def test_play_returns_the_reply_and_the_move_to_store_with_its_index_and_ms() -> None:
    racer = dealt()
    assert racer.game is not None
    first = racer.game.legal_moves()[0]
    reply, made = racer.play(first, T0 + 1.25, T0, "m1", seq=7)
    assert (reply.id, reply.move, reply.seq, reply.moves) == ("m1", str(first), 7, 1)
    assert reply.legal_moves == [str(m) for m in racer.game.legal_moves()]
    assert made == MoveMade("p1", 0, str(first), 1250)
    second = racer.game.legal_moves()[0]
    _, made = racer.play(second, T0 + 2, T0, None, seq=8)
    assert made == MoveMade("p1", 1, str(second), 2000)
    assert racer.move_times == [T0 + 1.25, T0 + 2] and racer.last_moved(T0) == T0 + 2


def test_an_illegal_move_is_refused_and_nothing_is_noted() -> None:
    racer = dealt()
    with pytest.raises(IllegalMoveError):
        racer.play(Move.parse("AS heap:7 -> kings"), T0 + 1, T0, None, seq=1)
    assert racer.move_times == [] and racer.last_moved(T0) == T0


def test_the_move_that_ends_the_game_finishes_the_racer() -> None:
    racer = dealt()
    reply, made = racer.play(RESIGN, T0 + 3, T0, None, seq=1)
    assert (racer.status, racer.finished_at, racer.finished) == ("resigned", T0 + 3, True)
    assert reply.status == "resigned" and made == MoveMade("p1", 0, str(RESIGN), 3000)


def test_resigning_a_game_still_going_gives_the_resignation_to_store() -> None:
    racer = dealt()
    assert racer.resign(T0 + 4, T0) == [MoveMade("p1", 0, str(RESIGN), 4000)]
    assert racer.game is not None and racer.game.outcome().status.value == "resigned"


def test_resigning_a_finished_game_or_no_game_stores_nothing() -> None:
    racer = dealt()
    racer.play(RESIGN, T0 + 3, T0, None, seq=1)
    assert racer.resign(T0 + 4, T0) == [] and racer.move_times == [T0 + 3]
    assert Racer("p2", "Bob").resign(T0 + 4, T0) == []


def seated(
    player_id: str,
    status: SeatStatus,
    reached: int,
    reached_after: float,
    finished_after: float | None = None,
) -> Racer:
    return Racer(
        player_id,
        player_id.upper(),
        status=status,
        reached=reached,
        reached_at=T0 + reached_after,
        finished_at=None if finished_after is None else T0 + finished_after,
    )


def test_winners_rank_by_time_then_the_others_by_cards_home_then_who_reached_first() -> None:
    racers = [
        seated("slow_winner", "won", 52, 100, finished_after=100),
        seated("few_cards", "resigned", 10, 5, finished_after=50),
        seated("late_to_30", "timed_out", 30, 80, finished_after=300),
        seated("fast_winner", "won", 52, 60, finished_after=60),
        seated("early_to_30", "abandoned", 30, 20, finished_after=200),
    ]
    ranked = ranking(racers, T0)
    assert [entry.player_id for entry in ranked] == [
        "fast_winner",
        "slow_winner",
        "early_to_30",
        "late_to_30",
        "few_cards",
    ]
    assert [entry.rank for entry in ranked] == [1, 2, 3, 4, 5]


def test_racers_without_a_win_and_with_equal_results_share_a_place() -> None:
    """Issue 26: two racers who both resigned before any card went home were ranked 1 and 2 by
    who resigned first."""
    never = [
        Racer("first_to_resign", "A", status="resigned", finished_at=T0 + 5),
        Racer("second_to_resign", "B", status="resigned", finished_at=T0 + 9),
    ]
    assert [(e.player_id, e.rank) for e in ranking(never, T0)] == [
        ("first_to_resign", 1),
        ("second_to_resign", 1),
    ]
    racers = [
        seated("winner", "won", 52, 60, finished_after=60),
        seated("same_winner_time", "won", 52, 60, finished_after=60),
        seated("thirty_at_20", "resigned", 30, 20, finished_after=50),
        seated("also_thirty_at_20", "timed_out", 30, 20, finished_after=300),
        seated("thirty_a_ms_later", "lost", 30, 20.001, finished_after=40),
    ]
    assert [entry.rank for entry in ranking(racers, T0)] == [1, 2, 3, 3, 5], (
        "winners keep places of their own; equal cards at the same millisecond share one"
    )


def test_a_ranking_entry_gives_the_times_from_the_start_in_ms() -> None:
    racer = seated("p1", "resigned", 12, 1.5, finished_after=2.25)
    racer.move_times = [T0 + 1, T0 + 1.5, T0 + 2.25]
    (entry,) = ranking([racer], T0)
    assert (entry.name, entry.status, entry.time_ms) == ("P1", "resigned", 2250)
    assert (entry.on_foundations, entry.reached_at_ms, entry.moves) == (12, 1500, 3)
