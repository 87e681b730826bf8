// The racers' strip: a line per racer with their place, name, cards home as a bar and clock.
// Beside the board in landscape; above it on a phone, where up to eight racers share two rows
// of four cells of a fixed height, so that nothing wraps or grows as opponents move (their
// names cut short with an ellipsis; the clocks in fixed-width digits).
//
// room.js keeps the clocks ticking: each is a [data-clock-for] element it fills ten times a
// second.

import { botTag, h, statusWord } from "./dom.js";
import { boardNames, counted, mySeat, nameTags, standings } from "./room_state.js";

const PER_ROW = 4; // racers in a row of the phone's strip

export function seatStrip(state) {
  const { room } = state;
  const me = mySeat(state);
  const lobby = room.phase === "lobby";
  const shownNames = boardNames(room.seats);
  const tags = nameTags(room.seats);
  const ranks = standings(state);
  const rows = room.seats.map((seat) => {
    const name = shownNames.get(seat.player_id);
    const share = seat.total ? (100 * seat.on_foundations) / seat.total : 0;
    return h("li", { class: `seat ${seat === me ? "mine" : ""} ${lobby ? "" : "racing"} ${
      seat.connected ? "" : "away"}`,
      "data-player": seat.name, "data-player-id": seat.player_id },
    h("span", { class: "seat-rank", "aria-label": lobby ? null : `place ${ranks.get(
      seat.player_id)}` }, lobby ? "" : String(ranks.get(seat.player_id))),
    h("span", { class: `dot ${seat.connected ? "on" : "off"}`,
      title: seat.connected ? "connected" : "disconnected" }),
    h("span", { class: "who", title: name }, h("span", { class: "name" }, seat.name),
      tags.get(seat.player_id) ? h("span", { class: "name-tag" }, tags.get(seat.player_id))
        : null, botTag(seat.bot)),
    lobby && seat.player_id === room.host ? h("span", { class: "tag" }, "host") : null,
    lobby ? h("span", { class: `ready ${seat.ready ? "yes" : "no"}` },
      seat.ready ? "✓ ready" : "not ready")
      : h("span", { class: "seat-clock", "data-clock-for": seat.player_id }, ""),
    lobby ? null : h("div", { class: "bar", role: "progressbar", "aria-valuemin": 0,
      "aria-valuemax": seat.total || 52, "aria-valuenow": seat.on_foundations,
      "aria-label": `${name}: cards home` },
    h("div", { class: "fill", style: `width: ${share}%` })),
    lobby ? null : h("span", { class: "seat-progress" },
      `${seat.on_foundations}/${seat.total} home · ${counted(seat.moves, "move")} · `,
      h("span", { class: `status ${seat.status}` }, statusWord(seat.status))));
  });
  return h("section", { class: "seats", "aria-label": "racers" },
    h("ul", { style: `--per-row: ${Math.min(PER_ROW, Math.max(1, rows.length))}` }, rows),
    room.spectators ? h("p", { class: "quiet watchers" }, `${room.spectators} watching`) : null);
}
