// Piles named as each rule book names them (docs/rules/<rule-set>.md): "left side 3", "the
// spades ace foundation", "the top-right corner", "reserve 2", with "the" where a sentence wants
// it ("Move the 9♠ from the stock to left side 3"). The protocol's pile ids ("left:3",
// "ace:1") stay underneath, in every message and in the moves sent; only the page says these.

const SUITS = ["spades", "hearts", "diamonds", "clubs"];
const CORNERS = { 1: "top-left", 2: "top-right", 3: "bottom-left", 4: "bottom-right" };
const VALUES = { 1: "ace", 11: "jack", 12: "queen", 13: "king" };

// Two columns of six: rows 1 and 6 are the corners; rows 2..5 the side heaps, numbered 1..4
// from the top as the foundation line they lie on (FC-2, CS-2).
function columns(corner) {
  return (kind, n) => {
    const side = kind === "left" ? "left" : "right";
    if (n === 1) return `the top-${side} ${corner}`;
    if (n === 6) return `the bottom-${side} ${corner}`;
    return `${side} side ${n - 1}`;
  };
}

function heap(n) {
  return `the ${VALUES[n] ?? n} heap`;
}

const BOOKS = {
  "four-corners": (kind, n) => ({
    left: columns("corner"), right: columns("corner"),
    ace: () => `the ${SUITS[n - 1]} ace foundation`,
    king: () => `the ${SUITS[n - 1]} king foundation`,
  })[kind]?.(kind, n),
  "cornerstones": (kind, n) => ({
    left: columns("cornerstone"), right: columns("cornerstone"),
    ace: () => `the ace foundation of line ${n}`,
    king: () => `the king foundation of line ${n}`,
  })[kind]?.(kind, n),
  "puss-in-the-corner": (kind, n) => ({
    corner: () => `the ${CORNERS[n]} corner`,
    foundation: () => `the ${SUITS[n - 1]} ace foundation`,
  })[kind]?.(),
  "hidden-cards": (kind, n) => ({
    heap: () => heap(n), reserve: () => `reserve ${n}`, kings: () => "the kings' row",
    hand: () => "the hand",
  })[kind]?.(),
  "all-fours": (kind, n) => ({ heap: () => heap(n) })[kind]?.(),
  "octagon": (kind, n) => ({
    foundation: () => `${n % 2 ? "the first" : "the second"} ${SUITS[Math.floor((n - 1) / 2)]}`
      + " foundation",
    aux: () => `the ${CORNERS[{ 1: 1, 2: 2, 3: 4, 4: 3 }[n]]} packet`,
    waste: () => "the waste heap",
  })[kind]?.(),
};
BOOKS["cornerstones-arnold"] = BOOKS.cornerstones;

const COMMON = { stock: "the stock", turned: "the turned card", waste: "the waste heap",
  hand: "the hand" };

// "left:3" in four-corners -> "left side 2", "right:1" -> "the top-right corner"; a pile no
// book names keeps its id.
export function pileName(ruleSet, pile) {
  const [kind, number] = pile.split(":");
  const named = BOOKS[ruleSet]?.(kind, Number(number));
  return named ?? COMMON[pile] ?? pile;
}

// Without a leading "the", for a label under a pile: "spades ace foundation".
export function pileLabel(ruleSet, pile) {
  return pileName(ruleSet, pile).replace(/^the /, "");
}
