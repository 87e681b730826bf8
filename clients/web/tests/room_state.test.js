// The room page's reducer (clients/web/room_state.js): node --test clients/web/tests/
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  finishHeadline, initialState, lowTime, myGameOver, mySeat, ordinal, raceTime, ratingText, reduce,
  timeLeft,
} from "../room_state.js";

const clock = (ms) => `${(ms / 1000).toFixed(1)}s`;
const seat = (player_id, name, extra = {}) => ({ player_id, name, ready: false, connected: true,
  on_foundations: 0, total: 0, moves: 0, status: "waiting", ...extra });
const room = (phase, seats, extra = {}) => ({ type: "room", seq: 1, code: "ABCD", rule_set:
  "all-fours", deal_kind: "secret", phase, host: "a", seats_max: 4, time_limit_s: null, seats,
  spectators: 0, commitment: null, started_at_ms: null, ...extra });
const view = (status = "in_progress", moves = 0) => ({ rule_set: "all-fours", status, reason: "",
  piles: [{ pile: "heap:1", cards: ["5D"] }, { pile: "heap:5", cards: [] }], moves, total: 52,
  on_foundations: 0, legal_moves: ["5D heap:1 -> heap:5 bottom"], notes: [] });

function racing(extra = {}) {
  let state = initialState({ code: "ABCD", me: "a" });
  state = reduce(state, room("lobby", [seat("a", "Ann"), seat("b", "Bob")]));
  state = reduce(state, { type: "countdown", seq: 2, starts_at_ms: 5000, seconds: 3 });
  state = reduce(state, { type: "race_started", seq: 3, started_at_ms: 5000, commitment: "c0",
    deal_number: null, algorithm: 1, rules: 1 });
  state = reduce(state, room("racing", [seat("a", "Ann", { status: "racing", total: 52 }),
    seat("b", "Bob", { status: "racing", total: 52 })], { seq: 4, started_at_ms: 5000,
    commitment: "c0", ...extra }));
  return reduce(state, { type: "view", view: view() });
}

test("joins and ready follow the room snapshots", () => {
  let state = initialState({ code: "ABCD", me: "a" });
  state = reduce(state, room("lobby", [seat("a", "Ann")]));
  assert.equal(state.room.seats.length, 1);
  state = reduce(state, room("lobby", [seat("a", "Ann", { ready: true }), seat("b", "Bob")],
    { seq: 2 }));
  assert.equal(state.room.seats.length, 2);
  assert.equal(mySeat(state).ready, true);
  assert.equal(state.lastSeq, 2);
});

test("the countdown runs until the race starts", () => {
  let state = initialState({ code: "ABCD", me: "a" });
  state = reduce(state, room("lobby", [seat("a", "Ann")]));
  state = reduce(state, { type: "countdown", seq: 2, starts_at_ms: 9000, seconds: 3 });
  assert.equal(state.startsAtMs, 9000);
  state = reduce(state, { type: "race_started", seq: 3, started_at_ms: 9000, commitment: "cc",
    deal_number: "42" });
  assert.equal(state.startsAtMs, null);
  assert.equal(state.commitment, "cc");
  assert.equal(state.dealNumber, "42");
  assert.equal(state.room.started_at_ms, 9000);
});

test("a view, then accepted moves update the board and my seat", () => {
  let state = racing();
  assert.equal(state.view.moves, 0);
  state = reduce(state, { type: "move_ok", move: "5D heap:1 -> heap:5 bottom", events: ["e"],
    changed: [{ pile: "heap:1", cards: [] }, { pile: "heap:5", cards: ["5D"] }], legal_moves: [],
    status: "in_progress", reason: "", on_foundations: 1, moves: 1, notes: [], seq: 7 });
  assert.deepEqual(state.view.piles, [{ pile: "heap:1", cards: [] },
    { pile: "heap:5", cards: ["5D"] }]);
  assert.equal(mySeat(state).moves, 1);
  assert.equal(state.lastSeq, 7);
  assert.equal(state.log.length, 1);
  assert.equal(state.lastMove.move, "5D heap:1 -> heap:5 bottom");
});

test("progress moves a racer's bar; an event seen twice is applied once", () => {
  let state = racing();
  state = reduce(state, { type: "progress", seq: 5, player_id: "b", on_foundations: 3,
    total: 52, moves: 4, status: "racing" });
  assert.equal(state.room.seats[1].moves, 4);
  const again = reduce(state, { type: "progress", seq: 5, player_id: "b", on_foundations: 9,
    total: 52, moves: 9, status: "racing" });
  assert.equal(again, state);
});

test("each racer's clock stops when they finish, and low time warns", () => {
  let state = racing({ time_limit_s: 60 });
  assert.equal(raceTime(state, "b", 15000), 10000);
  state = reduce(state, { type: "progress", seq: 5, player_id: "b", on_foundations: 52,
    total: 52, moves: 60, status: "won" }, { now: 20000 });
  assert.equal(raceTime(state, "b", 99000), 15000);
  assert.equal(raceTime(state, "a", 40000), 35000);
  assert.equal(timeLeft(state, "a", 40000), 25000);
  assert.equal(lowTime(state, "a", 40000), true);
  assert.equal(lowTime(state, "a", 20000), false);
  assert.equal(lowTime(state, "b", 60000), false); // finished: no warning
  state = reduce(state, { type: "view", view: view("timed_out") }, { now: 65000 });
  assert.equal(myGameOver(state), true);
  assert.equal(raceTime(state, "a", 90000), 60000);
});

