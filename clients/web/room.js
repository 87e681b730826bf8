// A room (#/room/CODE, or #/watch/CODE as a spectator): the seats and who is ready, the host's
// start button, the countdown, then your board, everyone's progress, and the finish panel.
//
// What the page knows is one state (room_state.js), changed only by `reduce` with the server's
// messages; this file sends requests, feeds the replies and events to the reducer and draws
// the state it returns. If the connection drops, net.js reconnects and says hello; this page
// then resumes the room from the last seq it saw (docs/protocol.md, "Reconnecting"). A reply
// that says `reconnect_to` (the room is held by another worker) moves the connection there and
// resumes on it.

import { Board } from "./board.js";
import { clock, eventsText, h, statusWord } from "./dom.js";
import { finishPanel } from "./finish.js";
import { leaveRoom, nameForm } from "./lobby.js";
import { identity } from "./net.js";
import { eventsAfter, inWords, moveWords, parseMove } from "./moves.js";
import { pileName } from "./pile_names.js";
import {
  counted, initialState, lowTime, mySeat, raceTime, reduce, startsByItself, timeLeft,
} from "./room_state.js";
import { seatStrip } from "./seats.js";
import { animationOn, setAnimation, setSounds, soundsOn } from "./settings.js";
import { play } from "./sounds.js";

const RESIGN_CONFIRM_MS = 4000;
const SEAT_KEPT_MS = 60_000; // docs/protocol.md, "Reconnecting"
const BACK_SHOWN_MS = 3000; // how long "Reconnected" stays
const DEAL_KEY = "patience-race.deal-number.";

// What the room says of its deal's winnability (the solver sees the hidden cards).
const WINNABLE = new Map([
  [true, "proved winnable (by the solver, which sees the hidden cards)"],
  [false, "none proved winnable was ready: an unproved deal"],
]);

export async function roomPage(main, route, context) {
  const watching = route.path.startsWith("watch/");
  const page = new RoomPage(route.params[0].toUpperCase(), watching, context);
  main.append(page.element);
  if (identity.get()?.name || watching) await page.enter();
  else page.askName();
  return () => page.leave();
}

class RoomPage {
  constructor(code, watching, context) {
    this.context = context;
    this.connection = context.connection;
    let dealNumber = null;
    try {
      dealNumber = sessionStorage.getItem(DEAL_KEY + code);
    } catch {
      // no storage: the header says "chosen" after a reload
    }
    this.state = initialState({ code, watching, me: identity.get()?.player_id ?? null,
      dealNumber });
    this.moving = false;
    this.board = null;
    this.drawnView = null;
    this.movesOpen = false;
    this.element = h("div", { class: "room" });
    this.unlisten = this.connection.listen((message) => this.receive(message));
    this.ticker = setInterval(() => this.tick(), 100);
  }

  get code() {
    return this.state.code;
  }

  // Every change of what the page knows goes through here.
  dispatch(message) {
    const before = this.state;
    this.state = reduce(this.state, message, { now: Date.now() });
    if (this.state === before) return;
    if (this.state.dealNumber !== before.dealNumber) {
      try {
        if (this.state.dealNumber === null) sessionStorage.removeItem(DEAL_KEY + this.code);
        else sessionStorage.setItem(DEAL_KEY + this.code, this.state.dealNumber);
      } catch {
        // no storage
      }
    }
    this.render(before);
    this.sound(before);
  }

  // A move of yours accepted, a move refused, the race over (when sounds are on); not what a
  // page opening on a room (a reload) learns at once.
  sound(before) {
    const { state } = this;
    if (!before.room) return;
    if (state.result && !before.result) play("finish");
    else if (state.refusal && state.refusal !== before.refusal) play("refusal");
    else if (state.lastMove && state.lastMove !== before.lastMove) play("move");
  }

  askName() {
    this.element.replaceChildren(h("section", {}, h("h2", {}, `Room ${this.code}`),
      h("p", {}, "Choose a name to join the race, or ",
        h("a", { href: `#/watch/${this.code}` }, "watch without one"), "."),
      nameForm(() => this.enter())));
  }

  async enter() {
    this.element.replaceChildren(h("p", {}, `Entering room ${this.code}…`));
    try {
      this.games = await this.context.games();
      const player = await this.connection.ready({ anonymous: this.state.watching });
      this.state = { ...this.state, me: player?.player_id ?? null };
      await leaveRoom(this.connection, this.code);
      await this.take(this.state.watching ? "spectate" : "join");
    } catch (error) {
      this.element.replaceChildren(h("section", {}, h("h2", {}, `Room ${this.code}`),
        h("p", { class: "problem", role: "alert" }, error.message),
        h("p", {}, h("a", { href: "#/" }, "Back to the lobby"))));
    }
  }

