// Leaderboards (#/boards/RULE-SET?board=...&period=...&deal=...&day=...&around=me), read over
// HTTP: GET /api/leaderboards/RULE-SET. Your own lines are marked; "around me" centres the
// board on your best line (the API's `player=`).

import { botTag, clock, h, statusWord } from "./dom.js";
import { getJson, identity } from "./net.js";

const BOARDS = [["fastest", "Fastest"], ["most_wins", "Most wins"], ["daily", "Daily deal"],
  ["deal", "One deal"]];
const PERIODS = [["today", "today"], ["week", "this week"], ["all", "all time"]];

export async function boardsPage(main, route, context) {
  const games = await context.games();
  const ruleSet = route.params[0];
  const query = route.query;
  const choice = {
    board: query.get("board") ?? "fastest", period: query.get("period") ?? "all",
    deal: query.get("deal") ?? "", day: query.get("day") ?? "", around: query.get("around") ?? "",
  };
  const me = identity.get()?.player_id;
  const page = h("div", { class: "leaderboards" });
  main.append(page);

  const link = (changes) => {
    const next = { ...choice, ...changes };
    const rule = next.ruleSet ?? ruleSet;
    delete next.ruleSet;
    const params = new URLSearchParams(Object.entries(next).filter(([, value]) => value));
    return `#/boards/${rule}?${params}`;
  };
  const tab = (active, href, text) => h("a", { class: `tab ${active ? "active" : ""}`, href },
    text);

  const controls = [
    h("nav", { class: "tabs" }, [...games.values()].map((game) =>
      tab(game.name === ruleSet, link({ ruleSet: game.name }), game.title))),
    h("nav", { class: "tabs" }, BOARDS.map(([board, text]) =>
      tab(board === choice.board, link({ board }), text))),
  ];
  if (choice.board === "fastest") {
    controls.push(h("nav", { class: "tabs" }, PERIODS.map(([period, text]) =>
      tab(period === choice.period, link({ period }), text))));
  }
  if (choice.board === "deal" || choice.board === "daily") {
    const field = choice.board === "deal"
      ? h("input", { name: "deal", value: choice.deal, placeholder: "deal number",
        inputmode: "numeric", pattern: "[0-9]{1,20}", required: true })
      : h("input", { name: "day", type: "date", value: choice.day });
    controls.push(h("form", { class: "pick", onsubmit: (event) => {
      event.preventDefault();
      context.go(link({ [field.name]: field.value }));
    } }, field, h("button", { type: "submit" }, "Show")));
  }
  if (me) {
    controls.push(h("label", { class: "around" }, h("input", { type: "checkbox",
      checked: Boolean(choice.around), onchange: (event) =>
        context.go(link({ around: event.target.checked ? "me" : "" })) }), " around me"));
  }
  const game = games.get(ruleSet);
  page.append(h("h2", {}, `Leaderboards: ${game?.title ?? ruleSet}`), ...controls);

  if (choice.board === "deal" && !choice.deal) {
    page.append(h("p", {}, "Which deal? Give its number."));
    return;
  }
  const params = new URLSearchParams({ board: choice.board, period: choice.period, limit: 20 });
  if (choice.board === "deal") params.set("deal", choice.deal);
  if (choice.board === "daily" && choice.day) params.set("day", choice.day);
  if (choice.around && me) params.set("player", me);
  let result;
  try {
    result = await getJson(`/api/leaderboards/${ruleSet}?${params}`);
  } catch (error) {
    page.append(h("p", { class: "problem", role: "alert" }, error.message));
    return;
  }
  // Which races the board counts (chosen deals are practice: on their deal's board only).
  if (result.counts) page.append(h("p", { class: "quiet counts" }, result.counts));
  page.append(table(result, me));
  if (result.me && !result.entries.some((entry) => entry.player_id === me)) {
    page.append(h("p", { class: "me-line" }, `Your best: #${result.me.rank}`));
  }
}

function table(result, me) {
  if (!result.entries.length) return h("p", { class: "quiet" }, "Nobody here yet.");
  const wins = result.board === "most_wins";
  const titles = wins ? ["#", "player", "wins", "last win"]
    : ["#", "player", "result", "time", "cards home", "deal", "when", ""];
  return h("table", { class: "board-table" },
    h("thead", {}, h("tr", {}, titles.map((title) => h("th", {}, title)))),
    h("tbody", {}, result.entries.map((entry) => h("tr", {
      class: entry.player_id === me ? "mine" : "" }, wins
      ? [h("td", {}, entry.rank), h("td", {}, entry.name, botTag(entry.bot)),
        h("td", {}, entry.wins), h("td", {}, day(entry.at))]
      : [h("td", {}, entry.rank), h("td", {}, entry.name, botTag(entry.bot)),
        h("td", {}, statusWord(entry.status)),
        h("td", {}, entry.status === "won" ? clock(entry.time_ms) : "–"),
        h("td", {}, entry.on_foundations), h("td", {}, entry.deal ?? "secret"),
        h("td", {}, day(entry.at)),
        h("td", {}, entry.race_id ? h("a", { href: `#/replay/${entry.race_id}` }, "replay")
          : null)]))));
}

function day(iso) {
  return iso ? iso.slice(0, 16).replace("T", " ") : "";
}
