// A player's board: any rule set's piles drawn as cards where its layout puts them (the grid of
// GET /api/games, refined by layouts.js), and moves made on it by click or drag and drop.
//
// Click a card (it and the cards above it are picked up; the piles it may go to light up), then
// click a pile. Or drag the card onto a pile. A move the rules allow is sent as the server
// listed it; any other is sent as written, so the server says why it is refused. Clicking the
// stock turns a card (or redeals). Without `onMove` the board only shows (the replay viewer).

import { cardElement, cardLabel, emptyPlace, parseCard } from "./cards.js";
import { refinement } from "./layouts.js";
import { moveText, moveWords, parseMove, transfersOf } from "./moves.js";
import { pileName } from "./pile_names.js";

const CARD_W = 64;
const CARD_H = 90;
const DIRECTIONS = { "down": [0, 1], "right": [1, 0], "down-left": [-0.6, 0.8],
  "down-right": [0.6, 0.8] };
const FAN_FACE_UP = 26; // how much of a face-up card shows under the next one, in pixels
const FAN_FACE_DOWN = 9;
const FAN_FACE_UP_MIN = 16; // a long fan is squeezed, down to this
const FAN_LONGEST = 320;
const DRAG_THRESHOLD = 5;
const DOUBLE_TAP_MS = 400;
const SCALE_MAX = 1.6; // on a large screen the cards grow, up to this
const SCALE_MIN = 0.3;
const HOME = /^(ace|king|foundation):/; // the foundations of the books that have them
const STEP_MS = 160; // one card's travel
const STAGGER_MS = 45; // between the cards the engine moved after yours, in turn
const RANKS = { A: 1, J: 11, Q: 12, K: 13 };

export class Board {
  constructor(game, { onMove = null, names = (pile) => pileName(game.name, pile) } = {}) {
    this.game = game;
    this.refine = refinement(game.name);
    this.onMove = onMove;
    this.names = names;
    this.spreadAll = false;
    this.view = null;
    this.legal = [];
    this.selected = null;
    this.lastTap = null;
    this.scale = 1;
    this.highlight = new Set();
    // The board is drawn at its natural size in `table`, then scaled to fit the window: the
    // wrapper takes the scaled size in the page.
    this.element = document.createElement("div");
    this.element.className = "board-fit";
    this.table = document.createElement("div");
    this.table.className = "board";
    this.table.dataset.ruleSet = game.name;
    this.refusal = document.createElement("div");
    this.refusal.className = "refusal";
    this.refusal.setAttribute("role", "alert");
    this.refusal.hidden = true;
    this.element.append(this.table, this.refusal);
    if (onMove) {
      this.table.classList.add("playable");
      this.table.addEventListener("pointerdown", (event) => this.pointerDown(event));
    }
    this.resized = () => this.fit();
    window.addEventListener("resize", this.resized);
  }

  // Draw a view (ViewModel); `highlight` names piles to mark (the replay's last move);
  // `animate` ({ from, move }) makes the cards that moved travel from where they were.
  show(view, { highlight = [], animate = null } = {}) {
    const before = animate ? this.cardPlaces() : null;
    this.view = view;
    this.legal = view.legal_moves.map(parseMove);
    this.highlight = new Set(highlight);
    this.selected = null;
    this.render();
    if (before) this.travel(before, animate.move);
  }

  // A refused move, beside the pile it came from, over the table (the layout does not move).
  showRefusal(refusal) {
    if (!refusal?.message) {
      this.refusal.hidden = true;
      return;
    }
    this.refusal.replaceChildren();
    const strong = document.createElement("strong");
    strong.textContent = "Refused: ";
    const code = document.createElement("code");
    code.textContent = refusal.move;
    this.refusal.append(strong, moveWords(refusal.move, this.names), " (", code, ") — ",
      refusal.message);
    this.refusal.hidden = false;
    const pile = refusal.pile && this.table.querySelector(`.pile[data-pile="${refusal.pile}"]`);
    const box = this.element.getBoundingClientRect();
    const at = pile?.getBoundingClientRect();
    this.refusal.style.left = at ? `${Math.max(0, Math.min(at.left - box.left,
      box.width - 260))}px` : "0px";
    this.refusal.style.top = at ? `${at.bottom - box.top + 6}px` : "0px";
  }

