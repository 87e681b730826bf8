"""The race state machine on its own: fed events and times, checked on what it says."""

from __future__ import annotations

import hashlib
import random

import pytest

from engine.moves import RESIGN, Move
from engine.players import GreedyPlayer, RandomPlayer
from server.core.race import Phase, Race, RaceError
from server.core.room_events import EVENTS_KEPT
from server.core.room_view import catch_up_state, room_state
from server.core.said import Outgoing
from server.core.terms import RaceTerms
from wire.protocol import (
    Countdown,
    ErrorMessage,
    MoveAccepted,
    ProgressEvent,
    RaceFinished,
    RaceStarted,
    RoomState,
    YourView,
)
from wire.ratings import Rating, RatingChange

T0 = 1_000_000.0
SEED = 20261122


def race_terms(rule_set: str = "hidden-cards", **options: object) -> RaceTerms:
    """A race's terms for these tests: three seats, a secret deal, no time limit."""
    settings: dict[str, object] = dict(
        race_id="r1",
        code="ABCD1234",
        rule_set=rule_set,
        seed=SEED,
        algorithm=1,
        deal_kind="secret",
        seats_max=3,
        time_limit_s=None,
    )
    settings.update(options)
    return RaceTerms(**settings)  # type: ignore[arg-type]


def new_race(
    rule_set: str = "hidden-cards",
    events_kept: int = EVENTS_KEPT,
    host_id: str = "p1",
    host_name: str = "Ann",
    **options: object,
) -> Race:
    """A race of ``race_terms``, hosted by Ann (``p1``) unless said otherwise."""
    return Race(
        race_terms(rule_set, **options),
        host_id=host_id,
        host_name=host_name,
        events_kept=events_kept,
    )


def started(race: Race, *others: str) -> list[Outgoing]:
    for index, player in enumerate(others):
        race.join(player, f"name{index}", T0)
    out = race.start("p1", T0)
    return out + race.tick(T0 + race.terms.countdown_s)


def messages(out: list[Outgoing], kind: type) -> list:
    return [o.message for o in out if isinstance(o.message, kind)]


def test_lobby_fills_then_refuses_and_everyone_ready_starts_the_countdown() -> None:
    race = new_race()
    race.join("p2", "Bob", T0)
    race.join("p3", "Cy", T0)
    with pytest.raises(RaceError) as full:
        race.join("p4", "Di", T0)
    assert full.value.code == "room_full"
    race.ready("p1", True, T0)
    race.ready("p2", True, T0)
    assert race.phase is Phase.LOBBY
    out = race.ready("p3", True, T0 + 1)
    assert race.phase is Phase.COUNTDOWN
    (countdown,) = messages(out, Countdown)
    assert countdown.starts_at_ms == round((T0 + 1 + race.terms.countdown_s) * 1000)
    assert race.next_deadline() == T0 + 1 + race.terms.countdown_s
    assert race.tick(T0 + 2) == []
    out = race.tick(T0 + 1 + race.terms.countdown_s)
    assert race.phase is Phase.RACING
    with pytest.raises(RaceError) as late:
        race.join("p5", "Ed", T0 + 5)
    assert late.value.code == "already_started"


def test_everyone_gets_the_same_opening_at_the_same_moment_and_a_seed_commitment() -> None:
    race = new_race()
    out = started(race, "p2", "p3")
    (start,) = messages(out, RaceStarted)
    assert start.commitment == hashlib.sha256(str(SEED).encode()).hexdigest()
    assert start.deal_number is None
    views = [o for o in out if isinstance(o.message, YourView)]
    assert sorted(o.to for o in views) == ["p1", "p2", "p3"]
    assert len({o.message.view.model_dump_json() for o in views}) == 1


