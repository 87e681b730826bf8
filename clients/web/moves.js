// Move texts (docs/moves.md): read the server's legal moves, and write the move a player made
// with the mouse.
//
//   transfer = [card] ["x" count] source "->" target ["bottom"]      action = resign | redeal ...

const CARD = /^(10|[2-9AJQKT])[SHDC]$/i;

// "7H x3 aux:2 -> foundation:4" -> { text, card: "7H", count: 3, from: "aux:2",
// to: "foundation:4", bottom: false }; an action -> { text, action: "redeal" }.
export function parseMove(text) {
  const [left, right] = text.split(" -> ");
  if (right === undefined) return { text, action: text };
  const words = left.split(" ");
  const card = CARD.test(words[0]) ? words.shift().toUpperCase() : null;
  const count = words[0]?.startsWith("x") ? Number(words.shift().slice(1)) : 1;
  const [to, where] = right.split(" ");
  return { text, card, count, from: words[0], to, bottom: where === "bottom" };
}

export function moveText({ card, count, from, to, bottom }) {
  return [card, count > 1 ? `x${count}` : null, from, "->", to, bottom ? "bottom" : null]
    .filter(Boolean)
    .join(" ");
}

// The legal transfers that take `count` cards, the deepest being `card`, from the pile `from`.
export function transfersOf(legal, from, card, count) {
  return legal.filter((move) => !move.action && move.from === from && move.count === count
    && (move.card === null || move.card === card));
}

const SUIT_SIGNS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const ACTION_WORDS = { turn: "Turn a card", redeal: "Redeal", afresh: "Begin afresh",
  resign: "Resign" };

// "9S" -> "9♠"; "TH" -> "10♥".
export function cardWords(card) {
  if (!card) return "a face-down card";
  const rank = card.slice(0, -1).toUpperCase();
  return `${rank === "T" ? "10" : rank}${SUIT_SIGNS[card.slice(-1).toUpperCase()]}`;
}

// A move as a player says it: "KH turned -> corner:1" -> "Move the K♥ from the turned card to
// the top-left corner"; with 10S on right:3, "9S left:4 -> right:3" -> "Move the 9♠ from left
// side 3 onto the 10♠ on right side 2". `name` names a pile (pile_names.js); `topOf`
// (optional) gives a pile's top card, to say what the card goes onto.
export function moveWords(text, name = (pile) => pile, topOf = () => undefined) {
  const move = parseMove(text);
  if (move.action) return ACTION_WORDS[move.action] ?? move.action;
  const card = move.card ? `the ${cardWords(move.card)}` : "a face-down card";
  const more = move.count > 1 ? ` and the ${move.count - 1} above it` : "";
  const from = `from ${name(move.from)}`;
  if (move.bottom) return `Put ${card}${more} ${from} under ${name(move.to)}`;
  const top = topOf(move.to);
  const onto = top ? `onto the ${cardWords(top)} on ${name(move.to)}` : `to ${name(move.to)}`;
  return `Move ${card}${more} ${from} ${onto}`;
}

const PILE = "[a-z]+(?::\\d+)?";
const MOVE_IN_TEXT = new RegExp(
  `(?:\\b(?:10|[2-9AJQKT])[SHDC] )?(?:x\\d+ )?${PILE} -> ${PILE}(?: bottom)?`, "g");
const PILE_COUNT = /\b([a-z]+:\d+) x(\d+)\b/g;
const PILE_ID = /\b[a-z]+:\d+\b/g;
const CARD_IN_TEXT = /\b(?:10|[2-9AJQKT])[SHDC]\b/g;
const QUOTED_ACTION = /'(turn|redeal|afresh|resign)'/g;

// What followed a move, without the engine's own line for the move itself: the first event of
// a card's move names that card ("8D placed on corner:2"), which the move's sentence already
// says; where that line adds a fact ("AH from turned to ace:2: line 2 holds hearts") the fact
// stays. An action's events (a turned card, a redeal) are all news, and stay.
export function eventsAfter(move, events) {
  const card = /^(10|[2-9AJQK])[SHDC] /.exec(move)?.[0];
  if (!card || !move.includes(" -> ") || !events[0]?.startsWith(card)) return events;
  const fact = events[0].split(": ").slice(1).join(": ");
  return fact ? [fact, ...events.slice(1)] : events.slice(1);
}

// The engine's notes and events in the page's words: "the deal: choose a foundation for AC,
// turned for left:4" -> "the deal: choose a foundation for A♣, turned for left side 3";
// "placed under: heap:1 x2" -> "placed under: the ace heap (2)"; a move written in a text is
// said as `moveWords` says it; "'redeal'" -> "Redeal".
export function inWords(text, name = (pile) => pile) {
  return text
    .replace(MOVE_IN_TEXT, (move) => moveWords(move, name))
    .replace(PILE_COUNT, (_, pile, count) => `${name(pile)} (${count})`)
    .replace(PILE_ID, (pile) => name(pile))
    .replace(CARD_IN_TEXT, (card) => cardWords(card))
    .replace(QUOTED_ACTION, (_, action) => `"${ACTION_WORDS[action]}"`);
}
