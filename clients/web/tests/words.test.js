// Piles and moves in the books' words (pile_names.js, moves.js): node --test clients/web/tests/
import assert from "node:assert/strict";
import { test } from "node:test";

import { moveWords } from "../moves.js";
import { pileName } from "../pile_names.js";

test("piles are named as each rule book names them", () => {
  assert.equal(pileName("four-corners", "left:4"), "left side 3");
  assert.equal(pileName("four-corners", "right:1"), "top-right corner");
  assert.equal(pileName("four-corners", "ace:1"), "the spades ace foundation");
  assert.equal(pileName("cornerstones", "left:6"), "bottom-left cornerstone");
  assert.equal(pileName("puss-in-the-corner", "corner:2"), "top-right corner");
  assert.equal(pileName("hidden-cards", "reserve:2"), "reserve 2");
  assert.equal(pileName("hidden-cards", "heap:12"), "the queen heap");
  assert.equal(pileName("octagon", "aux:3"), "the bottom-right packet");
  assert.equal(pileName("octagon", "stock"), "stock");
});

test("a move reads as a player says it; the protocol's text stays underneath", () => {
  const name = (pile) => pileName("four-corners", pile);
  assert.equal(moveWords("9S left:4 -> right:3", name, () => "TS"),
    "9♠ → 10♠ on right side 2");
  assert.equal(moveWords("9S left:4 -> right:3", name), "9♠ → right side 2");
  assert.equal(moveWords("5D heap:1 -> heap:5 bottom", (p) => pileName("all-fours", p)),
    "5♦ → under the 5 heap");
  assert.equal(moveWords("reserve:2 -> hand", (p) => pileName("hidden-cards", p)),
    "a card from reserve 2 → hand");
  assert.equal(moveWords("redeal"), "Redeal");
});