def test_room_events_are_numbered_and_only_the_latest_room_snapshot_is_kept() -> None:
    race = new_race()
    out = started(race, "p2")
    sent = [o.message for o in out if o.to is None]
    assert [event.seq for event in sent] == list(range(sent[0].seq, race.events.seq + 1))
    events = race.events.since(0)
    assert events is not None and [e.seq for e in events] == sorted(e.seq for e in events)
    rooms = [event for event in events if isinstance(event, RoomState)]
    assert len(rooms) == 1 and rooms[0].seq == max(e.seq for e in sent if isinstance(e, RoomState))
    assert race.events.since(race.events.seq - 1) == events[-1:]
    assert race.events.since(race.events.seq) == []


def test_a_long_race_keeps_its_latest_events_and_a_late_comer_gets_the_room_afresh() -> None:
    race = new_race("all-fours", events_kept=10)
    started(race, "p2")
    player = GreedyPlayer(random.Random(3))
    game = race.racers["p1"].game
    assert game is not None
    for number in range(15):
        race.move("p1", player.choose_in(game), T0 + 10 + number)
    events = race.events.since(race.events.seq - 5)
    assert events is not None and [e.seq for e in events] == list(
        range(race.events.seq - 4, race.events.seq + 1)
    )
    assert all(isinstance(e, ProgressEvent) for e in events)
    assert race.events.since(race.events.seq - 9) is not None
    assert race.events.since(race.events.seq - 11) is None
    assert race.events.since(race.events.seq + 1) is None
    (room,) = catch_up_state(race)
    assert isinstance(room, RoomState) and room.phase == "racing" and room.seq == race.events.seq
    race.resign("p1", T0 + 100)
    race.resign("p2", T0 + 101)
    room, result = catch_up_state(race)
    assert room.phase == "finished" and isinstance(result, RaceFinished)
    assert result is race.result and [e.player_id for e in result.ranking] == ["p1", "p2"]


def test_spectators_come_and_go_with_no_room_event_up_to_the_rooms_limit() -> None:
    race = new_race()
    seq = race.events.seq
    race.spectate("s1", most=2)
    race.spectate("s1", most=2)  # a repeat: still one spectator
    race.spectate("s2", most=2)
    with pytest.raises(RaceError) as refused:
        race.spectate("s3", most=2)
    assert refused.value.code == "too_many_spectators"
    assert race.leave("s1", T0) == []
    race.spectate("s3", most=2)
    assert race.events.seq == seq and room_state(race).spectators == 2


def test_only_the_host_starts_early() -> None:
    race = new_race()
    race.join("p2", "Bob", T0)
    with pytest.raises(RaceError) as refused:
        race.start("p2", T0)
    assert refused.value.code == "not_host"


def test_moves_before_the_start_and_after_finishing_are_refused() -> None:
    race = new_race()
    race.join("p2", "Bob", T0)
    move = Move.parse("resign")
    with pytest.raises(RaceError) as early:
        race.move("p1", move, T0)
    assert early.value.code == "not_racing"
    started(race)
    race.resign("p1", T0 + 10)
    with pytest.raises(RaceError) as late:
        race.move("p1", move, T0 + 11)
    assert late.value.code == "finished"
    with pytest.raises(RaceError) as stranger:
        race.move("p9", move, T0 + 11)
    assert stranger.value.code == "not_in_room"


def test_an_illegal_move_is_refused_with_the_engine_reason_and_changes_nothing() -> None:
    race = new_race()
    race.join("p2", "Bob", T0)
    started(race)
    seq = race.events.seq
    with pytest.raises(RaceError) as refused:
        race.move("p1", Move.parse("AS heap:7 -> kings"), T0 + 4)
    assert refused.value.code == "illegal_move" and refused.value.message
    assert race.events.seq == seq and race.racers["p1"].game.history == []


