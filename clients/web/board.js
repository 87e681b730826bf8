// A player's board: any rule set's piles drawn as cards where its layout puts them (the grid of
// GET /api/games, refined by layouts.js), and moves made on it by click, drag and drop, touch or
// the keyboard.
//
// Click a card (it and the cards above it are picked up; the piles it may go to light up), then
// click a pile. Or drag the card onto a pile. A move the rules allow is sent as the server
// listed it; any other is sent as written, so the server says why it is refused. Clicking the
// stock turns a card (or redeals). On a touch screen a tap outside the table puts a lifted card
// down, and a tap on the card to move (Hidden Cards, All Fours) plays its only move. From the
// keyboard each pile is a button (one Tab stop: the arrows go from pile to pile as they lie on
// the table, Enter or Space picks up and puts down, Escape drops). Without `onMove` the board
// only shows (the replay viewer).
//
// The size: every pile is given its place on the table once, fanned piles room for several
// cards (layouts.js), and the table is scaled to fill the space the page leaves it when the
// deal is laid out: the width of `element`, and the height from its top to the bottom of the
// window less `--board-bottom-reserve` (a CSS length, read on `element`: a bar fixed at the
// bottom of a portrait screen). The scale then stays for the deal: a growing pile squeezes its
// fan, and no other pile moves. It is worked out again on a new deal, on a real resize (a new
// width, or a height changed by more than a tenth: not a phone's address bar sliding away), or
// when `layOut()` is called.
//
// For the page around it (room.js):
//   board.element   the table; a block that takes the width its container gives it.
//   board.actions   the board's own actions (Turn a card, Redeal, Begin afresh) as buttons
//                   (button.action[data-move]), kept up to date: place it in the race's controls.
//   board.fit()     lays the deal out if it is not yet (call once the element is in the page,
//                   and each time the page puts it back).
//   board.layOut()  lays it out again now (the space given to the board changed).
//   board.destroy() removes the listeners the board put on the window and the document.

import { cardElement, cardLabel, emptyPlace, parseCard } from "./cards.js";
import { refinement } from "./layouts.js";
import { cardWords, inWords, moveText, moveWords, parseMove, transfersOf } from "./moves.js";
import { pileName } from "./pile_names.js";

const CARD_W = 64;
const CARD_H = 90;
const DIRECTIONS = { "down": [0, 1], "right": [1, 0], "down-left": [-0.6, 0.8],
  "down-right": [0.6, 0.8] };
