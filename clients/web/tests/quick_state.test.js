// The lobby's quick race (clients/web/quick_state.js): node --test clients/web/tests/
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  botAfter, initialQuick, reduceQuick, seekingWords, waitingCount, waitingWords,
} from "../quick_state.js";

const seek = (extra = {}) => ({ type: "seek", rule_set: "octagon", rated: true,
  bot_after_s: null, ...extra });
const word = (type, waiting, extra = {}) => ({ type, rule_set: "octagon", rated: true, waiting,
  window: 100, waited_s: 0, ...extra });

test("the counts of GET /api/quick are each game's, rated and unrated apart", () => {
  const state = reduceQuick(initialQuick(), { type: "counts",
    waiting: { octagon: { rated: 3, unrated: 1 }, "all-fours": { rated: 0, unrated: 0 } } });
  assert.equal(waitingCount(state, "octagon", true), 3);
  assert.equal(waitingCount(state, "octagon", false), 1);
  assert.equal(waitingCount(state, "four-corners", true), 0); // not listed: nobody
  assert.equal(waitingWords(3), "3 waiting");
  assert.equal(waitingWords(0), "nobody waiting");
});

test("a search is said from the press, then with the server's count and window", () => {
  let state = reduceQuick(initialQuick(), seek());
  assert.equal(seekingWords(state.seeking), "Looking for racers…");
  state = reduceQuick(state, word("queued", 1));
  assert.equal(seekingWords(state.seeking), "Looking for racers: 1 waiting, window ±100");
  state = reduceQuick(state, word("queue", 3, { window: 150, waited_s: 6 }));
  assert.equal(seekingWords(state.seeking), "Looking for racers: 3 waiting, window ±150");
  assert.equal(state.seeking.waited_s, 6);
  assert.equal(waitingCount(state, "octagon", true), 3, "the game's count follows the queue");
  state = reduceQuick(state, word("queue", 3, { window: null }));
  assert.equal(seekingWords(state.seeking), "Looking for racers: 3 waiting, any rating");
});

test("another queue's word, or one after the search ended, changes nothing", () => {
  const state = reduceQuick(reduceQuick(initialQuick(), seek()), word("queued", 1));
  assert.equal(reduceQuick(state, word("queue", 5, { rated: false })), state);
  assert.equal(reduceQuick(state, word("queue", 5, { rule_set: "all-fours" })), state);
  const stopped = reduceQuick(state, { type: "stopped" });
  assert.equal(stopped.seeking, null);
  assert.equal(reduceQuick(stopped, word("queue", 5)), stopped);
});

test("matched ends the search and names the room; a dropped connection is said", () => {
  let state = reduceQuick(reduceQuick(initialQuick(), seek()), word("queued", 2));
  state = reduceQuick(state, { type: "lost" });
  assert.equal(seekingWords(state.seeking), "Connection lost – asking again once back…");
  state = reduceQuick(state, word("queued", 2));
  assert.equal(state.seeking.lost, false);
  const matched = { type: "matched", rule_set: "octagon", rated: true, code: "QK12" };
  state = reduceQuick(state, matched);
  assert.equal(state.seeking, null);
  assert.equal(state.matched, matched);
  assert.equal(reduceQuick(state, { type: "lost" }), state);
});

test("the practice bot's wait is a whole number of seconds within the protocol's range", () => {
  assert.equal(botAfter(false, "30"), null);
  assert.equal(botAfter(true, "30"), 30);
  assert.equal(botAfter(true, "2"), 5);
  assert.equal(botAfter(true, "9999"), 600);
  assert.equal(botAfter(true, "12.6"), 13);
  assert.equal(botAfter(true, "soon"), 30);
});
