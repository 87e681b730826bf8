// A player's board: any rule set's piles drawn as cards where its layout puts them (the grid of
// GET /api/games, refined by layouts.js), and moves made on it by click or drag and drop.
//
// Click a card (it and the cards above it are picked up; the piles it may go to light up), then
// click a pile. Or drag the card onto a pile. A move the rules allow is sent as the server
// listed it; any other is sent as written, so the server says why it is refused. Clicking the
// stock turns a card (or redeals). Without `onMove` the board only shows (the replay viewer).

import { cardElement, cardLabel, emptyPlace } from "./cards.js";
import { refinement } from "./layouts.js";
import { moveText, parseMove, transfersOf } from "./moves.js";

const CARD_W = 64;
const CARD_H = 90;
const DIRECTIONS = { "down": [0, 1], "right": [1, 0], "down-left": [-0.6, 0.8],
  "down-right": [0.6, 0.8] };
const FAN_FACE_UP = 26; // how much of a face-up card shows under the next one, in pixels
const FAN_FACE_DOWN = 9;
const FAN_FACE_UP_MIN = 16; // a long fan is squeezed, down to this
const FAN_LONGEST = 320;
const DRAG_THRESHOLD = 5;

export class Board {
  constructor(game, { onMove = null } = {}) {
    this.game = game;
    this.refine = refinement(game.name);
    this.onMove = onMove;
    this.spreadAll = false;
    this.view = null;
    this.legal = [];
    this.selected = null;
    this.highlight = new Set();
    this.element = document.createElement("div");
    this.element.className = "board";
    this.element.dataset.ruleSet = game.name;
    if (onMove) {
      this.element.classList.add("playable");
      this.element.addEventListener("pointerdown", (event) => this.pointerDown(event));
    }
  }

  // Draw a view (ViewModel); `highlight` names piles to mark (the replay's last move).
  show(view, { highlight = [] } = {}) {
    this.view = view;
    this.legal = view.legal_moves.map(parseMove);
    this.highlight = new Set(highlight);
    this.selected = null;
    this.render();
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
    this.element.style.gridTemplateColumns = `repeat(${columns}, auto)`;
    this.element.dataset.status = this.view.status;
    this.element.dataset.moves = this.view.moves;
    this.element.replaceChildren(...layout.map((slot) => this.slotElement(slot, columns)));
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
    label.textContent = slot.label || slot.pile;
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
    element.title = `${slot.pile}: ${cards.length ? cards.map(cardLabel).join(" ") : "empty"}`;
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
    if (event.button !== 0) return;
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
        drag = new Drag(pileElement, from.index, event);
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
    if (selected && (selected.pile !== at.pile || this.targets().has(at.pile))) {
      this.attempt(selected, at.pile);
    } else if (selected && (at.index === null || at.index === selected.index)) {
      this.deselect();
    } else if (this.canPick(at)) {
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

  stockAction() {
    const actions = new Set(this.legal.map((move) => move.action).filter(Boolean));
    const allowed = ["turn", "redeal"].find((action) => actions.has(action));
    return allowed ?? (this.cardsOf("stock").length ? "turn" : "redeal");
  }

  deselect() {
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
    const rect = this.element.querySelector(`.pile[data-pile="${to}"]`).getBoundingClientRect();
    chooser.style.left = `${rect.left + window.scrollX}px`;
    chooser.style.top = `${rect.bottom + window.scrollY + 4}px`;
    for (const move of candidates) {
      const button = document.createElement("button");
      button.textContent = move.bottom ? `under ${to}` : `on top of ${to}`;
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

function pileAt(x, y) {
  const element = document.elementFromPoint(x, y);
  return element?.closest(".slot")?.dataset.slot ?? null;
}

// The cards being dragged: copies that follow the pointer, the originals dimmed.
class Drag {
  constructor(pileElement, index, start) {
    this.originals = [...pileElement.querySelectorAll(".card")]
      .filter((card) => Number(card.dataset.index) >= index);
    const first = this.originals[0].getBoundingClientRect();
    this.grab = [start.clientX - first.left, start.clientY - first.top];
    this.ghost = document.createElement("div");
    this.ghost.className = "drag-ghost";
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