  // Scale the table so that all of it shows in the window: the width of the wrapper's parent,
  // and the height from the wrapper's top to the window's bottom.
  fit() {
    if (!this.element.isConnected) return;
    const width = this.table.offsetWidth;
    const height = this.table.offsetHeight;
    if (!width || !height) return;
    const parent = this.element.parentElement;
    const window_ = document.documentElement.clientWidth || window.innerWidth;
    const room = Math.min(parent ? parent.clientWidth : window_, window_);
    const top = this.element.getBoundingClientRect().top + window.scrollY;
    const below = window.innerHeight - top - 8;
    const tall = Math.max(below, window.innerHeight * 0.5);
    const scale = Math.max(SCALE_MIN, Math.min(SCALE_MAX, room / width, tall / height));
    this.scale = scale;
    this.table.style.transform = `scale(${scale})`;
    this.element.style.width = `${width * scale}px`;
    this.element.style.height = `${height * scale}px`;
    this.element.style.setProperty("--scale", scale);
  }

  // Where each card lies now on the table (its own, unscaled pixels), by card and its copy
  // number (two packs).
  cardPlaces() {
    const places = new Map();
    const origin = this.table.getBoundingClientRect();
    const at = (element) => {
      const rect = element.getBoundingClientRect();
      return [(rect.left - origin.left) / this.scale, (rect.top - origin.top) / this.scale];
    };
    for (const card of this.table.querySelectorAll(".card.face")) {
      places.set(placeKey(places, card.dataset.card), at(card));
    }
    const stock = this.table.querySelector('.pile[data-pile="stock"]');
    places.set("stock", stock ? at(stock) : null);
    return places;
  }

  // Each card now elsewhere travels there from where it was: the card you moved first, then
  // the ones the engine moved, one after another, quickly; a card newly shown comes from the
  // stock.
  travel(before, move) {
    const moved = move ? parseMove(move.move).card : null;
    const after = this.cardPlaces();
    const seen = new Map();
    const goes = [];
    for (const card of this.table.querySelectorAll(".card.face")) {
      const key = placeKey(seen, card.dataset.card);
      seen.set(key, true);
      const was = before.get(key) ?? before.get("stock");
      const now = after.get(key);
      if (!was || !now) continue;
      const [dx, dy] = [was[0] - now[0], was[1] - now[1]];
      if (Math.abs(dx) < 2 && Math.abs(dy) < 2) continue;
      goes.push({ card, dx, dy, first: card.dataset.card === moved });
    }
    goes.sort((a, b) => Number(b.first) - Number(a.first));
    const stagger = Math.min(STAGGER_MS, 600 / Math.max(1, goes.length));
    goes.slice(0, 24).forEach(({ card, dx, dy }, order) => {
      card.style.zIndex = 500;
      const animation = card.animate?.([{ transform: `translate(${dx}px, ${dy}px)` },
        { transform: "none" }], { duration: STEP_MS, delay: order * stagger,
        easing: "ease-out", fill: "backwards" });
      animation?.finished.then(() => card.style.removeProperty("z-index")).catch(() => {});
    });
  }

  // Fan every pile out, squared ones included, to see each card.
  setSpreadAll(spreadAll) {
    this.spreadAll = spreadAll;
    if (this.view) this.render();
  }

  cardsOf(pile) {
    return this.view.piles.find((p) => p.pile === pile)?.cards ?? [];
  }

  render() {
    document.querySelector(".chooser")?.remove();
    const layout = this.game.layout;
    const columns = Math.max(...layout.map((slot) => slot.col)) + 1;
    this.table.style.gridTemplateColumns = `repeat(${columns}, auto)`;
    this.table.dataset.status = this.view.status;
    this.table.dataset.moves = this.view.moves;
    this.toMove = this.cardToMove();
    this.table.replaceChildren(...layout.map((slot) => this.slotElement(slot, columns)));
    this.fit();
    requestAnimationFrame(() => this.fit()); // once the page has placed it
  }

  // Where one card is the card to move (Hidden Cards, All Fours): that card.
  cardToMove() {
    const transfers = this.legal.filter((move) => !move.action);
    const froms = new Set(transfers.map((move) => `${move.from} ${move.card}`));
    if (froms.size !== 1 || !/^heap:|^hand$/.test(transfers[0].from)) return null;
    return { pile: transfers[0].from, card: transfers[0].card };
  }