def test_an_accepted_move_is_acknowledged_to_the_mover_and_progress_to_the_others() -> None:
    race = new_race()
    race.join("p2", "Bob", T0)
    started(race)
    game = race.racers["p1"].game
    move = game.legal_moves()[0]
    out = race.move("p1", move, T0 + 5, request_id="m1")
    (ack,) = [o for o in out if isinstance(o.message, MoveAccepted)]
    assert ack.to == "p1" and ack.message.id == "m1" and ack.message.move == str(move)
    assert ack.message.changed, "the piles that changed are sent"
    (progress,) = [o for o in out if isinstance(o.message, ProgressEvent)]
    assert progress.to is None and progress.message.player_id == "p1"
    assert progress.but == "p1", "the mover's reply says the same: no progress frame for them"
    assert ack.message.seq == progress.message.seq == race.events.seq
    assert (
        (ack.message.on_foundations, ack.message.moves)
        == (progress.message.on_foundations, progress.message.moves)
        == (game.progress().on_foundations, 1)
    )
    assert "cards" not in progress.message.model_dump_json()


def play_to_end(race: Race, player_id: str, player: RandomPlayer, start: float) -> float:
    now = start
    game = race.racers[player_id].game
    while not race.racers[player_id].finished:
        now += 0.5
        race.move(player_id, player.choose_in(game), now)
    return now


def test_a_whole_race_of_three_ranks_winners_by_time_then_cards_home() -> None:
    seed = next(s for s in range(1, 500) if _wins("all-fours", s))
    race = new_race("all-fours", seed=seed)
    started(race, "p2", "p3")
    start = T0 + race.terms.countdown_s
    play_to_end(race, "p2", GreedyPlayer(random.Random(1)), start + 100)
    play_to_end(race, "p1", GreedyPlayer(random.Random(1)), start)
    race.resign("p3", start + 1)
    assert race.phase is Phase.FINISHED
    events = race.events.since(0)
    assert events is not None
    finished = events[-2]
    assert isinstance(finished, RaceFinished) and finished.seed == str(seed)
    assert [entry.player_id for entry in finished.ranking] == ["p1", "p2", "p3"]
    assert [entry.status for entry in finished.ranking] == ["won", "won", "resigned"]
    assert finished.ranking[0].time_ms < finished.ranking[1].time_ms
    assert isinstance(events[-1], RoomState) and events[-1].phase == "finished"


def _wins(rule_set: str, seed: int) -> bool:
    from engine.players import play_out
    from engine.registry import find_rule_set
    from engine.view import Status

    game = play_out(find_rule_set(rule_set)(seed), GreedyPlayer(random.Random(1)))
    return game.outcome().status is Status.WON


def test_time_limit_finishes_everyone_and_ties_break_on_who_got_there_first() -> None:
    race = new_race("octagon", time_limit_s=60)
    started(race, "p2")
    start = T0 + race.terms.countdown_s
    assert race.next_deadline() == start + 60
    for player_id, when in (("p2", start + 1), ("p1", start + 2)):
        game = race.racers[player_id].game
        for move in _same_moves(game, 6):
            race.move(player_id, move, when)
    out = race.tick(start + 60)
    assert race.phase is Phase.FINISHED
    (finished,) = messages(out, RaceFinished)
    assert [entry.status for entry in finished.ranking] == ["timed_out", "timed_out"]
    assert [entry.player_id for entry in finished.ranking] == ["p2", "p1"]


def _same_moves(game, count: int) -> list[Move]:
    trial = game.copy()
    moves = []
    player = GreedyPlayer(random.Random(5))
    while len(moves) < count and not trial.outcome().is_over:
        move = player.choose_in(trial)
        trial.play(move)
        moves.append(move)
    return moves


def test_a_dropped_racer_keeps_the_seat_for_the_grace_period_then_is_out() -> None:
    race = new_race(grace_s=60)
    race.join("p2", "Bob", T0)
    started(race)
    start = T0 + race.terms.countdown_s
    race.disconnect("p2", start + 1)
    assert race.next_deadline() == start + 61
    race.reconnect("p2", start + 30)
    # No grace period runs any more: only the racers' idle while, from the start.
    assert race.racers["p2"].connected and race.next_deadline() == start + race.terms.idle_s
    race.disconnect("p2", start + 40)
    race.tick(start + 99)
    assert not race.racers["p2"].finished
    race.tick(start + 100)
    assert race.racers["p2"].finished and race.racers["p2"].status == "abandoned"


