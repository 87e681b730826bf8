// The rated board of a rule set (#/ratings/RULE-SET): GET /api/ratings/RULE-SET, each player's
// rating from the secret-deal races of two racers or more, for racers with min_races rated races
// or more, as players are shown it (`shown`, a 1500-based figure, "?" while provisional: see
// docs/protocol.md); the board is ordered by the cautious ordinal. Your own line is marked, and
// shown below if it is not on the board.

import { botTag, h } from "./dom.js";
import { getJson, identity } from "./net.js";
import { ratingFigure } from "./room_state.js";

export async function ratingsPage(main, route, context) {
  const games = await context.games();
  const ruleSet = route.params[0];
  const me = identity.get()?.player_id;
  const page = h("div", { class: "ratings" });
  main.append(page);
  const game = games.get(ruleSet);
  page.append(h("h2", {}, `Ratings: ${game?.title ?? ruleSet}`),
    h("nav", { class: "tabs", "aria-label": "rule sets" }, [...games.values()].map((other) =>
      h("a", { class: `tab ${other.name === ruleSet ? "active" : ""}`,
        href: `#/ratings/${other.name}` }, other.title))),
    h("p", { class: "quiet" }, "A rating grows with wins over strong racers in races on a ",
      "secret deal; chosen and daily deals are not rated. Everyone starts at 1500; a “?” marks ",
      "a rating still uncertain, in the first races. ",
      h("a", { href: `#/boards/${ruleSet}` }, "Leaderboards")));
  const shown = h("div", {}, h("p", {}, "Loading…"));
  page.append(shown);
  try {
    const around = me ? `&around=${encodeURIComponent(me)}` : "";
    const board = await getJson(`/api/ratings/${ruleSet}?limit=50${around}`);
    const row = (line) => h("tr", { class: line.player_id === me ? "mine" : "" },
      h("td", {}, line.rank), h("td", {}, line.name, botTag(line.bot)),
      h("td", {}, ratingFigure(line)),
      h("td", {}, line.races));
    const onBoard = board.lines.some((line) => line.player_id === me);
    shown.replaceChildren(board.lines.length ? h("table", { class: "board-table ratings-table" },
      h("thead", {}, h("tr", {}, ["#", "racer", "rating", "races"].map((t) => h("th", {}, t)))),
      h("tbody", {}, board.lines.map(row), board.me && !onBoard ? row(board.me) : null))
      : h("p", { class: "quiet" }, `Nobody has ${board.min_races} rated races yet.`),
      h("p", { class: "quiet" }, `The board shows racers with ${board.min_races} rated races `,
        "or more. Racers from one address, or all new, race unrated against each other."));
  } catch (error) {
    shown.replaceChildren(h("p", { class: "problem", role: "alert" }, error.message));
  }
}
