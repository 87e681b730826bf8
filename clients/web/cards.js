// Cards drawn in HTML and CSS: rank and suit in two corners, a large centre mark, red or black;
// a face-down card is a patterned back; an empty place is a dashed outline.

const SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
const RED = new Set(["H", "D"]);

// "10H" -> { rank: "10", suit: "H" }; null for a face-down card.
export function parseCard(text) {
  if (text == null) return null;
  const match = /^(10|[2-9AJQKT])([SHDC])$/i.exec(text);
  if (!match) throw new Error(`not a card: ${text}`);
  const rank = match[1].toUpperCase();
  return { rank: rank === "T" ? "10" : rank, suit: match[2].toUpperCase() };
}

export function suitSymbol(suit) {
  return SUITS[suit];
}

export function cardLabel(text) {
  const card = parseCard(text);
  return card ? `${card.rank}${SUITS[card.suit]}` : "face-down card";
}

export function cardElement(text) {
  const element = document.createElement("div");
  const card = parseCard(text);
  if (!card) {
    element.className = "card back";
    element.setAttribute("role", "img");
    element.setAttribute("aria-label", "face-down card");
    return element;
  }
  const symbol = SUITS[card.suit];
  element.className = `card face ${RED.has(card.suit) ? "red" : "black"}`;
  element.dataset.card = `${card.rank}${card.suit}`;
  element.setAttribute("role", "img");
  element.setAttribute("aria-label", cardLabel(text));
  for (const corner of ["top", "bottom"]) {
    const index = document.createElement("span");
    index.className = `index ${corner}`;
    index.textContent = `${card.rank}${symbol}`;
    element.append(index);
  }
  const centre = document.createElement("span");
  centre.className = "centre";
  centre.textContent = "JQK".includes(card.rank) ? `${card.rank}${symbol}` : symbol;
  element.append(centre);
  return element;
}

export function emptyPlace() {
  const element = document.createElement("div");
  element.className = "card empty";
  return element;
}
