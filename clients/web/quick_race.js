// The lobby's Quick race (docs/protocol.md, "Quick race"): a button per game with how many
// wait for it (GET /api/quick, every few seconds), the choices (rated, the practice bot after
// a wait), and while the player waits, the search said plainly with Cancel (`leave_queue`).
//
// Once a room is found the server seats the player in it and sends `matched` then the `room`
// message a join gets; the page then goes to the room, as a join does (the room page's own
// join of a seat already taken changes nothing).

import { h } from "./dom.js";
import { getJson } from "./net.js";
import {
  BOT_AFTER_S, botAfter, initialQuick, reduceQuick, seekingWords, waitingCount, waitingWords,
} from "./quick_state.js";

const COUNTS_EVERY_MS = 4000;

export class QuickRace {
  // `prepare()`: before a search, what opening a room needs (a name, the connection, out of
  // any other room), throwing a refusal; `words(error)`: a refusal said for the player.
  constructor(games, context, { prepare, words }) {
    this.games = games;
    this.context = context;
    this.connection = context.connection;
    this.prepare = prepare;
    this.words = words;
    this.state = initialQuick();
    this.choice = { rated: true, bot: false, botAfter: BOT_AFTER_S.usual };
    this.asked = null; // the quick_race request of the search under way
    this.problem = h("p", { class: "problem", role: "alert" });
    this.body = h("div", { class: "quick-body" });
    this.element = h("section", { class: "quick", "aria-labelledby": "quick-title" },
      h("h2", { id: "quick-title" }, "Quick race"),
      h("p", { class: "quiet" }, "Race players of your strength now, on a secret deal (one the ",
        "solver has proved winnable, when it has one ready)."), this.body, this.problem);
    this.unlisten = this.connection.listen((message) => this.receive(message));
    this.counting = setInterval(() => this.count(), COUNTS_EVERY_MS);
    this.count();
    this.draw();
  }

  // The page is left: no more counts, and out of the queue (before the next page asks for a
  // room, which a queued player may not enter).
  async tidy() {
    this.unlisten();
    clearInterval(this.counting);
    await this.cancel();
  }

  dispatch(message) {
    const before = this.state;
    this.state = reduceQuick(this.state, message);
    if (this.state === before) return;
    if (Boolean(this.state.seeking) !== Boolean(before.seeking)
      || this.state.matched !== before.matched) {
      this.draw(before.seeking?.rule_set);
    } else {
      this.update();
    }
  }

  async count() {
    if (document.hidden) return; // nobody looks: the counts wait for the next look
    try {
      this.dispatch({ type: "counts", waiting: (await getJson("/api/quick")).waiting });
    } catch {
      // the counts stay as they were until the next try
    }
  }

  receive(message) {
    if (message.type === "reconnected") {
      if (this.state.seeking) this.ask(this.asked);
    } else if (message.type === "room" && message.code === this.state.matched?.code) {
      this.connection.room = message.code;
      this.context.go(`#/room/${message.code}`);
    } else {
      this.dispatch(message); // queue, matched, lost; the rest is not the lobby's
    }
  }

  async seek(ruleSet) {
    this.problem.textContent = "";
    this.asked = { type: "quick_race", rule_set: ruleSet, rated: this.choice.rated,
      bot_after_s: botAfter(this.choice.bot, this.choice.botAfter) };
    this.dispatch({ ...this.asked, type: "seek" });
    try {
      await this.prepare();
    } catch (error) {
      this.refused(error);
      return;
    }
    await this.ask(this.asked);
  }

  async ask(request) {
    try {
      this.dispatch(await this.connection.request(request));
    } catch (error) {
      this.refused(error);
    }
  }

  refused(error) {
    this.dispatch({ type: "stopped" });
    this.problem.textContent = this.words(error);
  }

  async cancel() {
    if (!this.state.seeking) return;
    this.dispatch({ type: "stopped" });
    try {
      await this.connection.request({ type: "leave_queue" });
    } catch {
      // not queued any more: matched meanwhile (then `matched` follows), or disconnected
    }
  }