  // Join (or spectate); a race already under way or a full room can still be watched.
  async take(kind) {
    let room;
    try {
      room = await this.connection.request({ type: kind, code: this.code });
    } catch (error) {
      if (kind !== "join" || !["already_started", "room_full"].includes(error.code)) throw error;
      this.dispatch({ type: "watching", text: `${error.message}: you are watching.` });
      room = await this.connection.request({ type: "spectate", code: this.code });
    }
    this.connection.room = room.code;
    this.dispatch(room);
    await this.follow(room);
  }

  // Move to the worker that holds the room, and come back in there.
  async follow(reply) {
    if (reply.reconnect_to) await this.connection.moveTo(reply.reconnect_to, () => this.rejoin());
  }

  // Back in the room on the current connection: resume with what was missed, or watch again.
  async rejoin() {
    const request = this.state.watching ? { type: "spectate", code: this.code }
      : { type: "resume", code: this.code, last_seq: this.state.lastSeq };
    const reply = await this.connection.request(request);
    this.dispatch(reply);
    return reply;
  }

  async leave() {
    this.unlisten();
    clearInterval(this.ticker);
    clearTimeout(this.settling);
    document.removeEventListener("keydown", this.keys);
    this.board?.destroy();
    const racing = this.state.room?.phase === "racing" && !this.state.watching
      && this.state.view?.status === "in_progress";
    if (!racing) await leaveRoom(this.connection);
  }

  // -- what the server says ----------------------------------------------------------------

  receive(message) {
    if (message.type === "reconnected") {
      this.resume();
      return;
    }
    this.dispatch(message);
  }

  async resume() {
    this.followingRace = null; // a new connection: the live verdict is asked for again
    try {
      await this.follow(await this.rejoin());
    } catch {
      await this.take(this.state.watching ? "spectate" : "join").catch((error) => {
        this.dispatch({ type: "notice", text: error.message });
      });
    }
    this.dispatch({ type: "reconnected" });
    clearTimeout(this.settling);
    this.settling = setTimeout(() => this.dispatch({ type: "settled" }), BACK_SHOWN_MS);
  }

  // -- what the player does ----------------------------------------------------------------

  async send(request, text) {
    if (this.moving) return null;
    this.moving = true;
    try {
      const reply = await this.connection.request(request);
      if (reply.type === "move_ok") this.dispatch(reply);
      else if (this.state.refusal) this.dispatch({ type: "refused", move: null, message: null });
      // (a refusal stays until the next request succeeds)
      return reply;
    } catch (error) {
      this.dispatch({ type: "refused", move: text, message: error.message, from: request.from });
      return null;
    } finally {
      this.moving = false;
    }
  }

  move(text) {
    this.refusedAt = parseMove(text).from ?? null;
    return this.send({ type: "move", move: text }, text);
  }

  // Offer a rematch, accept the offer (true), or decline it (false).
  rematch(accept) {
    return this.send({ type: "rematch", accept }, "rematch");
  }

  // Practice alone on a chosen deal: the server's solver gives the next move of a winning line
  // (it sees the hidden cards), or says no win is possible any more, or does not know.
  hintable() {
    const { room, view } = this.state;
    return room.deal_kind === "number" && room.seats.length === 1
      && view?.status === "in_progress";
  }

  // Practising alone, the server says after each move whether a win is still possible (the
  // live verdict, as KPat shows it): asked for once per race, and again after a reconnect.
  followVerdicts() {
    const { room, view } = this.state;
    if (this.state.watching || !room || !view || !this.hintable()) return;
    const race = `${room.code}/${room.started_at_ms}`;
    if (this.followingRace === race) return;
    this.followingRace = race;
    this.connection.request({ type: "live_verdict" }).catch(() => {
      this.followingRace = null; // refused (the race changed meanwhile): asked again if it may
    });
  }

  async askHint() {
    if (this.moving) return;
    this.moving = true;
    this.dispatch({ type: "hint", message: "thinking…" });
    try {
      this.dispatch({ ...(await this.connection.request({ type: "hint" })), type: "hint" });
    } catch (error) {
      this.dispatch({ type: "hint", message: error.message });
    } finally {
      this.moving = false;
    }
  }

