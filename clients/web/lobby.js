// The lobby: who you are, a quick race against players of your strength (quick_race.js), open
// a room (or today's daily deal), join or watch one by code.

import { clock, h } from "./dom.js";
import { Refused, getJson, identity } from "./net.js";
import { QuickRace } from "./quick_race.js";

const DEAL_NUMBER = /^[0-9]{1,20}$/;
const TIME_LIMITS = [
  ["", "no time limit"], ["60", "1 minute"], ["180", "3 minutes"], ["300", "5 minutes"],
  ["600", "10 minutes"], ["1200", "20 minutes"], ["1800", "30 minutes"], ["3600", "1 hour"],
];

// A name form; calls `done(name)` once one is saved. Shared with the room page (a player who
// follows a shared link may have no name yet).
export function nameForm(done) {
  const input = h("input", { name: "name", required: true, maxlength: 32, autocomplete: "nickname",
    placeholder: "your name", value: identity.get()?.name ?? "" });
  return h("form", { class: "name-form", onsubmit: (event) => {
    event.preventDefault();
    const name = input.value.trim();
    if (!name) return;
    identity.set({ name });
    done(name);
  } }, h("label", {}, "Your name ", input), h("button", { type: "submit" }, "Save"));
}

// What the server refused, in words for the player: its own sentence, but for the codes of a
// request the form itself got wrong, said as what to change.
const ERROR_WORDS = {
  rate_limited: "Too many requests at once: wait a moment and try again.",
  offline: "Not connected to the server: check the connection and try again.",
  in_another_room: "You are in another room: leave it first.",
  unknown_rule_set: "That game is not known to the server: reload the page.",
  no_name: "Choose a name first.",
  already_queued: "You are already looking for a quick race (in another tab?).",
  queue_full: "Too many players are waiting for a quick race: try again in a minute.",
};

export function errorWords(error) {
  return ERROR_WORDS[error.code] ?? error.message;
}

// Leave the room the connection is in, if it is another one: leaving a race resigns from it.
export async function leaveRoom(connection, unless = null) {
  if (!connection.room || connection.room === unless) return;
  try {
    await connection.request({ type: "leave" });
  } catch {
    // already out of it (the server restarted, or the seat lapsed)
  }
  connection.room = null;
}