  slotElement(slot, columns) {
    const element = document.createElement("div");
    element.className = `slot spread-${this.spreadOf(slot)}`;
    element.dataset.slot = slot.pile;
    element.style.gridRow = slot.row + 1;
    element.style.gridColumn = `${slot.col + 1} / span ${this.spanOf(slot, columns)}`;
    // The place a pile takes on the table: the box around it, turned if its book turns it.
    const pile = this.pileElement(slot);
    const angle = this.refine.rotate[slot.pile] ?? 0;
    const [width, height] = [parseFloat(pile.style.width), parseFloat(pile.style.height)];
    const radians = (angle * Math.PI) / 180;
    const [cos, sin] = [Math.abs(Math.cos(radians)), Math.abs(Math.sin(radians))];
    const [boxWidth, boxHeight] = [width * cos + height * sin, width * sin + height * cos];
    const place = document.createElement("div");
    place.className = "place";
    place.style.width = `${boxWidth}px`;
    place.style.height = `${boxHeight}px`;
    if (angle) {
      pile.style.left = `${(boxWidth - width) / 2}px`;
      pile.style.top = `${(boxHeight - height) / 2}px`;
      pile.style.transform = `rotate(${angle}deg)`;
    }
    place.append(pile);
    const label = document.createElement("div");
    label.className = "label";
    label.textContent = this.names(slot.pile).replace(/^the /, "");
    label.title = slot.pile;
    element.append(place, label);
    return element;
  }

  // A pile fanned to the right takes the row's cells up to the next pile.
  spanOf(slot, columns) {
    if (this.spreadOf(slot) !== "right") return 1;
    const next = this.game.layout
      .filter((other) => other.row === slot.row && other.col > slot.col)
      .map((other) => other.col);
    return Math.min(columns, ...next) - slot.col;
  }

  spreadOf(slot) {
    const spread = this.refine.spread[slot.pile] ?? slot.spread;
    return spread === "none" && this.spreadAll && slot.pile !== "stock" ? "down" : spread;
  }

  pileElement(slot) {
    const cards = this.cardsOf(slot.pile);
    const element = document.createElement("div");
    element.className = "pile";
    element.dataset.pile = slot.pile;
    element.dataset.count = cards.length;
    element.title = `${this.names(slot.pile)}: ${cards.length ? cards.map(cardLabel).join(" ")
      : "empty"}`;
    if (this.highlight.has(slot.pile)) element.classList.add("last-move");
    if (this.targets().has(slot.pile)) element.classList.add("target");
    const spread = this.spreadOf(slot);
    const shown = spread === "none" ? cards.slice(-1) : cards;
    const first = cards.length - shown.length;
    const positions = fanPositions(shown, spread);
    const width = Math.max(CARD_W, ...positions.map(([x]) => x + CARD_W));
    const height = Math.max(CARD_H, ...positions.map(([, y]) => y + CARD_H));
    element.style.width = `${width}px`;
    element.style.height = `${height}px`;
    if (!cards.length) element.append(emptyPlace());
    shown.forEach((card, offset) => {
      const index = first + offset;
      const drawn = cardElement(card);
      drawn.dataset.index = index;
      drawn.style.left = `${positions[offset][0]}px`;
      drawn.style.top = `${positions[offset][1]}px`;
      if (this.selected?.pile === slot.pile && index >= this.selected.index) {
        drawn.classList.add("selected");
      }
      if (placedUnder(slot.pile, cards, index)) drawn.classList.add("placed");
      if (this.toMove?.pile === slot.pile && index === cards.length - 1
        && (this.toMove.card === null || this.toMove.card === card)) {
        drawn.classList.add("to-move");
      }
      element.append(drawn);
    });
    if (spread === "none" && cards.length > 1) {
      element.classList.add("stacked");
      const count = document.createElement("span");
      count.className = "count";
      count.textContent = cards.length;
      element.append(count);
    }
    return element;
  }

  // The piles the picked-up cards (by default the selected ones) may go to.
  targets(from = this.selected) {
    if (!from) return new Set();
    const { pile, index } = from;
    const cards = this.cardsOf(pile);
    return new Set(transfersOf(this.legal, pile, cards[index], cards.length - index)
      .map((move) => move.to));
  }

  // -- the mouse ---------------------------------------------------------------------------

