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

// A move as a player says it: "9S left:3 -> right:2" with 10S on right:2 ->
// "9♠ → 10♠ on right side 1". `name` names a pile (pile_names.js); `topOf` (optional) gives a
// pile's top card, to say what the card goes onto.
export function moveWords(text, name = (pile) => pile, topOf = () => undefined) {
  const move = parseMove(text);
  if (move.action) return ACTION_WORDS[move.action] ?? move.action;
  const card = move.card ? cardWords(move.card) : `a card from ${name(move.from)}`;
  const more = move.count > 1 ? ` and ${move.count - 1} more` : "";
  if (move.bottom) return `${card}${more} → under ${name(move.to)}`;
  const top = topOf(move.to);
  const onto = top ? `${cardWords(top)} on ${name(move.to)}` : name(move.to);
  return `${card}${more} → ${onto}`;
}