  // -- drawing -----------------------------------------------------------------------------

  game() {
    return this.games.get(this.state.room.rule_set);
  }

  // The page: a compact header, the connection's word, then the board with the side beside it
  // in landscape (your clock, the race's controls, the racers), or on a phone the racers above
  // the board and the controls in a bar fixed at the bottom (race.css). The result overlay
  // lies over the board.
  //
  // Everything but the board is redrawn on every change; the board (with a card you may have
  // picked up) only when your own game changed.
  render(before = null) {
    if (!this.state.room) return;
    if (!this.parts) {
      this.parts = { header: h("div", { class: "head-area" }),
        notice: h("div", { class: "notice-area" }), finish: h("div", { class: "finish-area" }),
        seats: h("div", { class: "seats-area" }), race: h("div", { class: "race-area" }),
        controls: h("div", { class: "control-bar" }), settings: h("div", { class: "settings" }) };
      const { header, notice, finish, seats, race, controls, settings } = this.parts;
      this.element.replaceChildren(header, notice, h("div", { class: "room-body" }, race,
        h("aside", { class: "side" }, controls, seats, settings)), finish);
      this.keys = (event) => this.key(event);
      document.addEventListener("keydown", this.keys);
    }
    const { state } = this;
    this.parts.header.replaceChildren(this.header());
    this.parts.notice.replaceChildren(this.notice());
    this.parts.seats.replaceChildren(seatStrip(state), this.lobbyControls() ?? "");
    this.drawFinish();
    this.element.classList.toggle("racing", Boolean(state.view) && !state.watching);
    // Another racer's progress changes the seats only: the race panel (and a focused button
    // in it, for a player at the keyboard) stays as it is.
    const raceChanged = !before || !before.room || ["view", "hint", "verdict", "refusal",
      "watching", "finished", "me", "log"].some((key) => before[key] !== state[key])
      || before.room.phase !== state.room.phase || before.room.rule_set !== state.room.rule_set;
    if (raceChanged) {
      this.parts.race.replaceChildren(this.racePanel(before));
      this.parts.controls.replaceChildren(this.controlBar() ?? "");
      this.parts.settings.replaceChildren(this.settings() ?? "");
    }
    this.followVerdicts();
    this.board?.fit();
    this.tick();
    if (state.result && !before?.result) {
      this.checkSeed();
      // The player's next step, at hand: Rematch (or Accept), not a dozen Tabs away.
      this.parts.finish.querySelector(".finish-actions button, .finish-actions a")?.focus();
    }
  }

  // The results, redrawn with the button the player was on still focused.
  drawFinish() {
    const area = this.parts.finish;
    const focused = area.contains(document.activeElement) && document.activeElement.className;
    area.replaceChildren(finishPanel(this.state, {
      rematch: (accept) => this.rematch(accept), dismiss: () => this.dispatch({ type: "dismiss" }),
    }, this.seedCheck) ?? "");
    if (focused) area.querySelector(`.${focused.trim().split(/\s+/).join(".")}`)?.focus();
  }

  // One line on a phone: the game, the code, the deal, and the invite to share (a quick room's
  // seats are for the players matched into it: its link is to watch).
  header() {
    const { room, dealNumber } = this.state;
    const game = this.game();
    const joining = room.phase === "lobby" && !startsByItself(this.state);
    const link = `${location.origin}/#/${joining ? "room" : "watch"}/${room.code}`;
    const facts = [
      room.quick ? `quick race, ${room.quick}` : null,
      room.deal_kind === "number" ? `deal ${dealNumber ?? "chosen"}`
        : room.deal_kind === "daily" ? "today's daily deal" : "a secret deal",
      WINNABLE.get(room.winnable) ?? null,
      `${room.seats.length} of ${room.seats_max} seats`,
      room.time_limit_s ? `time limit ${clock(room.time_limit_s * 1000)}` : null,
      room.public ? "public" : null,
    ].filter(Boolean).join(" · ");
    return h("header", { class: "room-head" },
      h("h2", {}, game.title, " ", h("span", { class: "code", "data-code": room.code },
        room.code), " ", h("a", { class: "rules-link", href: game.rules_url
          ?? `/rules/${game.name}`, target: "_blank", rel: "noopener" }, "rules")),
      shareLine(link, joining),
      h("p", { class: "facts" }, facts, " · ", h("span", { class: "phase" }, room.phase)));
  }

