// patience-race in the browser: a single page with hash routes.
//
//   #/                     the lobby: your name, open a room, join one by code
//   #/room/CODE            a room: seats, ready, countdown, the race, the results
//   #/watch/CODE           the same room as a spectator
//   #/boards/RULE-SET?...  leaderboards
//   #/ratings/RULE-SET     the rated board
//   #/replay/RACE-ID       step through a finished race
//
// Each page is a function (main, route, context) that fills `main` and may return a function
// that tidies up when the page is left.

import { boardsPage } from "./leaderboards.js";
import { lobbyPage } from "./lobby.js";
import { ratingsPage } from "./ratings.js";
import { Connection, getJson, serverUrl } from "./net.js";
import { replayPage } from "./replay.js";
import { roomPage } from "./room.js";

const ROUTES = [
  [/^$/, lobbyPage],
  [/^room\/([A-Za-z0-9]+)$/, roomPage],
  [/^watch\/([A-Za-z0-9]+)$/, roomPage],
  [/^boards\/([a-z0-9-]+)$/, boardsPage],
  [/^ratings\/([a-z0-9-]+)$/, ratingsPage],
  [/^replay\/([A-Za-z0-9_-]+)$/, replayPage],
];

let games = null;

const context = {
  connection: new Connection(serverUrl()),
  // The rule sets of GET /api/games, by name (fetched once).
  games() {
    games ??= getJson("/api/games").then((list) => new Map(list.map((g) => [g.name, g])));
    return games;
  },
  go(hash) {
    location.hash = hash;
  },
};

let leave = null;
let routing = 0;

async function route() {
  const current = ++routing;
  const [path, query = ""] = location.hash.replace(/^#\/?/, "").split("?");
  const main = document.querySelector("main");
  const leaving = leave;
  leave = null;
  await leaving?.();
  main.replaceChildren();
  const found = ROUTES.find(([pattern]) => pattern.test(path));
  if (!found) {
    main.textContent = `Nothing at #/${path}.`;
    return;
  }
  const [pattern, page] = found;
  const params = pattern.exec(path).slice(1);
  const tidy = await page(main, { path, params, query: new URLSearchParams(query) }, context);
  if (current === routing) leave = tidy ?? null;
  else await tidy?.(); // the player went elsewhere while the page was opening
}

window.addEventListener("hashchange", route);
route();