  pointerDown(event) {
    if (event.button !== 0 || this.view?.status !== "in_progress") return;
    document.querySelector(".chooser")?.remove();
    const pileElement = event.target.closest(".pile");
    if (!pileElement) {
      this.deselect();
      return;
    }
    event.preventDefault();
    const pile = pileElement.dataset.pile;
    const index = event.target.closest(".card")?.dataset.index;
    const from = { pile, index: index === undefined ? null : Number(index) };
    let drag = null;
    const follow = (moved) => {
      const distance = Math.hypot(moved.clientX - event.clientX, moved.clientY - event.clientY);
      if (!drag && distance > DRAG_THRESHOLD && this.canPick(from)) {
        drag = new Drag(pileElement, from.index, event, this.scale);
      }
      drag?.follow(moved);
    };
    const release = (up) => {
      window.removeEventListener("pointermove", follow);
      if (!drag) {
        this.click(from);
        return;
      }
      drag.end();
      const target = pileAt(up.clientX, up.clientY);
      if (target && (target !== pile || this.targets(from).has(pile))) this.attempt(from, target);
      else this.render();
    };
    window.addEventListener("pointermove", follow);
    window.addEventListener("pointerup", release, { once: true });
  }

  // With cards picked up, a click on a pile they may go to (their own, where a card is placed
  // under its own heap) or on another pile moves them; on the same card, puts them down.
  click(at) {
    const selected = this.selected;
    const now = performance.now();
    // A double tap: the second of two quick taps on a card the first one picked up (a tap
    // that moved cards there does not count).
    const tap = this.lastTap;
    this.lastTap = null;
    const again = tap && tap.pile === at.pile && tap.index === at.index
      && now - tap.time < DOUBLE_TAP_MS && at.index !== null;
    if (again && this.sendHome(at)) return;
    if (selected && (selected.pile !== at.pile || this.targets().has(at.pile))) {
      this.attempt(selected, at.pile);
    } else if (selected && (at.index === null || at.index === selected.index)) {
      this.deselect();
    } else if (this.canPick(at) && this.oneClick(at)) {
      // played at once: the only place a face-down card may go
    } else if (this.canPick(at)) {
      this.lastTap = { pile: at.pile, index: at.index, time: now };
      this.selected = at;
      this.render();
    } else if (at.pile === "stock") {
      this.onMove(this.stockAction());
    }
  }

  // A face-up card may be picked up; a face-down one only where a move takes it unseen (Hidden
  // Cards' reserve).
  canPick({ pile, index }) {
    if (index === null) return false;
    return this.cardsOf(pile)[index] !== null
      || this.legal.some((move) => move.from === pile && move.card === null);
  }

  // A double click (or tap) on a card: the move that takes it home, if there is one; where
  // the card has only one move (All Fours, Hidden Cards: under the heap of its value), that.
  sendHome(at) {
    const cards = this.cardsOf(at.pile);
    const moves = transfersOf(this.legal, at.pile, cards[at.index], cards.length - at.index);
    const home = moves.filter((move) => HOME.test(move.to));
    const chosen = home.length ? home : moves;
    if (chosen.length !== 1) return false;
    this.selected = null;
    this.lastTap = null;
    this.onMove(chosen[0].text);
    return true;
  }

  // A face-down card that may go to one place only (Hidden Cards' reserve): one click takes it.
  oneClick({ pile, index }) {
    const cards = this.cardsOf(pile);
    if (cards[index] !== null) return false;
    const moves = transfersOf(this.legal, pile, null, cards.length - index);
    if (moves.length !== 1) return false;
    this.onMove(moves[0].text);
    return true;
  }

  stockAction() {
    const actions = new Set(this.legal.map((move) => move.action).filter(Boolean));
    const allowed = ["turn", "redeal"].find((action) => actions.has(action));
    return allowed ?? (this.cardsOf("stock").length ? "turn" : "redeal");
  }

  deselect() {
    document.querySelector(".chooser")?.remove();
    if (!this.selected) return;
    this.selected = null;
    this.render();
  }