  // The connection, said plainly: lost (a racer's seat is kept a while), then back.
  notice() {
    const { state } = this;
    const lines = [];
    const racer = !state.watching && mySeat(state);
    if (state.lost) {
      lines.push(h("p", { class: "notice connection", role: "alert" },
        "Connection lost – reconnecting…",
        racer ? [" Your seat is kept for ", h("span", { class: "seat-kept" },
          clock(SEAT_KEPT_MS)), "."] : null));
    } else if (state.back) {
      lines.push(h("p", { class: "notice connection back", role: "status" }, "Reconnected"));
    } else if (state.notice) {
      lines.push(h("p", { class: "notice" }, state.notice));
    }
    if (state.room.phase === "lobby") {
      lines.push(h("p", { class: "quiet" }, startsByItself(state)
        ? "A quick race: the countdown begins by itself once every racer matched is here."
        : state.watching ? "Waiting for the racers to get ready."
          : "When everyone is ready (or the host starts), a short countdown begins."));
    }
    if (state.startsAtMs !== null) {
      lines.push(h("p", { class: "countdown" }, "Starting in ",
        h("span", { class: "seconds" }, ""), "…"));
    }
    return h("div", { class: "banner" }, lines);
  }

  // In the lobby: Ready, and the host's Start now (a quick room starts by itself).
  lobbyControls() {
    const { room } = this.state;
    const me = mySeat(this.state);
    if (!me || room.phase !== "lobby" || startsByItself(this.state)) return null;
    const ready = () => this.send({ type: "ready", ready: !me.ready }, "ready");
    return h("div", { class: "lobby-controls" },
      h("button", { class: "primary ready-button", onclick: ready },
        me.ready ? "Not ready" : "Ready"),
      me.player_id === room.host ? h("button", { class: "start-button", onclick: () =>
        this.send({ type: "start" }, "start") }, "Start now") : null);
  }

  // The board and what is said about it: the hint, the notes, the last moves, the list of
  // moves you can make.
  racePanel(before) {
    const { state } = this;
    if (state.watching) {
      return h("section", { class: "race watching" },
        h("p", {}, "You are watching: you see each racer's progress, never their cards. ",
          "A live board would let a racer look at the shared deal from a second tab; ",
          "after the race, every board is in the replay."),
        state.finished?.seed ? h("p", {}, h("a", { class: "replay-link",
          href: `#/replay/${state.finished.race_id}` }, "Watch the replay")) : null);
    }
    if (!state.view) return h("section", { class: "race" });
    const game = this.game();
    if (!this.board || this.board.game !== game) {
      this.board?.destroy();
      this.board = new Board(game, { onMove: (text) => this.move(text),
        names: (pile) => pileName(game.name, pile) });
      this.drawnView = null;
    }
    const view = state.view;
    const hint = this.shownHint();
    if (view !== this.drawnView || hint !== this.drawnHint) {
      this.drawnHint = hint;
      const hinted = hint?.move ? parseMove(hint.move) : null;
      const animate = before?.view && before.view !== view && animationOn()
        ? { from: before.view, move: state.lastMove } : null;
      this.board.show(view, { highlight: hinted && !hinted.action ? [hinted.from, hinted.to]
        : [], animate });
      this.drawnView = view;
    }
    this.board.showRefusal(state.refusal && { ...state.refusal, pile: this.refusedAt });
    const name = (pile) => pileName(game.name, pile);
    const topOf = (pile) => view.piles.find((p) => p.pile === pile)?.cards.at(-1);
    const transfers = view.legal_moves.filter((move) => move.includes(" -> "));
    const details = h("details", { class: "legal", open: this.movesOpen, ontoggle: () => {
      this.movesOpen = details.open;
    } }, h("summary", {}, `Moves you can make (${transfers.length})`,
      h("span", { class: "keyboard-tip" }, " — keys: ", h("kbd", {}, "Space"),
        " plays the only one, ", h("kbd", {}, "1"), "–", h("kbd", {}, "9"), " choose")),
    h("ol", {}, transfers.map((move, index) => h("li", {}, h("button", { class: "move",
      "data-move": move, title: move, onclick: () => this.move(move) },
    index < 9 ? h("kbd", { class: "keyboard-tip" }, String(index + 1)) : null, " ",
    moveWords(move, name, topOf))))));
    return h("section", { class: `race ${this.playing() ? "" : "over"}` },
      this.board.element,
      hint ? h("p", { class: "hint", role: "status", "data-hint-move": hint.move },
        h("strong", {}, "Hint: "), inWords(hint.message, name),
        hint.knowledge ? h("span", { class: "quiet" }, ` (${hint.knowledge})`) : null) : null,
      h("div", { class: "under-board" },
        view.notes.length ? h("ul", { class: "notes" }, view.notes.map((note) => h("li", {},
          inWords(note, name)))) : null,
        this.logPanel(name)),
      this.playing() ? details : null);
  }

