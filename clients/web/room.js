// A room (#/room/CODE, or #/watch/CODE as a spectator): the seats and who is ready, the host's
// start button, the countdown, then your board, everyone's progress, and the results.
//
// Everything shown follows the server's messages: `room` (seats, phase), `countdown`,
// `race_started`, your `view`, the replies to your moves, `progress`, `race_finished`. If the
// connection drops, net.js reconnects and says hello; this page then resumes the room from the
// last seq it saw (docs/protocol.md, "Reconnecting"). A reply that says `reconnect_to` (the
// room is held by another worker) moves the connection there and resumes on it.

import { Board } from "./board.js";
import { clock, eventsText, h, statusWord } from "./dom.js";
import { leaveRoom, nameForm } from "./lobby.js";
import { identity } from "./net.js";
import { parseMove } from "./moves.js";

const RESIGN_CONFIRM_MS = 4000;

// What the room says of its deal's winnability (the solver sees the hidden cards).
const WINNABLE = new Map([
  [true, "proved winnable (by the solver, which sees the hidden cards)"],
  [false, "none proved winnable was ready: an unproved deal"],
]);

export async function roomPage(main, route, context) {
  const page = new RoomPage(route.params[0].toUpperCase(), route.path.startsWith("watch/"),
    context);
  main.append(page.element);
  if (identity.get()?.name) await page.enter();
  else page.askName();
  return () => page.leave();
}

class RoomPage {
  constructor(code, watching, context) {
    this.code = code;
    this.watching = watching;
    this.context = context;
    this.connection = context.connection;
    this.room = null;
    this.view = null;
    this.board = null;
    this.lastSeq = 0;
    this.commitment = null;
    this.dealNumber = null;
    this.countdownEnds = null;
    this.finished = null;
    this.moving = false;
    this.lastMove = null;
    this.refusal = null;
    this.notice = "";
    this.element = h("div", { class: "room" });
    this.unlisten = this.connection.listen((message) => this.receive(message));
    this.ticker = setInterval(() => this.tick(), 100);
  }

  askName() {
    this.element.replaceChildren(h("section", {}, h("h2", {}, `Room ${this.code}`),
      h("p", {}, "Choose a name to join the race."), nameForm(() => this.enter())));
  }

  async enter() {
    this.element.replaceChildren(h("p", {}, `Entering room ${this.code}…`));
    try {
      this.games = await this.context.games();
      await this.connection.ready();
      await leaveRoom(this.connection, this.code);
      await this.take(this.watching ? "spectate" : "join");
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
      this.watching = true;
      this.notice = `${error.message}: you are watching.`;
      room = await this.connection.request({ type: "spectate", code: this.code });
    }
    this.connection.room = room.code;
    this.receive(room);
    this.render({ race: true });
    await this.follow(room);
  }

  // Move to the worker that holds the room, and come back in there.
  async follow(reply) {
    if (reply.reconnect_to) await this.connection.moveTo(reply.reconnect_to, () => this.rejoin());
  }

  // Back in the room on the current connection: resume with what was missed, or watch again.
  async rejoin() {
    const request = this.watching ? { type: "spectate", code: this.code }
      : { type: "resume", code: this.code, last_seq: this.lastSeq };
    const reply = await this.connection.request(request);
    this.receive(reply);
    return reply;
  }

  async leave() {
    this.unlisten();
    clearInterval(this.ticker);
    const racing = this.room?.phase === "racing" && !this.watching
      && this.view?.status === "in_progress";
    if (!racing) await leaveRoom(this.connection);
  }

  // -- what the server says ----------------------------------------------------------------

  receive(message) {
    if (message.seq !== undefined) this.lastSeq = Math.max(this.lastSeq, message.seq);
    switch (message.type) {
      case "room":
        this.room = message;
        this.commitment = message.commitment ?? this.commitment;
        if (message.phase !== "countdown") this.countdownEnds = null;
        break;
      case "countdown":
        this.countdownEnds = performance.now() + message.seconds * 1000;
        break;
      case "race_started":
        this.commitment = message.commitment;
        this.dealNumber = message.deal_number;
        this.countdownEnds = null;
        break;
      case "view":
        this.view = message.view;
        this.render({ race: true });
        return;
      case "progress":
        this.progress(message);
        break;
      case "race_finished":
        this.finished = message;
        break;
      case "resumed":
        for (const missed of message.missed) this.receive(missed);
        return;
      case "shutdown":
      case "lost":
        this.notice = "The connection dropped: reconnecting…";
        break;
      case "reconnected":
        this.resume();
        return;
      default:
        return;
    }
    this.render();
  }