export async function lobbyPage(main, route, context) {
  const byName = await context.games();
  const games = [...byName.values()];
  const page = h("div", { class: "lobby" });
  main.append(page);
  const problem = h("p", { class: "problem", role: "alert" });
  const quick = new QuickRace(byName, context, { prepare, words: errorWords });

  function who() {
    const player = identity.get();
    if (!player?.name) {
      return nameForm(async () => {
        await leaveRoom(context.connection);
        await context.connection.identify();
        page.replaceChildren(...sections());
      });
    }
    return h("p", { class: "who" }, "You race as ", h("strong", {}, player.name), " ",
      h("button", { class: "link", onclick: () => {
        quick.cancel();
        identity.forget();
        page.replaceChildren(...sections());
      } }, "change"));
  }

  // Before a room is asked for: a name, the connection, out of any other room.
  async function prepare() {
    if (!identity.get()?.name) throw new Refused({ code: "no_name", message: "no name" });
    await context.connection.ready();
    await leaveRoom(context.connection);
  }

  async function open(request) {
    problem.textContent = "";
    try {
      await quick.cancel(); // a player waiting for a quick race may not enter a room
      await prepare();
      const room = await context.connection.request(request);
      context.connection.room = room.code;
      context.go(`#/room/${room.code}`);
    } catch (error) {
      problem.textContent = errorWords(error);
    }
  }

  function createForm() {
    const ruleSet = h("select", { name: "rule_set" },
      games.map((game) => h("option", { value: game.name }, `${game.title} (${game.name})`)));
    const number = h("input", { name: "number", inputmode: "numeric",
      placeholder: "e.g. 42", size: 12 });
    const dealChoice = (value, text) => h("label", {},
      h("input", { type: "radio", name: "deal", value, checked: value === "secret" }), text);
    const seats = h("select", { name: "seats", "aria-label": "seats" },
      [2, 3, 4, 5, 6, 7, 8].map((n) => h("option", { value: n }, `${n} seats`)));
    const limit = h("select", { name: "time_limit", "aria-label": "time limit" },
      TIME_LIMITS.map(([value, text]) => h("option", { value }, text)));
    const listed = h("input", { type: "checkbox", name: "public" });
    const form = h("form", { class: "create", onsubmit: (event) => {
      event.preventDefault();
      const deal = form.elements.deal.value;
      if (deal === "number" && !DEAL_NUMBER.test(number.value.trim())) {
        problem.textContent = "The deal number must be 1 to 20 digits, for example 42.";
        number.focus();
        return;
      }
      if (deal === "daily") {
        open({ type: "daily", rule_set: ruleSet.value });
        return;
      }
      open({
        type: "create_room", rule_set: ruleSet.value, seats: Number(seats.value),
        deal: deal === "number" ? { kind: "number", number: number.value.trim() }
          : { kind: "secret", ...(deal === "winnable" ? { winnable: true } : {}) },
        ...(limit.value ? { time_limit_s: Number(limit.value) } : {}),
        ...(listed.checked ? { public: true } : {}),
      });
    } },
    h("label", {}, "Game ", ruleSet),
    h("fieldset", { class: "deal" }, h("legend", {}, "Deal"),
      dealChoice("secret", " a secret deal"),
      dealChoice("winnable", " a secret deal the solver has proved winnable"),
      h("span", { class: "deal-number" }, dealChoice("number", " deal number "), number),
      dealChoice("daily", " today's daily deal (alone, once a day)")),
    h("label", {}, seats), h("label", {}, limit),
    h("label", { title: "listed in the lobby's open rooms, for anyone to join" }, listed,
      " public: list it in the lobby"),
    h("button", { type: "submit", class: "primary" }, "Open a room"));
    // Typing a number chooses "deal number"; passing through the field (Tab) chooses nothing.
    // The field is not in the radio's label, so that the radio group stays one Tab stop, its
    // choices under the arrow keys, as the browser makes any group of radios.
    number.setAttribute("aria-label", "deal number");
    number.addEventListener("input", () => {
      if (number.value.trim()) form.elements.deal.value = "number";
    });
    return form;
  }

  function joinForm() {
    const code = h("input", { name: "code", required: true, placeholder: "room code",
      "aria-label": "room code",
      pattern: "[A-Za-z0-9]{4,16}", size: 10, autocapitalize: "characters" });
    const go = (kind) => (event) => {
      event.preventDefault();
      if (code.reportValidity()) context.go(`#/${kind}/${code.value.trim().toUpperCase()}`);
    };
    return h("form", { class: "join", onsubmit: go("room") }, code,
      h("button", { type: "submit" }, "Join"),
      h("button", { type: "button", onclick: go("watch") }, "Watch"));
  }

  // The public rooms still in their lobby with a free seat (GET /api/rooms).
  function openRooms() {
    const list = h("div", { class: "open-rooms" }, h("p", { class: "quiet" }, "Looking…"));
    getJson("/api/rooms").then(({ rooms }) => {
      if (!rooms.length) {
        list.replaceChildren(h("p", { class: "quiet" }, "No public room is waiting: open one ",
          "(tick “public”) and it shows here."));
        return;
      }
      const titles = new Map(games.map((game) => [game.name, game.title]));
      list.replaceChildren(h("table", { class: "rooms" },
        h("thead", {}, h("tr", {}, ["game", "host", "seats", "deal", "time limit", ""]
          .map((title) => h("th", {}, title)))),
        h("tbody", {}, rooms.map((room) => h("tr", { "data-code": room.code },
          h("td", {}, titles.get(room.rule_set) ?? room.rule_set), h("td", {}, room.host),
          h("td", {}, `${room.racers} of ${room.seats}`),
          h("td", {}, room.deal_kind === "number" ? "a chosen deal" : "a secret deal"),
          h("td", {}, room.time_limit_s ? clock(room.time_limit_s * 1000) : "none"),
          h("td", {}, h("a", { href: `#/room/${room.code}` }, "Join"), " · ",
            h("a", { href: `#/watch/${room.code}` }, "Watch")))))));
    }).catch(() => {
      list.replaceChildren(h("p", { class: "quiet" }, "The list of open rooms is not available."));
    });
    return list;
  }

  function sections() {
    return [
      h("section", {}, h("h2", {}, "Race your friends at patience"),
        h("p", {}, "Everyone gets the same deal at the same moment; the first to finish wins."),
        who()),
      quick.element,
      h("section", {}, h("h2", {}, "Open a room"), createForm(), problem),
      h("section", {}, h("h2", {}, "Join a room"), joinForm()),
      h("section", {}, h("h2", {}, "Open rooms"), openRooms()),
      h("section", {}, h("h2", {}, "The games"), h("ul", { class: "games" },
        games.map((game) => h("li", {}, h("strong", {}, game.title), ` — ${game.source} · `,
          h("a", { href: game.rules_url ?? `/rules/${game.name}` }, "rules"), " · ",
          h("a", { href: `#/boards/${game.name}` }, "leaderboards"), " · ",
          h("a", { href: `#/ratings/${game.name}` }, "ratings"))))),
    ];
  }

  page.append(...sections());
  return () => quick.tidy();
}
