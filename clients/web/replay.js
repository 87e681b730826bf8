// The replay viewer (#/replay/RACE-ID?player=ID): a finished race, one racer at a time, move by
// move, forward, back or playing. The positions come from the server (GET
// /api/races/ID/replay), which replays the racer's move log with the engine. Beside the racers,
// the solver's winning line on the deal, when it found one (?player=solver: GET
// /api/races/ID/solver), stepped through the same way.

import { Board } from "./board.js";
import { botTag, clock, eventsText, h, statusWord } from "./dom.js";
import { getJson } from "./net.js";
import { inWords, parseMove } from "./moves.js";
import { pileName } from "./pile_names.js";

const SOLVER = "solver";

const SPEEDS = [["1000", "slow"], ["400", "normal"], ["120", "fast"]];

export async function replayPage(main, route, context) {
  const raceId = route.params[0];
  const page = h("div", { class: "replay" }, h("p", {}, "Loading the race…"));
  main.append(page);
  let record;
  let replay;
  try {
    record = await getJson(`/api/races/${raceId}`);
    const player = route.query.get("player") ?? record.players[0]?.player_id;
    replay = await getJson(player === SOLVER ? `/api/races/${raceId}/solver`
      : `/api/races/${raceId}/replay?player=${encodeURIComponent(player)}`);
  } catch (error) {
    page.replaceChildren(h("h2", {}, "Replay"), h("p", { class: "problem", role: "alert" },
      error.message), h("p", {}, h("a", { href: "#/" }, "Back to the lobby")));
    return null;
  }
  const viewer = new Viewer(record, replay, (await context.games()).get(record.rule_set));
  page.replaceChildren(viewer.element);
  return () => viewer.close();
}

// What the solver found on the deal: said with what it knew (it sees the hidden cards).
function winnability(record) {
  if (record.winnable === null || record.winnable === undefined) return null;
  const text = record.winnable
    ? `A win was possible in ${record.solver.moves} moves.`
    : "No win was possible on this deal.";
  return h("p", { class: "winnable" }, h("strong", {}, text),
    ` (The solver's verdict, ${record.solver.knowledge}.)`);
}

class Viewer {
  constructor(record, replay, game) {
    this.replay = replay;
    this.steps = replay.steps;
    this.at = 0;
    this.timer = null;
    this.board = new Board(game);
    this.names = (pile) => pileName(game.name, pile);
    const result = record.results.find((entry) => entry.player_id === replay.player_id);
    this.slider = h("input", { type: "range", min: 0, max: this.steps.length - 1, value: 0,
      "aria-label": "position", oninput: (event) => this.go(Number(event.target.value)) });
    this.speed = h("select", { "aria-label": "speed" },
      SPEEDS.map(([ms, text]) => h("option", { value: ms, selected: text === "normal" }, text)));
    this.playButton = h("button", { class: "play", onclick: () => this.toggle() }, "▶ play");
    this.caption = h("p", { class: "caption" });
    this.notes = h("ul", { class: "notes" });
    this.keys = (event) => {
      if (event.key === "ArrowRight") this.go(this.at + 1);
      if (event.key === "ArrowLeft") this.go(this.at - 1);
    };
    window.addEventListener("keydown", this.keys);
    this.element = h("div", {},
      h("h2", {}, `Replay: ${game.title}`),
      h("p", { class: "facts" }, `Race ${record.race_id} · seed ${record.seed} · `,
        record.ended_at ? `ended ${record.ended_at.slice(0, 16).replace("T", " ")}` : ""),
      h("nav", { class: "tabs racers" }, record.players.map((player) => h("a", {
        class: `tab ${player.player_id === replay.player_id ? "active" : ""}`,
        href: `#/replay/${record.race_id}?player=${encodeURIComponent(player.player_id)}`,
      }, player.name, botTag(player.bot))), record.solver?.result === "won" ? h("a", {
        class: `tab solver-tab ${replay.player_id === null ? "active" : ""}`,
        href: `#/replay/${record.race_id}?player=${SOLVER}`,
      }, "the solver's line") : null),
      winnability(record),
      result ? h("p", { class: "quiet" }, `${replay.name}: ${statusWord(result.status)}, `,
        `${result.on_foundations} cards home, ${result.moves} moves, rank ${result.rank}`) : null,
      h("div", { class: "replay-controls" },
        h("button", { class: "first", title: "the opening", onclick: () => this.go(0) },
          "◀◀ start"),
        h("button", { class: "back", title: "one move back", onclick: () => this.go(this.at - 1) },
          "◀ back"),
        this.playButton,
        h("button", { class: "forward", title: "one move forward",
          onclick: () => this.go(this.at + 1) }, "forward ▶"),
        h("button", { class: "last", title: "the end",
          onclick: () => this.go(this.steps.length - 1) }, "end ▶▶"),
        this.slider, this.speed),
      this.caption, this.board.element, this.notes);
    this.go(0);
  }

  go(at) {
    this.at = Math.max(0, Math.min(this.steps.length - 1, at));
    const step = this.steps[this.at];
    const move = step.move ? parseMove(step.move) : null;
    this.board.show(step.view, { highlight: move && !move.action ? [move.from, move.to] : [] });
    this.slider.value = this.at;
    this.caption.dataset.step = this.at;
    this.caption.replaceChildren(...[
      h("strong", {}, this.at ? `Move ${this.at} of ${this.steps.length - 1}` : "The opening"),
      step.move ? [": ", h("code", {}, step.move)] : [],
      step.time_ms !== null && this.at ? ` at ${clock(step.time_ms)}` : [],
      step.events.length ? h("span", { class: "events" },
        ` — ${inWords(eventsText(step.events), this.names)}`) : [],
      ` · ${step.view.on_foundations}/${step.view.total} home · ${statusWord(step.view.status)}`,
    ].flat());
    this.notes.replaceChildren(...step.view.notes.map((note) => h("li", {},
      inWords(note, this.names))));
    if (this.at === this.steps.length - 1) this.pause();
  }

  toggle() {
    if (this.timer) {
      this.pause();
      return;
    }
    if (this.at === this.steps.length - 1) this.go(0);
    this.playButton.textContent = "⏸ pause";
    const advance = () => {
      this.go(this.at + 1);
      if (this.timer) this.timer = setTimeout(advance, Number(this.speed.value));
    };
    this.timer = setTimeout(advance, Number(this.speed.value));
  }

  pause() {
    clearTimeout(this.timer);
    this.timer = null;
    this.playButton.textContent = "▶ play";
  }

  close() {
    this.pause();
    this.board.destroy();
    window.removeEventListener("keydown", this.keys);
  }
}