  attempt({ pile, index }, to) {
    const cards = this.cardsOf(pile);
    const [card, count] = [cards[index], cards.length - index];
    const allowed = transfersOf(this.legal, pile, card, count);
    const candidates = allowed.filter((move) => move.to === to);
    this.selected = null;
    this.render();
    if (candidates.length > 1) {
      this.choose(candidates, to);
      return;
    }
    const bottom = allowed.length > 0 && allowed.every((move) => move.bottom);
    this.onMove(candidates[0]?.text ?? moveText({ card, count, from: pile, to, bottom }));
  }

  // Two moves between the same piles (on top of the heap or under it): ask which.
  choose(candidates, to) {
    const chooser = document.createElement("div");
    chooser.className = "chooser";
    const rect = this.table.querySelector(`.pile[data-pile="${to}"]`).getBoundingClientRect();
    chooser.style.left = `${rect.left + window.scrollX}px`;
    chooser.style.top = `${rect.bottom + window.scrollY + 4}px`;
    for (const move of candidates) {
      const button = document.createElement("button");
      button.textContent = move.bottom ? `under ${this.names(to)}` : `on top of ${this.names(to)}`;
      button.title = move.text;
      button.addEventListener("click", () => {
        chooser.remove();
        this.onMove(move.text);
      });
      chooser.append(button);
    }
    document.body.append(chooser);
  }
}

// Where each card of a fan lies, from the pile's top-left corner: each card shows a strip of the
// one under it, wider when that one is face up; a long fan is squeezed.
function fanPositions(cards, spread) {
  const [dx, dy] = DIRECTIONS[spread] ?? [0, 0];
  const gaps = cards.slice(0, -1).map((card) => (card === null ? FAN_FACE_DOWN : FAN_FACE_UP));
  const length = gaps.reduce((sum, gap) => sum + gap, 0);
  const squeeze = length > FAN_LONGEST ? FAN_LONGEST / length : 1;
  const points = [[0, 0]];
  for (const gap of gaps) {
    const step = gap === FAN_FACE_UP ? Math.max(FAN_FACE_UP_MIN, gap * squeeze) : gap * squeeze;
    const [x, y] = points[points.length - 1];
    points.push([x + dx * step, y + dy * step]);
  }
  const [left, top] = [Math.min(...points.map(([x]) => x)), Math.min(...points.map(([, y]) => y))];
  return points.map(([x, y]) => [x - left, y - top]);
}

// The key of a card among those already counted: "7H", then "7H#2" for a second pack's.
function placeKey(counted, card) {
  let key = card;
  for (let copy = 2; counted.has(key); copy += 1) key = `${card}#${copy}`;
  return key;
}

// A card laid face up under a heap of its value (All Fours, Hidden Cards): the heap's bottom
// cards of the heap's own value.
function placedUnder(pile, cards, index) {
  const match = /^heap:(\d+)$/.exec(pile);
  if (!match) return false;
  const value = Number(match[1]);
  for (let i = 0; i <= index; i += 1) {
    const card = parseCard(cards[i]);
    if (!card || (RANKS[card.rank] ?? Number(card.rank)) !== value) return false;
  }
  return true;
}

function pileAt(x, y) {
  const element = document.elementFromPoint(x, y);
  return element?.closest(".slot")?.dataset.slot ?? null;
}

// The cards being dragged: copies that follow the pointer, the originals dimmed.
class Drag {
  constructor(pileElement, index, start, scale = 1) {
    this.originals = [...pileElement.querySelectorAll(".card")]
      .filter((card) => Number(card.dataset.index) >= index);
    const first = this.originals[0].getBoundingClientRect();
    this.grab = [start.clientX - first.left, start.clientY - first.top];
    this.ghost = document.createElement("div");
    this.ghost.className = "drag-ghost";
    this.ghost.style.transform = `scale(${scale})`;
    const [left, top] = [parseFloat(this.originals[0].style.left),
      parseFloat(this.originals[0].style.top)];
    for (const card of this.originals) {
      const copy = card.cloneNode(true);
      copy.style.left = `${parseFloat(card.style.left) - left}px`;
      copy.style.top = `${parseFloat(card.style.top) - top}px`;
      this.ghost.append(copy);
      card.classList.add("dragging");
    }
    document.body.append(this.ghost);
  }

  follow(event) {
    this.ghost.style.left = `${event.clientX - this.grab[0]}px`;
    this.ghost.style.top = `${event.clientY - this.grab[1]}px`;
  }

  end() {
    this.ghost.remove();
    for (const card of this.originals) card.classList.remove("dragging");
  }
}