def test_a_daily_deal_does_not_reveal_its_seed_at_the_end() -> None:
    race = new_race(deal_kind="daily", seats_max=1, countdown_s=0)
    out = race.start("p1", T0)
    assert race.phase is Phase.RACING and messages(out, RaceStarted)
    race.resign("p1", T0 + 3)
    (finished,) = [e for e in race.events.since(0) or [] if isinstance(e, RaceFinished)]
    assert finished.seed is None


def test_the_move_that_ends_a_game_makes_one_progress_event_with_the_final_status() -> None:
    race = new_race("all-fours")
    started(race, "p2")
    start = T0 + race.terms.countdown_s
    game = race.racers["p1"].game
    player = GreedyPlayer(random.Random(2))
    now = start
    while True:
        now += 0.5
        out = race.move("p1", player.choose_in(game), now)
        (progress,) = messages(out, ProgressEvent)
        if race.racers["p1"].finished:
            break
        assert progress.status == "racing"
    assert progress.status == game.outcome().status.value != "racing"
    assert progress.moves == len(game.history)
    out = race.resign("p2", now + 1)
    (progress,) = messages(out, ProgressEvent)
    assert (progress.player_id, progress.status, progress.moves) == ("p2", "resigned", 1)
    sent = [o.message for o in out]
    assert [type(m) for m in sent] == [ProgressEvent, MoveAccepted, RaceFinished, RoomState], (
        "the reply comes after the room event of the move, and before the race's end"
    )


def test_a_racer_who_leaves_the_race_shows_as_gone_from_then_on() -> None:
    race = new_race()
    started(race, "p2", "p3")
    start = T0 + race.terms.countdown_s
    out = race.leave("p2", start + 5)
    progress, room = (o.message for o in out)
    assert isinstance(progress, ProgressEvent) and progress.status == "resigned"
    assert isinstance(room, RoomState) and room.seq == progress.seq + 1

    def seat(room: RoomState) -> tuple[bool, str]:
        (mine,) = [s for s in room.seats if s.player_id == "p2"]
        return mine.connected, mine.status

    assert seat(room) == (False, "resigned")
    assert race.next_deadline() == start + race.terms.idle_s, (
        "no grace period runs for a racer who has left: only the others' idle while"
    )
    race.resign("p1", start + 6)
    out = race.resign("p3", start + 7)
    (end,) = messages(out, RoomState)
    assert end.phase == "finished" and seat(end) == (False, "resigned")
    race.reconnect("p2", start + 8)
    assert seat(room_state(race)) == (True, "resigned")
    (finished_leave,) = race.leave("p3", start + 9)
    assert isinstance(finished_leave.message, RoomState), "leaving a finished race is news too"


def test_a_move_after_the_time_limit_ends_the_race_and_is_answered() -> None:
    """The timer had not woken the race yet: the move still gets its one reply."""
    race = new_race("octagon", time_limit_s=60)
    started(race)
    late = race.racers["p1"].game.legal_moves()[0]
    out = race.move("p1", late, T0 + race.terms.countdown_s + 61, request_id="m1")
    assert race.phase is Phase.FINISHED and messages(out, RaceFinished)
    (reply,) = messages(out, ErrorMessage)
    assert (reply.id, reply.code) == ("m1", "not_racing") and out[-1].to == "p1"
    assert race.racers["p1"].game.history == [], "the late move was not played"


def test_cards_the_deal_puts_home_count_for_a_racer_who_never_moves() -> None:
    """The Octagon's eight aces are home from the deal: a racer who resigns at once ranks with
    them, reached at the start."""
    race = new_race("octagon")
    started(race, "p2")
    race.move("p1", RESIGN, T0 + race.terms.countdown_s + 5)
    out = race.move("p2", RESIGN, T0 + race.terms.countdown_s + 9)
    (finished,) = messages(out, RaceFinished)
    assert [(entry.on_foundations, entry.reached_at_ms) for entry in finished.ranking] == [
        (8, 0),
        (8, 0),
    ]


