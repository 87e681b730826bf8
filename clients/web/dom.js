// Small helpers for building the pages.

// h("button", { class: "go", onclick: fn }, "Start") -> <button class="go">Start</button>.
// Attributes are set as written (false and null leave them out); `on...` adds a listener.
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on")) element.addEventListener(name.slice(2), value);
    else element.setAttribute(name, value === true ? "" : value);
  }
  element.append(...children.flat().filter((child) => child !== null && child !== undefined
    && child !== false));
  return element;
}

// The small "bot" beside the name of a player who is a program playing by itself (the
// account's `bot`, docs/protocol.md), on every board; null for a person.
export function botTag(bot) {
  return bot ? h("span", { class: "bot-tag", title: "a program playing by itself" }, "bot")
    : null;
}

// 83456 -> "1:23.4"
export function clock(ms) {
  if (ms === null || ms === undefined) return "–";
  const tenths = Math.floor(Math.max(0, ms) / 100);
  const minutes = Math.floor(tenths / 600);
  const seconds = ((tenths % 600) / 10).toFixed(1).padStart(4, "0");
  return `${minutes}:${seconds}`;
}

// What followed a move, shortened (a redeal deals a hundred cards, one event each).
export function eventsText(events, most = 6) {
  const shown = events.slice(0, most).join("; ");
  return events.length > most ? `${shown}; and ${events.length - most} more` : shown;
}

export const STATUS_WORDS = {
  waiting: "waiting", racing: "racing", in_progress: "playing", won: "won", lost: "no move left",
  resigned: "resigned", timed_out: "out of time", abandoned: "abandoned (gone or idle)",
};

export function statusWord(status) {
  return STATUS_WORDS[status] ?? status;
}
