// The result overlay, over the board once the race is over: what happened ("You cleared the
// deal – 3rd of 3"), the place, time, cards home and rating change, every racer's line, the
// seed check, and Rematch (an offer the others accept), the replay and Leave. A short
// celebration when you cleared the deal (none under prefers-reduced-motion: race.css). It
// stays until the player closes it or the next race starts, a rematch lobby included.
//
// While your game is over and others still race, a line instead: "You resigned, 0:04.0.
// Waiting for Bob…".

import { botTag, clock, h } from "./dom.js";
import {
  boardNames, counted, finishHeadline, myGameOver, mySeat, placeWords, ratingText, rematchWords,
  resultWords,
} from "./room_state.js";

const CONFETTI = 24;

// `act`: { rematch(accept), dismiss() }; `seedCheck`: the commitment's check, once known.
export function finishPanel(state, act, seedCheck) {
  const result = state.result;
  if (!result) {
    if (state.watching || !myGameOver(state) || state.finished) return null;
    return h("section", { class: "finish waiting" },
      h("h2", { class: "finish-headline", role: "status" }, finishHeadline(state, clock)));
  }
  const mine = result.ranking.find((entry) => entry.player_id === state.me);
  const rated = result.ranking.some((entry) => entry.rating);
  const names = boardNames(result.ranking);
  const bots = new Set(state.room.seats.filter((seat) => seat.bot).map((seat) => seat.player_id));
  const cleared = mine?.status === "won";
  return h("section", { class: `finish ${cleared ? "celebrate" : ""}`, role: "dialog",
    "aria-labelledby": "finish-headline" },
  cleared ? confetti() : null,
  h("button", { class: "close", "aria-label": "Close the results", onclick: act.dismiss }, "×"),
  h("h2", { class: "finish-headline", id: "finish-headline" }, finishHeadline(state, clock)),
  mine ? facts(mine, result, rated) : null,
  h("div", { class: "finish-actions" }, rematchPart(state, act, names),
    result.seed === null ? null : h("a", { class: "button replay-link",
      href: `#/replay/${result.race_id}` }, "Watch the replay"),
    h("a", { class: "button leave", href: "#/" }, "Leave")),
  h("div", { class: "results" }, h("table", { class: "ranking" },
    h("thead", {}, h("tr", {}, ["#", "racer", "result", "time", "home", "moves",
      rated ? "rating" : null].filter(Boolean).map((title) => h("th", { scope: "col" }, title)))),
    h("tbody", {}, result.ranking.map((entry) => h("tr", {
      class: entry.player_id === state.me ? "mine" : "" },
    h("td", {}, entry.rank), h("td", {}, names.get(entry.player_id),
      botTag(entry.bot || bots.has(entry.player_id))),
    h("td", {}, resultWords(entry.status)), h("td", { class: "time" }, clock(entry.time_ms)),
    h("td", {}, entry.on_foundations), h("td", {}, entry.moves),
    rated ? h("td", { class: "rating" }, ratingText(entry.rating)) : null))))),
  h("p", { class: "seed" }, result.seed === null
    ? "The deal stays secret until the end of its day."
    : ["The deal was seed ", h("code", {}, result.seed), ". ",
      h("span", { class: "commitment-check" }, seedCheck ?? "checking…")]),
  h("p", { class: "quiet links" }, h("a", { href: `#/boards/${state.room.rule_set}` },
    "Leaderboards"), " · ", h("a", { href: `#/ratings/${state.room.rule_set}` }, "Ratings")));
}

// Your place, time, cards home, moves and rating change, large.
function facts(mine, result, rated) {
  const fact = (label, value, extra = {}) => h("div", extra, h("dt", {}, label),
    h("dd", {}, value));
  return h("dl", { class: "finish-facts" },
    result.ranking.length > 1 ? fact("place", placeWords(mine, result.ranking)) : null,
    fact("time", clock(mine.time_ms)),
    fact("cards home", result.total ? `${mine.on_foundations}/${result.total}`
      : String(mine.on_foundations)),
    fact("moves", counted(mine.moves, "move")),
    rated ? fact("rating", ratingText(mine.rating), { class: "rating-change" }) : null);
}

// Rematch, an offer the others accept: who wants one, and what you may say to it.
function rematchPart(state, act, names) {
  const { room, rematch } = state;
  const seated = Boolean(mySeat(state));
  if (room.deal_kind === "daily") return null;
  if (room.phase === "lobby") { // the rematch is on (the results stay until closed)
    return [h("p", { class: "rematch-state", role: "status" }, "The rematch is on: a new race ",
      "in this room."), seated ? h("button", { class: "primary to-race", onclick: act.dismiss },
      "To the new race") : null];
  }
  const words = h("p", { class: "rematch-state", role: "status" },
    rematchWords(rematch, names));
  if (!seated) return rematch ? words : null;
  const open = rematch && !rematch.declined_by;
  if (!open) {
    return [h("button", { class: "primary rematch", onclick: () => act.rematch(true) },
      "Rematch"), rematch ? words : null];
  }
  if (rematch.waiting.includes(state.me)) {
    const asker = names.get(rematch.accepted[0]) ?? "A racer";
    words.textContent = `${asker} offers a rematch: ${rematchWords(rematch, names)}.`;
    return [h("button", { class: "primary rematch", onclick: () => act.rematch(true) },
      "Accept"), h("button", { class: "decline", onclick: () => act.rematch(false) }, "Decline"),
    words];
  }
  const waiting = rematch.waiting.map((id) => names.get(id) ?? "a racer");
  words.textContent = `${rematchWords(rematch, names)}: waiting for ${waiting.join(", ")}.`;
  return [h("button", { class: "decline", onclick: () => act.rematch(false) },
    "Cancel the rematch"), words];
}

// Bits of coloured paper falling once (race.css animates them).
function confetti() {
  return h("div", { class: "confetti", "aria-hidden": "true" },
    Array.from({ length: CONFETTI }, (_, index) => h("i", {
      style: `--x: ${(index * 37) % 100}%; --delay: ${(index % 6) * 0.08}s; `
        + `--hue: ${(index * 47) % 360}` })));
}