test("race_finished: the ranking, the headline, times from the result", () => {
  let state = racing();
  state = reduce(state, { type: "move_ok", move: "resign", events: [], changed: [],
    legal_moves: [], status: "resigned", reason: "", on_foundations: 0, moves: 1, notes: [] },
  { now: 9000 });
  assert.equal(finishHeadline(state, clock), "You resigned, 4.0s. Waiting for Bob…");
  state = reduce(state, { type: "race_finished", seq: 9, race_id: "r1", seed: "7", algorithm: 1,
    rules: 1, ranking: [
      { rank: 1, player_id: "b", name: "Bob", status: "won", time_ms: 161300, on_foundations: 52,
        moves: 80, reached_at_ms: 1 },
      { rank: 2, player_id: "a", name: "Ann", status: "resigned", time_ms: 4000,
        on_foundations: 0, moves: 1, reached_at_ms: null }] });
  assert.equal(state.room.phase, "finished");
  assert.equal(finishHeadline(state, clock), "You resigned, 2nd of 2, 4.0s");
  assert.equal(raceTime(state, "b", 999999), 161300);
  const watcher = { ...state, me: null };
  assert.equal(finishHeadline(watcher, clock), "Bob won, 161.3s");
  assert.equal(ordinal(1), "1st");
  assert.equal(ordinal(12), "12th");
  assert.equal(ordinal(23), "23rd");
});

test("rematch: a finished room back in the lobby forgets the last race", () => {
  let state = racing();
  state = reduce(state, { type: "race_finished", seq: 9, race_id: "r1", seed: "7", ranking: [] });
  state = reduce(state, room("lobby", [seat("a", "Ann"), seat("b", "Bob")],
    { seq: 10, commitment: "c1" }));
  assert.equal(state.finished, null);
  assert.equal(state.view, null);
  assert.deepEqual(state.stoppedAt, {});
  assert.equal(state.room.phase, "lobby");
  assert.equal(state.commitment, "c1");
});

test("resumed replays what was missed; lost and reconnected set the notice", () => {
  let state = racing();
  state = reduce(state, { type: "lost" }, { now: 12000 });
  assert.equal(state.lost, true);
  assert.equal(state.lostAt, 12000);
  state = reduce(state, { type: "lost" }, { now: 13000 });
  assert.equal(state.lostAt, 12000);
  state = reduce(state, { type: "resumed", full: false, missed: [
    { type: "progress", seq: 5, player_id: "b", on_foundations: 1, total: 52, moves: 1,
      status: "racing" },
    { type: "progress", seq: 6, player_id: "b", on_foundations: 2, total: 52, moves: 2,
      status: "racing" }] });
  assert.equal(state.lost, false);
  assert.equal(state.notice, "");
  assert.equal(state.room.seats[1].moves, 2);
  assert.equal(state.lastSeq, 6);
});

test("a refusal is kept until the next accepted move; a spectator has no board", () => {
  let state = racing();
  state = reduce(state, { type: "refused", move: "x", message: "no" });
  assert.deepEqual(state.refusal, { move: "x", message: "no" });
  state = reduce(state, { type: "move_ok", move: "m", events: [], changed: [], legal_moves: [],
    status: "in_progress", reason: "", on_foundations: 0, moves: 1, notes: [] });
  assert.equal(state.refusal, null);
  let watcher = initialState({ code: "ABCD", watching: true });
  watcher = reduce(watcher, room("racing", [seat("a", "Ann")], { started_at_ms: 1 }));
  assert.equal(mySeat(watcher), null);
  assert.equal(myGameOver(watcher), false);
  assert.equal(reduce(watcher, { type: "unknown" }), watcher);
});

test("the room's deal number survives a reload (from the room alone)", () => {
  let state = initialState({ code: "ABCD", me: "a" });
  state = reduce(state, room("racing", [seat("a", "Ann")], { deal_kind: "number",
    deal_number: "42", started_at_ms: 1 }));
  assert.equal(state.dealNumber, "42");
});

test("the messages of a room being left do not reach this room's state", () => {
  let state = initialState({ code: "ABCD", me: "a" });
  const early = reduce(state, { type: "progress", seq: 90, player_id: "a", on_foundations: 1,
    total: 52, moves: 1, status: "racing" });
  assert.equal(early, state);
  state = reduce(state, room("lobby", [seat("a", "Ann")]));
  const other = reduce(state, { ...room("racing", []), code: "ZZZZ", seq: 99 });
  assert.equal(other, state);
  assert.equal(state.lastSeq, 1);
});

test("a rating after the race and its change", () => {
  const rating = (before, after) => ({ before: { mu: 25, sigma: 8, ordinal: before },
    after: { mu: 26, sigma: 7, ordinal: after } });
  assert.equal(ratingText(rating(16.3, 18.4)), "18.4 (+2.1)");
  assert.equal(ratingText(rating(1.5, -0.25)), "-0.3 (−1.8)");
  assert.equal(ratingText(null), "–");
});

test("the live verdict is kept until the next race", () => {
  let state = racing();
  const verdict = { type: "live_verdict", after_moves: 0, result: "won",
    message: "still winnable", knowledge: "with full knowledge" };
  state = reduce(state, verdict);
  assert.equal(state.verdict.message, "still winnable");
  state = reduce(state, { type: "race_started", seq: 9, started_at_ms: 9000, commitment: "c1",
    deal_number: null, algorithm: 1, rules: 1 });
  assert.equal(state.verdict, null);
});