  shownHint() {
    const { hint, view } = this.state;
    return hint?.after_moves === view.moves || hint?.after_moves === undefined ? hint : null;
  }

  playing() {
    return this.state.view?.status === "in_progress" && !this.outOfTime();
  }

  // Your clock, large, your cards home, and the race's controls: the board's actions (turn,
  // redeal), Resign, Hint. Beside the board, or the bar at the bottom of a phone.
  controlBar() {
    const { state } = this;
    const view = state.view;
    if (state.watching || !view) return null;
    const playing = this.playing();
    return h("section", { class: "race-controls", "aria-label": "your race" },
      h("div", { class: "race-status" },
        h("span", { class: "clock", "data-clock-for": state.me }, ""),
        h("span", { class: "mine" }, `${view.on_foundations}/${view.total} home`,
          h("span", { class: "moves" }, ` · ${counted(view.moves, "move")}`), " · ",
          h("span", { class: `status ${view.status}` }, statusWord(view.status))),
        this.hintable() ? this.verdictLine(view) : null),
      h("div", { class: "controls" },
        playing ? this.board.actions : null,
        playing && this.hintable() ? h("button", { class: "hint-button", title: "the next "
          + "move of a winning line, from the solver, which sees the hidden cards",
        onclick: () => this.askHint() }, "Hint") : null,
        playing ? this.resignButton() : null));
  }

  // How the board behaves, and the sounds.
  settings() {
    if (this.state.watching || !this.state.view) return null;
    const spread = h("input", { type: "checkbox", checked: this.board.spreadAll,
      onchange: (event) => this.board.setSpreadAll(event.target.checked) });
    const motion = h("input", { type: "checkbox", checked: animationOn(),
      onchange: (event) => setAnimation(event.target.checked) });
    const sounds = h("input", { type: "checkbox", class: "sounds", checked: soundsOn(),
      onchange: (event) => setSounds(event.target.checked) });
    return h("div", { class: "quiet" }, h("label", {}, spread, " show whole piles"),
      h("label", {}, motion, " animate moves"), h("label", {}, sounds, " sounds"));
  }

  verdictLine(view) {
    const verdict = this.state.verdict?.after_moves === view.moves ? this.state.verdict : null;
    return h("span", { class: `live-verdict ${verdict ? verdict.result : "searching"}`,
      role: "status", "data-result": verdict?.result ?? "searching",
      title: "the solver's word on your position, after each move (it sees the hidden cards: "
        + "a win for someone who knew them)" }, "solver: ",
    verdict ? verdict.message : "thinking…");
  }

  // The last moves and what the engine did after each, newest first, short.
  logPanel(name) {
    const log = this.state.log;
    if (!log.length) return null;
    return h("details", { class: "log", open: true }, h("summary", {}, "What happened"),
      h("ol", { class: "events", reversed: true }, log.slice(-4).reverse().map((entry) =>
        h("li", {}, h("span", { class: "move-words", title: entry.move },
          moveWords(entry.move, name)), eventsAfter(entry.move, entry.events).length
          ? h("span", { class: "quiet" },
            ` — ${inWords(eventsText(eventsAfter(entry.move, entry.events), 4), name)}`)
          : null))));
  }

  resignButton() {
    const button = h("button", { class: "resign", onclick: () => {
      if (button.dataset.armed) {
        this.send({ type: "resign" }, "resign");
        return;
      }
      button.dataset.armed = "yes";
      button.textContent = "Really resign?";
      setTimeout(() => {
        delete button.dataset.armed;
        button.textContent = "Resign";
      }, RESIGN_CONFIRM_MS);
    } }, "Resign");
    return button;
  }

  outOfTime() {
    const left = timeLeft(this.state, this.state.me, Date.now());
    return left !== null && left <= 0;
  }

  // The revealed seed against the commitment announced at the start (shown in the results).
  async checkSeed() {
    const { result, commitment } = this.state;
    if (!result?.seed) return;
    this.seedCheck = null;
    this.seedCheck = await checkCommitment(result.seed, commitment);
    const shown = this.element.querySelector(".commitment-check");
    if (shown) shown.textContent = this.seedCheck;
  }