  // -- drawing -----------------------------------------------------------------------------

  // The buttons, the search or the room found; the keyboard's focus, if it was here, moves to
  // Cancel as the search begins and back to the game's button as it ends (`left`).
  draw(left = null) {
    const { seeking, matched } = this.state;
    const focused = this.body.contains(document.activeElement);
    if (matched) this.body.replaceChildren(this.found(matched));
    else if (seeking) this.body.replaceChildren(this.searching(seeking));
    else this.body.replaceChildren(this.buttons(), this.choices());
    this.update();
    if (!focused) return;
    (this.body.querySelector(".cancel")
      ?? this.body.querySelector(`li[data-rule-set="${left}"] button`))?.focus();
  }

  // What changes while the list or the search stays on screen: the counts, the search's words.
  update() {
    const rated = this.state.seeking?.rated ?? this.choice.rated;
    for (const shown of this.body.querySelectorAll("[data-waiting-for]")) {
      shown.textContent = waitingWords(waitingCount(this.state, shown.dataset.waitingFor, rated));
    }
    const { seeking } = this.state;
    const words = this.body.querySelector(".seeking-words");
    if (seeking && words) {
      words.textContent = seekingWords(seeking);
      this.body.querySelector(".waited").textContent = seeking.waited_s
        ? `Waited ${seeking.waited_s} s.` : "";
    }
  }

  buttons() {
    return h("ul", { class: "quick-games" }, [...this.games.values()].map((game) =>
      h("li", { "data-rule-set": game.name },
        h("span", { class: "game" }, game.title),
        h("span", { class: "waiting quiet", "data-waiting-for": game.name }, ""),
        h("button", { class: "quick-race primary", "aria-label": `Quick race: ${game.title}`,
          onclick: () => this.seek(game.name) }, "Quick race"))));
  }

  choices() {
    const rated = h("input", { type: "checkbox", name: "rated", checked: this.choice.rated,
      onchange: () => {
        this.choice.rated = rated.checked;
        this.update();
      } });
    const bot = h("input", { type: "checkbox", name: "bot", checked: this.choice.bot,
      onchange: () => {
        this.choice.bot = bot.checked;
      } });
    const seconds = h("input", { type: "number", name: "bot_after_s", min: BOT_AFTER_S.min,
      max: BOT_AFTER_S.max, value: this.choice.botAfter, "aria-label": "seconds to wait before "
        + "the practice bot", oninput: () => {
        this.choice.botAfter = seconds.value;
        bot.checked = this.choice.bot = true;
      } });
    return h("div", { class: "quick-choices" },
      h("label", { title: "a rated race changes your rating; unrated, it does not" }, rated,
        " rated"),
      h("span", { class: "bot-choice" }, h("label", {}, bot, " race the practice bot after"),
        " ", seconds, " s if nobody is found (unrated)"));
  }

  searching(seeking) {
    const game = this.games.get(seeking.rule_set);
    return h("div", { class: "seeking" },
      h("p", {}, h("strong", {}, game?.title ?? seeking.rule_set),
        seeking.rated ? " · rated" : " · unrated"),
      h("p", { class: "seeking-words", role: "status" }, ""),
      h("p", { class: "quiet" }, h("span", { class: "waited" }, ""), " ",
        seeking.rated ? "The window of ratings widens as you wait."
          : "The unrated queue matches anyone waiting.",
        seeking.bot_after_s === null ? "" : ` The practice bot races you after ${
          seeking.bot_after_s} s if nobody is found.`),
      h("button", { class: "cancel", onclick: () => this.cancel() }, "Cancel"));
  }

  found(matched) {
    const who = matched.practice ? "Nobody was found in time: you race the practice bot"
      : `Found ${matched.racers} racers`;
    return h("p", { class: "seeking matched", role: "status" }, `${who}. `,
      h("a", { href: `#/room/${matched.code}` }, `To room ${matched.code}`), "…");
  }
}
