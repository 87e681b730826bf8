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