def test_a_race_without_a_time_limit_still_ends_at_its_longest() -> None:
    race = new_race("octagon", max_race_s=7200, idle_s=10_000)
    started(race, "p2")
    start = T0 + race.terms.countdown_s
    assert race.terms.time_limit_s is None and race.next_deadline() == start + 7200
    race.move("p2", _same_moves(race.racers["p2"].game, 1)[0], start + 5)
    assert race.tick(start + 7199.9) == [] and race.phase is Phase.RACING
    out = race.tick(start + 7200)
    assert race.phase is Phase.FINISHED and race.next_deadline() is None
    (finished,) = messages(out, RaceFinished)
    assert [entry.status for entry in finished.ranking] == ["timed_out", "timed_out"]
    assert {entry.time_ms for entry in finished.ranking} == {7_200_000}


def test_a_time_limit_longer_than_the_longest_race_ends_at_the_longest() -> None:
    race = new_race("octagon", time_limit_s=3 * 3600, max_race_s=7200, idle_s=10_000)
    started(race, "p2")
    start = T0 + race.terms.countdown_s
    assert race.next_deadline() == start + 7200
    with_shorter_limit = new_race("octagon", time_limit_s=60, max_race_s=7200)
    started(with_shorter_limit, "p2")
    assert with_shorter_limit.next_deadline() == start + 60


def test_a_racer_who_never_moves_is_finished_as_abandoned_and_the_others_race_on() -> None:
    race = new_race("octagon", idle_s=600)
    started(race, "p2", "p3")
    start = T0 + race.terms.countdown_s
    assert race.next_deadline() == start + 600
    bob_moves = _same_moves(race.racers["p2"].game, 3)
    race.move("p2", bob_moves[0], start + 100)
    race.move("p3", _same_moves(race.racers["p3"].game, 1)[0], start + 550)
    assert race.next_deadline() == start + 600  # Ann, who has not moved at all
    assert race.tick(start + 599) == []
    out = race.tick(start + 600)
    ann = race.racers["p1"]
    assert ann.finished and ann.status == "abandoned" and ann.finished_at == start + 600
    assert ann.game is not None and ann.game.outcome().status.value == "resigned"
    assert [(p.player_id, p.status) for p in messages(out, ProgressEvent)] == [("p1", "abandoned")]
    assert race.phase is Phase.RACING and not race.racers["p2"].finished
    # Bob's clock runs from his own last move: he is next, at 100 + 600.
    assert race.next_deadline() == start + 700
    race.move("p2", bob_moves[1], start + 650)
    assert race.next_deadline() == start + 1150  # now Cy, from 550
    race.resign("p3", start + 700)
    out = race.resign("p2", start + 800)
    (finished,) = messages(out, RaceFinished)
    assert {entry.player_id: entry.status for entry in finished.ranking} == {
        "p1": "abandoned",
        "p2": "resigned",
        "p3": "resigned",
    }


def test_a_move_after_the_idle_while_before_the_timer_woke_is_refused_as_finished() -> None:
    race = new_race("octagon", idle_s=600)
    started(race, "p2")
    start = T0 + race.terms.countdown_s
    race.move("p2", _same_moves(race.racers["p2"].game, 1)[0], start + 500)
    late = _same_moves(race.racers["p1"].game, 1)[0]
    out = race.move("p1", late, start + 601, request_id="m1")
    assert race.racers["p1"].status == "abandoned" and race.phase is Phase.RACING
    assert [(p.player_id, p.status) for p in messages(out, ProgressEvent)] == [("p1", "abandoned")]
    (refused,) = messages(out, ErrorMessage)
    assert (refused.id, refused.code) == ("m1", "finished")
    assert out[-1].to == "p1"