  // The keyboard: Space or Enter plays the only move there is; 1-9 the move of that number
  // in the list; Escape puts a picked card down.
  key(event) {
    const view = this.state.view;
    if (!view || view.status !== "in_progress" || this.state.watching) return;
    if (event.target.closest?.("input, select, textarea")) return;
    if (event.key === "Escape") {
      this.board?.deselect();
      return;
    }
    const playable = view.legal_moves.filter((move) => move !== "resign");
    if ((event.key === " " || event.key === "Enter") && playable.length === 1
      && !event.target.closest?.("button, a, summary")) {
      event.preventDefault();
      this.move(playable[0]);
      return;
    }
    const transfers = playable.filter((move) => move.includes(" -> "));
    if (/^[1-9]$/.test(event.key) && !event.ctrlKey && !event.metaKey && !event.altKey) {
      const chosen = transfers[Number(event.key) - 1];
      if (chosen) {
        event.preventDefault();
        this.move(chosen);
      }
    }
  }

  // Ten times a second: the countdown, the racers' clocks, the seat kept while away.
  tick() {
    const { state } = this;
    const now = Date.now();
    const seconds = this.element.querySelector(".countdown .seconds");
    if (seconds && state.startsAtMs !== null) {
      seconds.textContent = Math.max(0, (state.startsAtMs - now) / 1000).toFixed(1);
    }
    const kept = this.element.querySelector(".seat-kept");
    if (kept && state.lostAt !== null) {
      kept.textContent = clock(SEAT_KEPT_MS - (now - state.lostAt));
    }
    for (const shown of this.element.querySelectorAll("[data-clock-for]")) {
      const player = shown.dataset.clockFor;
      const elapsed = raceTime(state, player, now);
      if (elapsed === null) {
        shown.textContent = "";
        continue;
      }
      const left = timeLeft(state, player, now);
      const running = state.stoppedAt[player] === undefined && !state.finished;
      // A racer's clock in the strip has room for one time: the time left, in a race with a
      // limit; yours says both, the time left smaller.
      if (left === null || !running) shown.textContent = clock(elapsed);
      else if (shown.classList.contains("seat-clock")) shown.textContent = clock(left);
      else {
        shown.replaceChildren(clock(elapsed), h("small", { class: "left" },
          ` ${clock(left)} left`));
      }
      shown.classList.toggle("low", lowTime(state, player, now));
      shown.classList.toggle("stopped", !running);
    }
    if (!state.watching && state.view?.status === "in_progress" && this.outOfTime()
      && !this.element.querySelector(".race.over")) {
      this.parts?.race.replaceChildren(this.racePanel(null));
      this.parts?.controls.replaceChildren(this.controlBar() ?? "");
    }
  }
}

async function checkCommitment(seed, commitment) {
  if (!commitment) return "";
  if (!crypto.subtle) return "(this page cannot check the commitment: not a secure context)";
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(seed));
  const hex = [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, "0")).join("");
  return hex === commitment
    ? "✓ Its SHA-256 matches the commitment announced at the start: the deal was fixed "
      + "before the race."
    : `✗ Its SHA-256 ${hex} does not match the commitment ${commitment}!`;
}

// The room's link and a button to pass it on: the system's share sheet where the browser has
// one (Web Share API: phones, mostly), else a copy to the clipboard. The link itself shows on
// wider screens.
function shareLine(link, joining) {
  const input = h("input", { class: "share", readonly: true, value: link,
    "aria-label": joining ? "link to join" : "link to watch" });
  const label = navigator.share ? "Share link" : "Copy link";
  const button = h("button", { class: "share-button", onclick: async () => {
    try {
      if (navigator.share) {
        await navigator.share({ title: "patience-race", text: joining ? "Race me at patience"
          : "Watch this patience race", url: link });
        return;
      }
      await navigator.clipboard.writeText(link);
    } catch (error) {
      if (error?.name === "AbortError") return; // the share sheet closed without sharing
      input.select();
      document.execCommand("copy");
    }
    button.textContent = "Copied";
    setTimeout(() => {
      button.textContent = label;
    }, 2000);
  } }, label);
  return h("p", { class: "share-line" }, h("span", { class: "share-label" },
    joining ? "Invite: " : "Let friends watch: "), input, button);
}
