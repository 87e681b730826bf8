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
import { leaveRoom, nameForm } from "./lobby.js";
import { identity } from "./net.js";
import { inWords, moveWords, parseMove } from "./moves.js";
import { pileName } from "./pile_names.js";
import {
  finishHeadline, initialState, lowTime, myGameOver, mySeat, raceTime, ratingText, reduce,
  timeLeft,
} from "./room_state.js";
import { animationOn, setAnimation } from "./settings.js";

const RESIGN_CONFIRM_MS = 4000;
const SEAT_KEPT_MS = 60_000; // docs/protocol.md, "Reconnecting"
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

  rematch() {
    return this.send({ type: "rematch" }, "rematch");
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

  // Everything but the board is redrawn on every change; the board (with a card you may have
  // picked up) only when your own game changed.
  render(before = null) {
    if (!this.state.room) return;
    if (!this.parts) {
      this.parts = { header: h("div"), notice: h("div", { class: "notice-area" }),
        finish: h("div", { class: "finish-area" }), seats: h("div", { class: "seats-area" }),
        race: h("div", { class: "race-area" }) };
      const { header, notice, finish, seats, race } = this.parts;
      this.element.replaceChildren(header, notice, finish,
        h("div", { class: "room-body" }, seats, race));
      this.keys = (event) => this.key(event);
      document.addEventListener("keydown", this.keys);
    }
    const { state } = this;
    this.parts.header.replaceChildren(this.header());
    this.parts.notice.replaceChildren(this.notice());
    this.parts.finish.replaceChildren(this.finishPanel() ?? "");
    this.parts.seats.replaceChildren(this.seats());
    // Another racer's progress changes the seats only: the race panel (and a focused button
    // in it, for a player at the keyboard) stays as it is.
    const raceChanged = !before || !before.room || ["view", "hint", "verdict", "refusal",
      "watching", "finished", "me", "log"].some((key) => before[key] !== state[key])
      || before.room.phase !== state.room.phase || before.room.rule_set !== state.room.rule_set;
    if (raceChanged) this.parts.race.replaceChildren(this.racePanel(before));
    this.followVerdicts();
    this.board?.fit();
    this.tick();
    if (state.finished && !before?.finished) this.checkSeed();
  }

  header() {
    const { room, dealNumber } = this.state;
    const game = this.game();
    const joining = room.phase === "lobby";
    const link = `${location.origin}/#/${joining ? "room" : "watch"}/${room.code}`;
    const share = h("input", { class: "share", readonly: true, value: link,
      "aria-label": joining ? "link to join" : "link to watch" });
    const facts = [
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
      h("p", { class: "facts" }, facts, " · ", h("span", { class: "phase" }, room.phase)),
      h("p", { class: "share-line" }, joining ? "Invite friends: " : "Let friends watch: ", share,
        h("button", { onclick: () => copy(share) }, "Copy link")));
  }

  notice() {
    const { state } = this;
    const lines = [];
    if (state.lost) {
      lines.push(h("p", { class: "notice connection", role: "alert" },
        "The connection dropped: reconnecting… your seat is kept for ",
        h("span", { class: "seat-kept" }, clock(SEAT_KEPT_MS)), "."));
    } else if (state.notice) {
      lines.push(h("p", { class: "notice" }, state.notice));
    }
    if (state.room.phase === "lobby") {
      lines.push(h("p", { class: "quiet" }, state.watching
        ? "Waiting for the racers to get ready."
        : "When everyone is ready (or the host starts), a short countdown begins."));
    }
    if (state.startsAtMs !== null) {
      lines.push(h("p", { class: "countdown" }, "Starting in ",
        h("span", { class: "seconds" }, ""), "…"));
    }
    return h("div", { class: "banner" }, lines);
  }

  seats() {
    const { state } = this;
    const { room } = state;
    const me = mySeat(state);
    const lobby = room.phase === "lobby";
    const rows = room.seats.map((seat) => {
      const share = seat.total ? (100 * seat.on_foundations) / seat.total : 0;
      return h("li", { class: `seat ${seat === me ? "mine" : ""}`, "data-player": seat.name },
        h("div", { class: "seat-name" },
          h("span", { class: `dot ${seat.connected ? "on" : "off"}`,
            title: seat.connected ? "connected" : "disconnected" }),
          h("span", { class: "who" }, seat.name),
          seat.player_id === room.host ? h("span", { class: "tag" }, "host") : null,
          lobby ? h("span", { class: `ready ${seat.ready ? "yes" : "no"}` },
            seat.ready ? "✓ ready" : "not ready")
            : h("span", { class: "seat-clock", "data-clock-for": seat.player_id }, "")),
        lobby ? null : h("div", { class: "bar", role: "progressbar", "aria-valuemin": 0,
          "aria-valuemax": seat.total || 52, "aria-valuenow": seat.on_foundations,
          "aria-label": `${seat.name}: cards home` },
        h("div", { class: "fill", style: `width: ${share}%` })),
        lobby ? null : h("div", { class: "seat-progress" },
          `${seat.on_foundations}/${seat.total} home · ${seat.moves} moves · `,
          h("span", { class: `status ${seat.status}` }, statusWord(seat.status))));
    });
    const controls = [];
    if (me && lobby) {
      const ready = () => this.send({ type: "ready", ready: !me.ready }, "ready");
      controls.push(h("button", { class: "primary ready-button", onclick: ready },
        me.ready ? "Not ready" : "Ready"));
      if (me.player_id === room.host) {
        controls.push(h("button", { class: "start-button", onclick: () =>
          this.send({ type: "start" }, "start") }, "Start now"));
      }
    }
    return h("aside", { class: "seats" }, h("h3", {}, "Racers"), h("ul", {}, rows),
      room.spectators ? h("p", { class: "quiet" }, `${room.spectators} watching`) : null,
      controls);
  }

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
    const hint = state.hint?.after_moves === view.moves || state.hint?.after_moves === undefined
      ? state.hint : null;
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
    const playing = view.status === "in_progress" && !this.outOfTime();
    const spread = h("input", { type: "checkbox", checked: this.board.spreadAll,
      onchange: (event) => this.board.setSpreadAll(event.target.checked) });
    const motion = h("input", { type: "checkbox", checked: animationOn(),
      onchange: (event) => setAnimation(event.target.checked) });
    const details = h("details", { class: "legal", open: this.movesOpen, ontoggle: () => {
      this.movesOpen = details.open;
    } }, h("summary", {}, `Moves you can make (${transfers.length})`,
      h("span", { class: "keyboard-tip" }, " — keys: ", h("kbd", {}, "Space"),
        " plays the only one, ", h("kbd", {}, "1"), "–", h("kbd", {}, "9"), " choose")),
    h("ol", {}, transfers.map((move, index) => h("li", {}, h("button", { class: "move",
      "data-move": move, title: move, onclick: () => this.move(move) },
    index < 9 ? h("kbd", { class: "keyboard-tip" }, String(index + 1)) : null, " ",
    moveWords(move, name, topOf))))));
    return h("section", { class: `race ${playing ? "" : "over"}` }, this.board.element,
      h("div", { class: "race-side" }, h("div", { class: "race-status" },
        h("span", { class: "clock", "data-clock-for": state.me }, ""),
        h("span", { class: "mine" }, `${view.on_foundations}/${view.total} cards home`,
          ` · ${view.moves} moves · `,
          h("span", { class: `status ${view.status}` }, statusWord(view.status))),
        this.hintable() ? this.verdictLine(view) : null),
      hint ? h("p", { class: "hint", role: "status", "data-hint-move": hint.move },
        h("strong", {}, "Hint: "),
        inWords(hint.message, name),
        hint.knowledge ? h("span", { class: "quiet" }, ` (${hint.knowledge})`) : null) : null,
      h("div", { class: "controls" },
        playing ? this.board.actions : null,
        playing ? this.resignButton() : null,
        this.hintable() ? h("button", { class: "hint-button", title: "the next move of a " +
          "winning line, from the solver, which sees the hidden cards",
          onclick: () => this.askHint() }, "Hint") : null,
        h("label", { class: "quiet" }, spread, " show whole piles"),
        h("label", { class: "quiet" }, motion, " animate moves")),
      h("div", { class: "under-board" },
        view.notes.length ? h("ul", { class: "notes" }, view.notes.map((note) => h("li", {},
          inWords(note, name)))) : null,
        this.logPanel(name)),
      playing ? details : null));
  }

  // The live verdict on your position: the solver's word once searched, "thinking" meanwhile.
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
          moveWords(entry.move, name)), entry.events.length
          ? h("span", { class: "quiet" }, ` — ${inWords(eventsText(entry.events, 4), name)}`)
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

  // At the top once your game is over (or, for a spectator, the race): the headline, the
  // ranking with the seed check, Rematch and the replay.
  finishPanel() {
    const { state } = this;
    const over = state.finished || (!state.watching && myGameOver(state));
    if (!over) return null;
    const result = state.finished;
    const headline = h("h2", { class: "finish-headline", role: "status" },
      finishHeadline(state, clock));
    if (!result) return h("section", { class: "finish waiting" }, headline);
    const rated = result.ranking.some((entry) => entry.rating);
    const seat = mySeat(state);
    return h("section", { class: "finish", "aria-label": "results" }, headline,
      h("div", { class: "finish-actions" },
        seat && state.room.deal_kind !== "daily" ? h("button", { class: "primary rematch",
          onclick: () => this.rematch() }, "Rematch") : null,
        result.seed === null ? null : h("a", { class: "button replay-link",
          href: `#/replay/${result.race_id}` }, "Watch the replay"),
        h("a", { href: `#/boards/${state.room.rule_set}` }, "Leaderboards"),
        h("a", { href: `#/ratings/${state.room.rule_set}` }, "Ratings"),
        h("a", { href: "#/" }, "Lobby")),
      h("div", { class: "results" }, h("table", { class: "ranking" },
        h("thead", {}, h("tr", {}, ["#", "racer", "result", "time", "cards home", "moves",
          rated ? "rating" : null].filter(Boolean).map((title) => h("th", {}, title)))),
        h("tbody", {}, result.ranking.map((entry) => h("tr", {
          class: entry.player_id === state.me ? "mine" : "" },
        h("td", {}, entry.rank), h("td", {}, entry.name), h("td", {}, statusWord(entry.status)),
        h("td", {}, clock(entry.time_ms)), h("td", {}, entry.on_foundations),
        h("td", {}, entry.moves), rated ? h("td", { class: "rating" },
          ratingText(entry.rating)) : null))))),
      h("p", { class: "seed" }, result.seed === null
        ? "The deal stays secret until the end of its day."
        : ["The deal was seed ", h("code", {}, result.seed), ". ",
          h("span", { class: "commitment-check" }, this.seedCheck ?? "checking…")]));
  }

  async checkSeed() {
    const { finished, commitment } = this.state;
    if (!finished?.seed) return;
    this.seedCheck = null;
    this.seedCheck = await checkCommitment(finished.seed, commitment);
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
    if (kept && state.lostAt !== null) kept.textContent = clock(SEAT_KEPT_MS - (now - state.lostAt));
    for (const shown of this.element.querySelectorAll("[data-clock-for]")) {
      const player = shown.dataset.clockFor;
      const elapsed = raceTime(state, player, now);
      if (elapsed === null) {
        shown.textContent = "";
        continue;
      }
      const left = timeLeft(state, player, now);
      const running = state.stoppedAt[player] === undefined && !state.finished;
      shown.textContent = left !== null && running
        ? `${clock(elapsed)} (${clock(left)} left)` : clock(elapsed);
      shown.classList.toggle("low", lowTime(state, player, now));
      shown.classList.toggle("stopped", !running);
    }
    if (!state.watching && state.view?.status === "in_progress" && this.outOfTime()
      && !this.element.querySelector(".race.over")) {
      this.parts?.race.replaceChildren(this.racePanel(null));
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

function copy(input) {
  input.select();
  navigator.clipboard?.writeText(input.value).catch(() => document.execCommand("copy"));
}