def test_the_ratings_storing_the_result_made_reach_the_result_and_its_kept_event() -> None:
    race = new_race(countdown_s=0)
    started(race, "p2")
    race.resign("p1", T0 + 1)
    out = race.resign("p2", T0 + 2)
    (announced,) = messages(out, RaceFinished)
    assert all(entry.rating is None for entry in announced.ranking)
    change = RatingChange(
        before=Rating(mu=25, sigma=25 / 3, ordinal=0), after=Rating(mu=25, sigma=8, ordinal=1)
    )
    race.rate({"p1": change, "p2": change})
    resumed = [*catch_up_state(race), *(race.events.since(0) or [])]
    for finished in (race.result, *[e for e in resumed if isinstance(e, RaceFinished)]):
        assert finished is not None and finished.seq == announced.seq
        assert [entry.rating for entry in finished.ranking] == [change, change]
    kept = race.events.since(announced.seq - 1)
    assert kept is not None and kept[0] == race.result  # then the room in phase finished


def test_the_race_says_what_to_store_beside_what_it_says() -> None:
    """Each call hands back the facts to store (``Said``): the start with its seats, each move
    with its index and milliseconds, the result with the ranking announced; the shell writes
    them as they are, and nothing else."""
    race = new_race()
    race.join("p2", "Bob", T0)
    counting = race.start("p1", T0)
    assert (counting.moves, counting.began, counting.ended) == ([], None, None)
    began = race.tick(T0 + race.terms.countdown_s)
    assert began.began is not None and began.began.racers == ("p1", "p2")
    assert began.began.started_at_ms == round((T0 + race.terms.countdown_s) * 1000)
    start = T0 + race.terms.countdown_s
    game = race.racers["p1"].game
    assert game is not None
    move = game.legal_moves()[0]
    said = race.move("p1", move, start + 1.25)
    assert [(m.player_id, m.index, m.text, m.at_ms) for m in said.moves] == [
        ("p1", 0, str(move), 1250)
    ]
    assert said.began is None and said.ended is None
    assert race.move("p1", RESIGN, start + 2).ended is None  # Bob still racing
    ended = race.resign("p2", start + 3)
    assert [(m.player_id, m.index, m.text) for m in ended.moves] == [("p2", 0, str(RESIGN))]
    assert ended.ended is not None and ended.ended.ended_at == start + 3
    assert ended.ended.announced_by in ended
    assert ended.ended.announced_by.message is race.result
    assert race.result is not None and ended.ended.ranking == race.result.ranking


def test_moves_the_race_makes_itself_are_stored_too() -> None:
    """A racer idle past the idle while is resigned by the race: that resignation is a move to
    store, at the moment the deadline fell."""
    race = new_race(idle_s=60)
    started(race, "p2")
    start = T0 + race.terms.countdown_s
    said = race.tick(start + 61)
    assert sorted((m.player_id, m.index, m.text, m.at_ms) for m in said.moves) == [
        ("p1", 0, str(RESIGN), 60_000),
        ("p2", 0, str(RESIGN), 60_000),
    ]
    assert said.ended is not None


def test_a_bot_may_not_join_a_rated_quick_race_but_a_person_may() -> None:
    race = new_race(quick="rated")
    with pytest.raises(RaceError) as refused:
        race.join("p2", "Bot", T0, bot=True)
    assert refused.value.code == "bots_not_rated"
    assert list(race.racers) == ["p1"]
    race.join("p3", "Cy", T0)
    assert list(race.racers) == ["p1", "p3"]


@pytest.mark.parametrize("quick", [None, "unrated"])
def test_a_bot_joins_any_other_room_and_is_marked_on_its_seat_and_in_the_ranking(
    quick: str | None,
) -> None:
    race = new_race(quick=quick)
    out = race.join("p2", "Bot", T0, bot=True)
    (room,) = messages(out, RoomState)
    assert [(seat.player_id, seat.bot) for seat in room.seats] == [("p1", False), ("p2", True)]
    started(race)
    race.resign("p1", T0 + 10)
    race.resign("p2", T0 + 11)
    assert race.result is not None
    assert {entry.player_id: entry.bot for entry in race.result.ranking} == {
        "p1": False,
        "p2": True,
    }


def test_a_bot_host_is_marked() -> None:
    race = Race(race_terms(), host_id="p1", host_name="Bot", host_bot=True)
    assert [seat.bot for seat in room_state(race).seats] == [True]
