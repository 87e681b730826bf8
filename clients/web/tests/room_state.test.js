// The room page's reducer (clients/web/room_state.js): node --test clients/web/tests/
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  boardNames, counted, finishHeadline, initialState, lowTime, myGameOver, mySeat, ordinal,
  raceTime, ratingText, reduce, rematchWords, standings, startsByItself, timeLeft,
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
  assert.equal(finishHeadline(state, clock), "You resigned – 2nd of 2");
  assert.equal(state.result.total, 52);
  assert.equal(raceTime(state, "b", 999999), 161300);
  const watcher = { ...state, me: null };
  assert.equal(finishHeadline(watcher, clock), "Bob won the race, 161.3s");
  assert.equal(finishHeadline({ ...state, me: "b" }, clock), "You won the race");
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

test("a quick room's first lobby starts by itself, as the room says; its rematch's does not", () => {
  let state = initialState({ code: "ABCD", me: "a" });
  state = reduce(state, room("lobby", [seat("a", "Ann")],
    { quick: "rated", starts_by_itself: true }));
  assert.equal(startsByItself(state), true);
  state = reduce(state, room("finished", [seat("a", "Ann")], { seq: 8, quick: "rated" }));
  assert.equal(startsByItself(state), false);
  state = reduce(state, room("lobby", [seat("a", "Ann")], { seq: 9, quick: "rated" }));
  assert.equal(startsByItself(state), false, "a rematch: ready, or the host starts it");
  state = reduce(initialState({ code: "ABCD", me: "a" }), room("lobby", [seat("a", "Ann")]));
  assert.equal(startsByItself(state), false, "a room opened by code");
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

test("the headline says what happened: the deal cleared, the time up, alone", () => {
  const over = (ranking) => ({ ...racing(), result: { ranking } });
  const entry = (rank, player_id, status) => ({ rank, player_id, name: player_id, status,
    time_ms: 1000, on_foundations: 3, moves: 1, reached_at_ms: null });
  assert.equal(finishHeadline(over([entry(1, "b", "won"), entry(2, "c", "won"),
    entry(3, "a", "won")]), clock), "You cleared the deal – 3rd of 3");
  assert.equal(finishHeadline(over([entry(1, "b", "won"), entry(2, "a", "timed_out"),
    entry(3, "c", "lost"), entry(4, "d", "lost")]), clock), "Time's up – 2nd of 4");
  assert.equal(finishHeadline(over([entry(1, "a", "won")]), clock), "You cleared the deal");
  assert.equal(finishHeadline(over([entry(1, "a", "resigned"), entry(1, "b", "resigned")]),
    clock), "You resigned – joint 1st of 2");
  assert.equal(counted(1, "move"), "1 move");
  assert.equal(counted(2, "move"), "2 moves");
});

test("a rating is shown on the players' scale: a loss never reads as a gain", () => {
  // The ordinal (mu − 3 sigma) rises as sigma falls, even after a loss; `shown` follows mu.
  const rating = (before, after, provisional = false) => ({
    before: { mu: 25, sigma: 8, ordinal: 1, shown: before, provisional },
    after: { mu: 24, sigma: 7, ordinal: 3, shown: after, provisional } });
  assert.equal(ratingText(rating(1500, 1532)), "1532 (+32)");
  assert.equal(ratingText(rating(1532, 1520)), "1520 (−12)");
  assert.equal(ratingText(rating(1500, 1500, true)), "1500? (±0)");
  assert.equal(ratingText(null), "–");
});

test("a rematch offer: who accepted, who is asked, a decline in words", () => {
  let state = racing();
  state = reduce(state, { type: "race_finished", seq: 9, race_id: "r1", seed: "7", ranking: [] });
  state = reduce(state, { type: "rematch_offer", seq: 10, accepted: ["b"], waiting: ["a"],
    declined_by: null });
  assert.deepEqual(state.rematch, { accepted: ["b"], waiting: ["a"], declined_by: null });
  const names = boardNames(state.room.seats);
  assert.equal(rematchWords(state.rematch, names), "1 of 2 want a rematch");
  state = reduce(state, { type: "rematch_offer", seq: 11, accepted: ["b"], waiting: [],
    declined_by: "a" });
  assert.equal(rematchWords(state.rematch, names), "Ann declined the rematch.");
  // A resynced room says the offer that is open, and forgets none said in words.
  state = reduce(state, room("finished", state.room.seats, { seq: 11, rematch: null }));
  assert.equal(state.rematch.declined_by, "a");
  state = reduce(state, room("finished", state.room.seats, { seq: 12,
    rematch: { accepted: ["a"], waiting: ["b"] } }));
  assert.deepEqual(state.rematch, { accepted: ["a"], waiting: ["b"], declined_by: null });
});

test("the results stay through the rematch lobby until dismissed or the next race", () => {
  let state = racing();
  state = reduce(state, { type: "race_finished", seq: 9, race_id: "r1", seed: "7", ranking: [] });
  state = reduce(state, room("lobby", [seat("a", "Ann"), seat("b", "Bob")], { seq: 10 }));
  assert.equal(state.finished, null);
  assert.equal(state.result.race_id, "r1");
  assert.equal(reduce(state, { type: "dismiss" }).result, null);
  state = reduce(state, { type: "race_started", seq: 11, started_at_ms: 9000, commitment: "c2",
    deal_number: null });
  assert.equal(state.result, null);
});

test("the seats keep the order they were taken in, whatever order the server lists", () => {
  let state = racing();
  state = reduce(state, room("racing", [seat("c", "Cy"), seat("b", "Bob"), seat("a", "Ann")],
    { seq: 5, started_at_ms: 5000 }));
  assert.deepEqual(state.room.seats.map((s) => s.player_id), ["a", "b", "c"]);
});

test("two racers of one name are told apart; places follow cards home", () => {
  const seats = [seat("p1-xyz", "Ann", { on_foundations: 4 }), seat("p2-k3F", "Ann"),
    seat("b", "Bob", { on_foundations: 4 })];
  const names = boardNames(seats);
  assert.deepEqual([...names.values()], ["Ann ·xyz", "Ann ·k3F", "Bob"]);
  const state = { ...racing(), room: { ...racing().room, seats } };
  assert.deepEqual([...standings(state).values()], [1, 3, 1]);
});

test("after a server restart the clocks hold the time shown, never running backwards", () => {
  let state = racing(); // started at 5000
  assert.equal(raceTime(state, "a", 16700), 11700);
  state = reduce(state, { type: "lost" }, { now: 16700 });
  // Restored with the outage charged to nobody: the start moved 1800 ms later.
  state = reduce(state, room("racing", state.room.seats, { seq: 5, started_at_ms: 6800 }),
    { now: 16800 });
  assert.equal(raceTime(state, "a", 16800), 11800); // held, not 10000
  assert.equal(raceTime(state, "a", 17000), 11800);
  assert.equal(raceTime(state, "a", 19000), 12200); // the real time caught up
});

test("reconnected: said for a moment, and what was refused while away is forgotten", () => {
  let state = racing();
  state = reduce(state, { type: "lost" }, { now: 100 });
  state = reduce(state, { type: "refused", move: "m", message: "not connected to the server" });
  state = reduce(state, { type: "reconnected" });
  assert.equal(state.lost, false);
  assert.equal(state.back, true);
  assert.equal(state.refusal, null);
  assert.equal(reduce(state, { type: "settled" }).back, false);
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