// How much of a card shows under the next one in a fan, in the table's pixels: face up, face
// down, and the least a long fan is squeezed to. On a touch screen, in the screen's pixels, at
// least TOUCH_FAN (a finger's width), squeezed to no less than TOUCH_FAN_LEAST.
const FAN_FACE_UP = 26;
const FAN_FACE_DOWN = 9;
const FAN_FACE_UP_LEAST = 16;
const TOUCH_FAN = 32;
const TOUCH_FAN_LEAST = 24;
const COARSE_POINTER = "(pointer: coarse)";
const DRAG_THRESHOLD = 5;
const DOUBLE_TAP_MS = 400;
const ROOM_FOR_SCALE = 1.08;
const SCALE_MAX = 3; // cards three times their drawn size on a large screen at most
const SCALE_MIN = 0.3;
const LEAST_HEIGHT = 0.4; // of the window, whatever is above the board
const RESIZE_HEIGHT = 0.1; // a height change smaller than this share keeps the scale
const HOME = /^(ace|king|foundation):/; // the foundations of the books that have them
const STEP_MS = 160; // one card's travel
const STAGGER_MS = 45; // between the cards the engine moved after yours, in turn
const RANKS = { A: 1, J: 11, Q: 12, K: 13 };
const ARROWS = { ArrowUp: [0, -1], ArrowDown: [0, 1], ArrowLeft: [-1, 0], ArrowRight: [1, 0] };

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
    this.focusPile = null;
    this.hasFocus = false;
    this.scale = null; // until the deal is laid out
    this.fan = fanSpacing(1, this.refine.fanRoom);
    this.highlight = new Set();
    // The table is drawn at its natural size, then scaled into `element`.
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
    this.actions = document.createElement("div");
    this.actions.className = "board-actions";
    this.listeners = [[window, "resize", () => this.resized()]];
    if (onMove) {
      this.table.classList.add("playable");
      this.table.addEventListener("pointerdown", (event) => this.pointerDown(event));
      this.table.addEventListener("keydown", (event) => this.key(event));
      this.table.addEventListener("focusin", () => {
        this.hasFocus = true;
      });
      this.table.addEventListener("focusout", (event) => {
        if (event.relatedTarget) this.hasFocus = this.table.contains(event.relatedTarget);
      });
      this.listeners.push([document, "pointerdown", (event) => this.pointerOutside(event)]);
    }
    for (const [target, type, listener] of this.listeners) target.addEventListener(type, listener);
  }

  destroy() {
    for (const [target, type, listener] of this.listeners) {
      target.removeEventListener(type, listener);
    }
    this.listeners = [];
  }

  // Draw a view (ViewModel); `highlight` names piles to mark (the replay's last move);
  // `animate` ({ from, move }) makes the cards that moved travel from where they were.
  show(view, { highlight = [], animate = null } = {}) {
    if (!this.view || view.moves < this.view.moves) this.scale = null; // a new deal
    const before = animate && this.scale !== null ? this.cardPlaces() : null;
    this.view = view;
    this.legal = view.legal_moves.map(parseMove);
    this.highlight = new Set(highlight);
    this.selected = null;
    this.showActions();
    if (this.scale !== null) {
      this.render();
    } else if (!this.layOut()) {
      this.render();
      requestAnimationFrame(() => this.fit()); // once the page has placed it
    }
    if (before) this.travel(before, animate.move);
  }

  // The board's own actions, for the page's controls: the legal ones, resign apart (the page
  // asks that one twice).
  showActions() {
    const playing = this.onMove && this.view.status === "in_progress";
    const actions = playing ? this.legal.filter((move) => move.action && move.action !== "resign")
      : [];
    const shown = actions.map((move) => move.text).join(" ");
    if (this.actions.dataset.shown === shown) return;
    this.actions.dataset.shown = shown;
    this.actions.replaceChildren(...actions.map((move) => {
      const button = document.createElement("button");
      button.className = "action";
      button.dataset.move = move.text;
      button.textContent = moveWords(move.text, this.names);
      button.addEventListener("click", () => this.onMove(move.text));
      return button;
    }));
  }

  // A refused move, beside the pile it came from, over the table (the layout does not move);
  // kept inside the part of the board the window shows (above a bar at its bottom).
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
      inWords(refusal.message, this.names));
    this.refusal.hidden = false;
    const pile = refusal.pile && this.table.querySelector(`.pile[data-pile="${refusal.pile}"]`);
    const box = this.element.getBoundingClientRect();
    const at = pile?.getBoundingClientRect() ?? box;
    const [width, height] = [this.refusal.offsetWidth, this.refusal.offsetHeight];
    const shownTop = Math.max(box.top, 0) - box.top;
    const shownBottom = Math.min(box.bottom, window.innerHeight - this.bottomReserve()) - box.top;
    let top = at.bottom - box.top + 6;
    if (top + height > shownBottom) top = at.top - box.top - height - 6;
    top = Math.max(shownTop, Math.min(top, shownBottom - height));
    this.refusal.style.left = `${Math.max(0, Math.min(at.left - box.left, box.width - width))}px`;
    this.refusal.style.top = `${top}px`;
  }

  // The space the board may fill: the element's width; from its top to the window's bottom,
  // less the page's bar there.
  available() {
    const top = this.element.getBoundingClientRect().top + window.scrollY;
    const height = Math.max(window.innerHeight - top - this.bottomReserve() - 4,
      window.innerHeight * LEAST_HEIGHT);
    return { width: this.element.clientWidth, height };
  }

  bottomReserve() {
    return parseFloat(getComputedStyle(this.element)
      .getPropertyValue("--board-bottom-reserve")) || 0;
  }

  // Lay the deal out: the fans' room and spacing, and the scale that fills the space given.
  // A fan given less room gives a shorter table and larger cards where the height is short
  // (a landscape screen): the room kept is the one that gives the largest cards, the most room
  // among nearly equal ones (less room for cards not ROOM_FOR_SCALE times larger is not worth
  // the squeezing). On a touch screen the spacing depends on the scale, which depends
  // on the spacing: a few rounds settle it. False if the element is not in the page yet.
  layOut() {
    if (!this.view || !this.element.isConnected) return false;
    const space = this.available();
    if (space.width <= 0) return false;
    let best = null;
    for (let gaps = this.refine.fanRoom; gaps >= this.refine.fanRoomLeast; gaps -= 1) {
      const tried = this.fitted(space, gaps);
      if (!best || tried.scale > best.scale * ROOM_FOR_SCALE) best = tried;
    }
    if (best.fan !== this.fan) this.fitted(space, best.gaps);
    const { scale, size } = best;
    this.scale = scale;
    this.laidOutIn = [window.innerWidth, window.innerHeight];
    this.table.style.transform = `scale(${scale})`;
    this.table.style.left = `${Math.max(0, (space.width - size[0] * scale) / 2)}px`;
    this.element.style.height = `${size[1] * scale}px`;
    this.element.dataset.scale = scale.toFixed(4);
    return true;
  }

  // The table drawn with fans given room for `gaps` strips, and the scale that fits it.
  fitted(space, gaps) {
    let scale = 1;
    let size = null;
    for (let round = 0; round < 4; round += 1) {
      this.fan = fanSpacing(scale, gaps);
      this.render();
      size = [this.table.offsetWidth, this.table.offsetHeight];
      const fitted = Math.max(SCALE_MIN, Math.min(SCALE_MAX, space.width / size[0],
        space.height / size[1]));
      const settled = Math.abs(fitted - scale) < 0.01;
      scale = fitted;
      if (settled) break;
    }
    return { gaps, scale, size, fan: this.fan };
  }

  // Also gives the focus back to the pile that had it, if the page took the board out and put
  // it back (which loses the focus).
  fit() {
    if (this.scale === null) this.layOut();
    if (this.hasFocus && this.element.isConnected && document.activeElement === document.body) {
      this.pileFor(this.focusPile)?.focus();
    }
  }

  // A real change of the window's size lays the deal out again.
  resized() {
    if (!this.laidOutIn) return;
    const [width, height] = this.laidOutIn;
    if (window.innerWidth === width
      && Math.abs(window.innerHeight - height) <= height * RESIZE_HEIGHT) return;
    this.layOut();
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
      // The way back in the card's own frame: turned with its pile, if its book turns it.
      const angle = this.refine.rotate[card.closest(".pile").dataset.pile] ?? 0;
      const [cos, sin] = [Math.cos((angle * Math.PI) / 180), Math.sin((angle * Math.PI) / 180)];
      goes.push({ card, dx: dx * cos + dy * sin, dy: dy * cos - dx * sin,
        first: card.dataset.card === moved });
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

  // Fan every pile out, squared ones included, to see each card (the deal is laid out again).
  setSpreadAll(spreadAll) {
    this.spreadAll = spreadAll;
    if (!this.view) return;
    this.scale = null;
    if (!this.layOut()) this.render();
  }

  cardsOf(pile) {
    return this.view.piles.find((p) => p.pile === pile)?.cards ?? [];
  }

  render() {
    document.querySelector(".chooser")?.remove();
    const focused = this.table.contains(document.activeElement);
    const layout = this.game.layout;
    const columns = Math.max(...layout.map((slot) => slot.col)) + 1;
    this.table.style.gridTemplateColumns = `repeat(${columns}, auto)`;
    this.table.dataset.status = this.view.status;
    this.table.dataset.moves = this.view.moves;
    this.toMove = this.cardToMove();
    if (!layout.some((slot) => slot.pile === this.focusPile)) {
      this.focusPile = this.toMove?.pile ?? layout[0].pile;
    }
    this.table.replaceChildren(...layout.map((slot) => this.slotElement(slot, columns)));
    if (focused) this.pileFor(this.focusPile)?.focus();
  }

  pileFor(pile) {
    return this.table.querySelector(`.pile[data-pile="${pile}"]`);
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
    // The place a pile takes on the table, the same whatever it holds: a card, with room for
    // its fan, turned if its book turns it.
    const [dx, dy] = DIRECTIONS[this.spreadOf(slot)] ?? [0, 0];
    const [width, height] = [CARD_W + Math.abs(dx) * this.fan.room,
      CARD_H + Math.abs(dy) * this.fan.room];
    const angle = this.refine.rotate[slot.pile] ?? 0;
    const radians = (angle * Math.PI) / 180;
    const [cos, sin] = [Math.abs(Math.cos(radians)), Math.abs(Math.sin(radians))];
    const [boxWidth, boxHeight] = [width * cos + height * sin, width * sin + height * cos];
    const place = document.createElement("div");
    place.className = "place";
    place.style.width = `${boxWidth}px`;
    place.style.height = `${boxHeight}px`;
    const pile = this.pileElement(slot);
    const [pileWidth, pileHeight] = [parseFloat(pile.style.width), parseFloat(pile.style.height)];
    if (angle) {
      pile.style.left = `${(boxWidth - pileWidth) / 2}px`;
      pile.style.top = `${(boxHeight - pileHeight) / 2}px`;
      pile.style.transform = `rotate(${angle}deg)`;
    } else {
      if (dx < 0) pile.style.left = `${boxWidth - pileWidth}px`;
      const bottom = this.refine.anchor[slot.pile] === "bottom";
      if (bottom) pile.style.top = `${boxHeight - pileHeight}px`;
    }
    place.append(pile);
    const label = document.createElement("div");
    label.className = "label";
    label.textContent = this.names(slot.pile).replace(/^the /, "");
    label.title = slot.pile;
    label.setAttribute("aria-hidden", "true"); // the pile says its name
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
    if (this.onMove) {
      element.tabIndex = slot.pile === this.focusPile ? 0 : -1;
      element.setAttribute("role", "button");
      element.setAttribute("aria-label", this.describe(slot.pile, cards));
    }
    if (this.highlight.has(slot.pile)) element.classList.add("last-move");
    if (this.targets().has(slot.pile)) element.classList.add("target");
    const spread = this.spreadOf(slot);
    const shown = spread === "none" ? cards.slice(-1) : cards;
    const first = cards.length - shown.length;
    const positions = fanPositions(shown, spread, this.fan);
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

  // A pile for a screen reader: "the 5 heap: 4 cards, the 9♦ on top; the lifted card may go
  // here".
  describe(pile, cards) {
    const top = cards.at(-1);
    const parts = [`${this.names(pile)}: ${cards.length ? `${cards.length} card`
      + `${cards.length === 1 ? "" : "s"}, ${top ? `the ${cardWords(top)} on top`
        : "face down"}` : "empty"}`];
    if (this.selected?.pile === pile) {
      parts.push(`lifted: the ${cardWords(cards[this.selected.index])}`
        + (this.selected.index < cards.length - 1 ? " and the cards above it" : ""));
    }
    if (this.targets().has(pile)) parts.push("the lifted cards may go here");
    return parts.join("; ");
  }

  // The piles the picked-up cards (by default the selected ones) may go to.
  targets(from = this.selected) {
    if (!from) return new Set();
    const { pile, index } = from;
    const cards = this.cardsOf(pile);
    return new Set(transfersOf(this.legal, pile, cards[index], cards.length - index)
      .map((move) => move.to));
  }

  // -- the keyboard ------------------------------------------------------------------------

  key(event) {
    const pile = event.target.closest?.(".pile")?.dataset.pile;
    if (!pile || event.ctrlKey || event.metaKey || event.altKey) return;
    if (ARROWS[event.key]) {
      const next = this.neighbour(pile, ...ARROWS[event.key]);
      if (next) {
        this.focusPile = next;
        for (const element of this.table.querySelectorAll(".pile")) {
          element.tabIndex = element.dataset.pile === next ? 0 : -1;
        }
        this.pileFor(next).focus();
      }
    } else if (event.key === "Enter" || event.key === " ") {
      this.focusPile = pile;
      this.press(pile);
    } else if (event.key === "Escape") {
      this.deselect();
    } else {
      return;
    }
    event.preventDefault();
    event.stopPropagation(); // the page's own keys (Space plays the only move) are not these
  }

  // The pile next to `pile` in a direction, as the layout places them: up and down to the
  // nearest row that has a pile, there the one nearest in column; left and right along the row.
  neighbour(pile, dx, dy) {
    const layout = this.game.layout;
    const from = layout.find((slot) => slot.pile === pile);
    const ahead = layout.filter((slot) => (dy ? (slot.row - from.row) * dy > 0
      : slot.row === from.row && (slot.col - from.col) * dx > 0));
    const distance = (slot) => (dy ? Math.abs(slot.row - from.row) * 100
      + Math.abs(slot.col - from.col) : Math.abs(slot.col - from.col));
    ahead.sort((a, b) => distance(a) - distance(b) || a.col - b.col);
    return ahead[0]?.pile ?? null;
  }

  // Enter on a pile: with nothing lifted, lift what may move from it (the stock turns); with
  // cards lifted, move them there (on their own pile, put them down).
  press(pile) {
    if (this.view?.status !== "in_progress") return;
    if (this.selected) {
      if (this.selected.pile === pile && !this.targets().has(pile)) this.deselect();
      else this.attempt(this.selected, pile);
      return;
    }
    const cards = this.cardsOf(pile);
    const movable = this.legal.find((move) => !move.action && move.from === pile);
    const index = movable ? cards.length - movable.count : cards.length - 1;
    if (index >= 0 && this.canPick({ pile, index })) {
      this.selected = { pile, index };
      this.render();
    } else if (pile === "stock") {
      this.onMove(this.stockAction());
    }
  }

  // -- the mouse and touch -----------------------------------------------------------------

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
    this.focusPile = pile;
    const index = event.target.closest(".card")?.dataset.index;
    const from = { pile, index: index === undefined ? null : Number(index) };
    let drag = null;
    const follow = (moved) => {
      const distance = Math.hypot(moved.clientX - event.clientX, moved.clientY - event.clientY);
      if (!drag && distance > DRAG_THRESHOLD && this.canPick(from)) {
        drag = new Drag(pileElement, from.index, event, this.scale ?? 1);
      }
      drag?.follow(moved);
    };
    const release = (up) => {
      window.removeEventListener("pointermove", follow);
      if (!drag) {
        this.click(from, event.pointerType === "touch");
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

  // A tap or click outside the table puts lifted cards down (the chooser of two moves aside).
  pointerOutside(event) {
    if (!this.selected || this.table.contains(event.target)
      || event.target.closest?.(".chooser")) return;
    this.deselect();
  }

  // With cards picked up, a click on a pile they may go to (their own, where a card is placed
  // under its own heap) or on another pile moves them; on the same card, puts them down. A tap
  // on the card to move plays its only move.
  click(at, touch = false) {
    const selected = this.selected;
    const now = performance.now();
    // A double tap: the second of two quick taps on the same card. It sends the card home if
    // it can go there; if not, a card the first tap put down stays down.
    const tap = this.lastTap;
    this.lastTap = null;
    const again = tap && tap.pile === at.pile && tap.index === at.index
      && now - tap.time < DOUBLE_TAP_MS && at.index !== null;
    if (again && (this.sendHome(at) || tap.dropped)) return;
    if (selected && (selected.pile !== at.pile || this.targets().has(at.pile))) {
      this.attempt(selected, at.pile);
    } else if (selected && (at.index === null || at.index === selected.index)) {
      this.deselect();
      this.lastTap = { pile: at.pile, index: at.index, time: now, dropped: true };
    } else if (this.canPick(at) && (this.oneClick(at) || (touch && this.playOnly(at)))) {
      // played at once: the only place a face-down card may go, or the card to move's
    } else if (this.canPick(at)) {
      this.lastTap = { pile: at.pile, index: at.index, time: now, dropped: false };
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

  // The card to move (Hidden Cards, All Fours), tapped: its only move.
  playOnly({ pile, index }) {
    const cards = this.cardsOf(pile);
    if (this.toMove?.pile !== pile || index !== cards.length - 1) return false;
    const moves = transfersOf(this.legal, pile, cards[index], 1);
    if (moves.length !== 1) return false;
    this.onMove(moves[0].text);
    return true;
  }

  stockAction() {
    const actions = new Set(this.legal.map((move) => move.action).filter(Boolean));
    const allowed = ["turn", "redeal"].find((action) => actions.has(action));
    return allowed ?? (this.cardsOf("stock").length ? "turn" : "redeal");
  }

  // Put lifted cards down (a click after this is not the second of a double click).
  deselect() {
    document.querySelector(".chooser")?.remove();
    this.lastTap = null;
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
    const rect = this.pileFor(to).getBoundingClientRect();
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
    chooser.querySelector("button").focus();
  }
}

// The spacing of fans for a deal laid out at `scale`: the natural strip of a face-up and a
// face-down card, the least a squeezed face-up strip keeps, and the room a fanned pile is given
// (`gaps` natural strips).
function fanSpacing(scale, gaps) {
  const touch = window.matchMedia?.(COARSE_POINTER).matches;
  const up = Math.max(FAN_FACE_UP, touch ? TOUCH_FAN / scale : 0);
  const least = Math.max(FAN_FACE_UP_LEAST, touch ? TOUCH_FAN_LEAST / scale : 0);
  return { up, down: FAN_FACE_DOWN, least: Math.min(least, up), room: gaps * up };
}

// Where each card of a fan lies, from the pile's top-left corner: each card shows a strip of the
// one under it, wider when that one is face up. A fan longer than its room is squeezed, its
// face-up strips down to `fan.least`; then, rather than cover the pile next to it, all its
// strips alike.
function fanPositions(cards, spread, fan) {
  const [dx, dy] = DIRECTIONS[spread] ?? [0, 0];
  const under = cards.slice(0, -1);
  const faceDown = under.filter((card) => card === null).length;
  const faceUp = under.length - faceDown;
  let [up, down] = [fan.up, fan.down];
  if (faceDown * down + faceUp * up > fan.room) {
    up = faceUp ? Math.max(fan.least, (fan.room - faceDown * down) / faceUp) : up;
    const squeeze = Math.min(1, fan.room / (faceDown * down + faceUp * up));
    [up, down] = [up * squeeze, down * squeeze];
  }
  const points = [[0, 0]];
  for (const card of under) {
    const step = card === null ? down : up;
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
