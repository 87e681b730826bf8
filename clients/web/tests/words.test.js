// Piles and moves in the books' words (pile_names.js, moves.js): node --test clients/web/tests/
import assert from "node:assert/strict";
import { test } from "node:test";

import { eventsAfter, inWords, moveWords } from "../moves.js";
import { pileLabel, pileName } from "../pile_names.js";

const namer = (ruleSet) => (pile) => pileName(ruleSet, pile);

test("piles are named as each rule book names them, with 'the' where a sentence wants it", () => {
  assert.equal(pileName("four-corners", "left:4"), "left side 3");
  assert.equal(pileName("four-corners", "right:1"), "the top-right corner");
  assert.equal(pileName("four-corners", "ace:1"), "the spades ace foundation");
  assert.equal(pileName("cornerstones", "left:6"), "the bottom-left cornerstone");
  assert.equal(pileName("cornerstones-arnold", "king:2"), "the king foundation of line 2");
  assert.equal(pileName("puss-in-the-corner", "corner:2"), "the top-right corner");
  assert.equal(pileName("hidden-cards", "reserve:2"), "reserve 2");
  assert.equal(pileName("hidden-cards", "heap:12"), "the queen heap");
  assert.equal(pileName("hidden-cards", "hand"), "the hand");
  assert.equal(pileName("all-fours", "heap:13"), "the king heap");
  assert.equal(pileName("octagon", "aux:3"), "the bottom-right packet");
  assert.equal(pileName("octagon", "stock"), "the stock");
  assert.equal(pileLabel("puss-in-the-corner", "turned"), "turned card");
});

test("a move reads as a sentence; the protocol's text stays underneath", () => {
  const fourCorners = namer("four-corners");
  assert.equal(moveWords("9S left:4 -> right:3", fourCorners, () => "TS"),
    "Move the 9♠ from left side 3 onto the 10♠ on right side 2");
  assert.equal(moveWords("9S left:4 -> right:3", fourCorners), "Move the 9♠ from left side 3 to "
    + "right side 2");
  assert.equal(moveWords("KH turned -> corner:1", namer("puss-in-the-corner")),
    "Move the K♥ from the turned card to the top-left corner");
  assert.equal(moveWords("5D heap:1 -> heap:5 bottom", namer("all-fours")),
    "Put the 5♦ from the ace heap under the 5 heap");
  assert.equal(moveWords("reserve:2 -> hand", namer("hidden-cards")),
    "Move a face-down card from reserve 2 to the hand");
  assert.equal(moveWords("7D x3 corner:1 -> corner:2", namer("puss-in-the-corner")),
    "Move the 7♦ and the 2 above it from the top-left corner to the top-right corner");
  assert.equal(moveWords("redeal"), "Redeal");
});

test("the engine's notes and events are said in words, in every rule set", () => {
  const said = [
    ["cornerstones", "the deal: choose a foundation for AC, turned for left:4",
      "the deal: choose a foundation for A♣, turned for left side 3"],
    ["cornerstones-arnold", "3H from right:2 to right:3", "3♥ from right side 1 to right side 2"],
    ["four-corners", "5C turned for left:1, placed on ace:4",
      "5♣ turned for the top-left corner, placed on the clubs ace foundation"],
    ["puss-in-the-corner", "7D moved from corner:1 onto corner:2",
      "7♦ moved from the top-left corner onto the top-right corner"],
    ["hidden-cards", "placed under: heap:1 x1, heap:5 x2",
      "placed under: the ace heap (1), the 5 heap (2)"],
    ["hidden-cards", "KH taken from reserve:1 into the hand", "K♥ taken from reserve 1 into "
      + "the hand"],
    ["all-fours", "place 10H, just turned on heap:7", "place 10♥, just turned on the 7 heap"],
    ["octagon", "the stock is used up: 'redeal' turns the waste over",
      "the stock is used up: \"Redeal\" turns the waste over"],
    ["all-fours", "5D heap:1 -> heap:5 bottom (a win is possible in 52 moves)",
      "Put the 5♦ from the ace heap under the 5 heap (a win is possible in 52 moves)"],
  ];
  for (const [ruleSet, text, words] of said) assert.equal(inWords(text, namer(ruleSet)), words);
});

test("what followed a move leaves out the engine's own line for the move, not its news", () => {
  assert.deepEqual(eventsAfter("8D turned -> corner:2", ["8D placed on corner:2", "5C turned"]),
    ["5C turned"]);
  assert.deepEqual(eventsAfter("AH turned -> ace:2",
    ["AH from turned to ace:2: line 2 holds hearts", "JC dealt to left:2"]),
  ["line 2 holds hearts", "JC dealt to left:2"]);
  assert.deepEqual(eventsAfter("10S heap:13 -> heap:10 bottom", ["10S placed under heap:10"]), []);
  assert.deepEqual(eventsAfter("4D left:6 -> left:4", ["the heaps are gathered"]),
    ["the heaps are gathered"]);
  assert.deepEqual(eventsAfter("reserve:2 -> hand", ["6D taken from reserve:2 into the hand"]),
    ["6D taken from reserve:2 into the hand"]);
  assert.deepEqual(eventsAfter("turn", ["QS turned onto the waste"]), ["QS turned onto the waste"]);
});