  progress(event) {
    const seat = this.room?.seats.find((s) => s.player_id === event.player_id);
    if (!seat) return;
    const { on_foundations, total, moves, status } = event;
    Object.assign(seat, { on_foundations, total, moves, status });
  }

  async resume() {
    this.notice = "";
    try {
      await this.follow(await this.rejoin());
    } catch {
      await this.take(this.watching ? "spectate" : "join").catch((error) => {
        this.notice = error.message;
      });
    }
    this.render({ race: this.watching });
  }

  // -- what the player does ----------------------------------------------------------------

  async send(request, text) {
    if (this.moving) return;
    this.moving = true;
    try {
      const reply = await this.connection.request(request);
      if (reply.type === "move_ok") this.accepted(reply);
      this.refusal = null;
    } catch (error) {
      this.refusal = { move: text, message: error.message };
    } finally {
      this.moving = false;
      this.render({ race: true });
    }
  }

  move(text) {
    return this.send({ type: "move", move: text }, text);
  }

  // Practice alone on a chosen deal: the server's solver gives the next move of a winning line
  // (it sees the hidden cards), or says no win is possible any more, or does not know.
  hintable() {
    return this.room.deal_kind === "number" && this.room.seats.length === 1
      && this.view?.status === "in_progress";
  }

  async askHint() {
    if (this.moving) return;
    this.moving = true;
    this.hint = { message: "thinking…" };
    this.render({ race: true });
    try {
      this.hint = await this.connection.request({ type: "hint" });
    } catch (error) {
      this.hint = { message: error.message };
    } finally {
      this.moving = false;
      this.render({ race: true });
    }
  }

  accepted(ack) {
    const changed = new Map(ack.changed.map((pile) => [pile.pile, pile]));
    this.view = {
      ...this.view,
      piles: this.view.piles.map((pile) => changed.get(pile.pile) ?? pile),
      legal_moves: ack.legal_moves, status: ack.status, on_foundations: ack.on_foundations,
      moves: ack.moves, notes: ack.notes,
    };
    this.lastMove = { move: ack.move, events: ack.events };
    // The room's progress event for your own move is not sent to you: the reply says the same
    // figures, and carries that event's seq, which counts as seen for a resume.
    if (ack.seq !== undefined && ack.seq !== null) this.lastSeq = Math.max(this.lastSeq, ack.seq);
    const status = ack.status === "in_progress" ? "racing" : ack.status;
    this.progress({ player_id: identity.get()?.player_id, on_foundations: ack.on_foundations,
      total: this.view.total, moves: ack.moves, status });
  }

  // -- drawing -----------------------------------------------------------------------------

  me() {
    return this.room?.seats.find((seat) => seat.player_id === identity.get()?.player_id);
  }

  game() {
    return this.games.get(this.room.rule_set);
  }

  // Everything but the race panel is redrawn on every message; the race panel (your board,
  // with a card you may have picked up) only when your own game changed.
  render({ race = false } = {}) {
    if (!this.room) return;
    if (!this.parts) {
      this.parts = { header: h("div"), banner: h("div"), seats: h("div"), race: h("div"),
        results: h("div") };
      const { header, banner, seats, results } = this.parts;
      this.element.replaceChildren(header, banner,
        h("div", { class: "room-body" }, seats, this.parts.race), results);
      race = true;
    }
    this.parts.header.replaceChildren(this.header());
    this.parts.banner.replaceChildren(this.banner());
    this.parts.seats.replaceChildren(this.seats());
    this.parts.results.replaceChildren(this.results() ?? "");
    if (race) this.parts.race.replaceChildren(this.watching ? this.watchPanel() : this.racePanel());
  }

  header() {
    const game = this.game();
    const joining = this.room.phase === "lobby";
    const link = `${location.origin}/#/${joining ? "room" : "watch"}/${this.room.code}`;
    const share = h("input", { class: "share", readonly: true, value: link, size: link.length });
    const facts = [
      this.room.deal_kind === "number" ? `deal ${this.dealNumber ?? "chosen"}`
        : this.room.deal_kind === "daily" ? "today's daily deal" : "a secret deal",
      WINNABLE.get(this.room.winnable) ?? null,
      `${this.room.seats.length} of ${this.room.seats_max} seats`,
      this.room.time_limit_s ? `time limit ${clock(this.room.time_limit_s * 1000)}` : null,
    ].filter(Boolean).join(" · ");
    return h("header", { class: "room-head" },
      h("h2", {}, game.title, " ", h("span", { class: "code", "data-code": this.room.code },
        this.room.code)),
      h("p", { class: "facts" }, facts, " · ", h("span", { class: "phase" }, this.room.phase)),
      h("p", { class: "share-line" }, joining ? "Invite friends: " : "Let friends watch: ", share,
        h("button", { onclick: () => copy(share) }, "Copy link")));
  }

  banner() {
    const lines = [];
    if (this.notice) lines.push(h("p", { class: "notice" }, this.notice));
    if (this.refusal) {
      lines.push(h("p", { class: "refusal", role: "alert" }, h("strong", {}, "Refused: "),
        h("code", {}, this.refusal.move), ` — ${this.refusal.message}`));
    }
    if (this.room.phase === "lobby") {
      lines.push(h("p", {}, this.watching ? "Waiting for the racers to get ready."
        : "When everyone is ready (or the host starts), a short countdown begins."));
    }
    if (this.countdownEnds !== null) {
      lines.push(h("p", { class: "countdown" }, "Starting in ",
        h("span", { class: "seconds" }, ""), "…"));
    }
    return h("div", { class: "banner" }, lines);
  }

  seats() {
    const me = this.me();
    const rows = this.room.seats.map((seat) => {
      const share = seat.total ? (100 * seat.on_foundations) / seat.total : 0;
      return h("li", { class: `seat ${seat === me ? "mine" : ""}`, "data-player": seat.name },
        h("div", { class: "seat-name" },
          h("span", { class: `dot ${seat.connected ? "on" : "off"}`,
            title: seat.connected ? "connected" : "disconnected" }),
          seat.name, seat.player_id === this.room.host ? h("span", { class: "tag" }, "host") : null,
          this.room.phase === "lobby"
            ? h("span", { class: `ready ${seat.ready ? "yes" : "no"}` },
              seat.ready ? "✓ ready" : "not ready") : null),
        this.room.phase === "lobby" ? null : h("div", { class: "bar" },
          h("div", { class: "fill", style: `width: ${share}%` })),
        this.room.phase === "lobby" ? null : h("div", { class: "seat-progress" },
          `${seat.on_foundations}/${seat.total} home · ${seat.moves} moves · `,
          h("span", { class: `status ${seat.status}` }, statusWord(seat.status))));
    });
    const controls = [];
    if (me && this.room.phase === "lobby") {
      const ready = () => this.send({ type: "ready", ready: !me.ready }, "ready");
      controls.push(h("button", { class: "primary ready-button", onclick: ready },
        me.ready ? "Not ready" : "Ready"));
      if (me.player_id === this.room.host) {
        controls.push(h("button", { class: "start-button", onclick: () =>
          this.send({ type: "start" }, "start") }, "Start now"));
      }
    }
    return h("aside", { class: "seats" }, h("h3", {}, "Racers"), h("ul", {}, rows),
      this.room.spectators ? h("p", { class: "quiet" }, `${this.room.spectators} watching`) : null,
      controls);
  }

  watchPanel() {
    return h("section", { class: "race watching" }, h("p", {}, "You are watching: you see each ",
      "racer's progress, never their cards."));
  }

  racePanel() {
    if (!this.view) return h("section", { class: "race" });
    const game = this.game();
    if (!this.board || this.board.game !== game) {
      this.board = new Board(game, { onMove: (text) => this.move(text) });
    }
    const hint = this.hint?.after_moves === this.view.moves || this.hint?.after_moves === undefined
      ? this.hint : null;
    const hinted = hint?.move ? parseMove(hint.move) : null;
    this.board.show(this.view, { highlight: hinted && !hinted.action ? [hinted.from, hinted.to]
      : [] });
    const transfers = this.view.legal_moves.filter((move) => move.includes(" -> "));
    const actions = this.view.legal_moves.filter((move) => !move.includes(" -> "));
    const playing = this.view.status === "in_progress";
    const spread = h("input", { type: "checkbox", checked: this.board.spreadAll,
      onchange: (event) => this.board.setSpreadAll(event.target.checked) });
    return h("section", { class: "race" },
      h("div", { class: "race-status" },
        h("span", { class: "clock" }, ""),
        h("span", { class: "mine" }, `${this.view.on_foundations}/${this.view.total} cards home`,
          ` · ${this.view.moves} moves · `,
          h("span", { class: `status ${this.view.status}` }, statusWord(this.view.status)))),
      this.board.element,
      hint ? h("p", { class: "hint", role: "status" }, h("strong", {}, "Hint: "), hint.message,
        hint.knowledge ? h("span", { class: "quiet" }, ` (${hint.knowledge})`) : null) : null,
      h("div", { class: "under-board" },
        h("ul", { class: "notes" }, this.view.notes.map((note) => h("li", {}, note))),
        this.lastMove ? h("p", { class: "events" }, h("code", {}, this.lastMove.move),
          this.lastMove.events.length ? ` — ${eventsText(this.lastMove.events)}` : null) : null),
      h("div", { class: "controls" },
        actions.filter((move) => move !== "resign").map((move) => h("button", {
          class: "action", "data-move": move, onclick: () => this.move(move) }, move)),
        playing ? this.resignButton() : null,
        this.hintable() ? h("button", { class: "hint-button", title: "the next move of a " +
          "winning line, from the solver, which sees the hidden cards",
          onclick: () => this.askHint() }, "Hint") : null,
        h("label", { class: "quiet" }, spread, " show whole piles")),
      playing ? h("details", { class: "legal", open: true },
        h("summary", {}, `Moves from pile to pile (${transfers.length})`),
        h("ul", {}, transfers.map((move) => h("li", {}, h("button", { class: "move",
          "data-move": move, onclick: () => this.move(move) }, move))))) : null);
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

  results() {
    if (!this.finished) return null;
    const result = this.finished;
    const check = h("span", { class: "commitment-check" }, "checking…");
    checkCommitment(result.seed, this.commitment).then((text) => {
      check.textContent = text;
    });
    return h("section", { class: "results" }, h("h3", {}, "Results"),
      h("table", { class: "ranking" },
        h("thead", {}, h("tr", {}, ["#", "racer", "result", "time", "cards home", "moves"]
          .map((title) => h("th", {}, title)))),
        h("tbody", {}, result.ranking.map((entry) => h("tr", {
          class: entry.player_id === identity.get()?.player_id ? "mine" : "" },
        h("td", {}, entry.rank), h("td", {}, entry.name), h("td", {}, statusWord(entry.status)),
        h("td", {}, clock(entry.time_ms)), h("td", {}, entry.on_foundations),
        h("td", {}, entry.moves))))),
      h("p", { class: "seed" }, result.seed === null
        ? "The deal stays secret until the end of its day."
        : ["The deal was seed ", h("code", {}, result.seed), ". ", check]),
      h("p", {}, result.seed === null ? null
        : [h("a", { href: `#/replay/${result.race_id}` }, "Replay this race"), " · "],
      h("a", { href: `#/boards/${this.room.rule_set}` }, "Leaderboards"), " · ",
      h("a", { href: "#/" }, "Back to the lobby")));
  }

  // Ten times a second: the countdown and the race clock.
  tick() {
    const seconds = this.element.querySelector(".countdown .seconds");
    if (seconds && this.countdownEnds !== null) {
      seconds.textContent = Math.max(0, (this.countdownEnds - performance.now()) / 1000)
        .toFixed(1);
    }
    const shown = this.element.querySelector(".race-status .clock");
    const started = this.room?.started_at_ms;
    if (!shown || !started) return;
    const mine = this.finished?.ranking.find((e) => e.player_id === identity.get()?.player_id);
    const elapsed = mine ? mine.time_ms : Date.now() - started;
    const limit = this.room.time_limit_s;
    shown.textContent = limit && !mine
      ? `${clock(elapsed)} (${clock(limit * 1000 - elapsed)} left)` : clock(elapsed);
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
