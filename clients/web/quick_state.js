// Quick race in the lobby (docs/protocol.md, "Quick race"): how many wait for each game, and
// the player's own search, from the press of the button to the room.
//
// `state = reduceQuick(state, message)` is pure, as room_state.js is: quick_race.js feeds it the
// counts of GET /api/quick, what the player asked for, and the server's replies and messages
// (`queued`, `queue`, `matched`), then draws the state it returns.

export const BOT_AFTER_S = { min: 5, max: 600, usual: 30 }; // quick_race's `bot_after_s`

export function initialQuick() {
  return {
    counts: {}, // rule set -> { rated, unrated }: players waiting now
    seeking: null, // { rule_set, rated, bot_after_s, waiting, window, waited_s, lost }
    matched: null, // the `matched` message, once a room is found
  };
}

export function reduceQuick(state, message) {
  switch (message.type) {
    case "counts": // GET /api/quick
      return { ...state, counts: message.waiting };
    case "seek": // the player pressed Quick race (sent, not yet answered)
      return { ...state, matched: null, seeking: { rule_set: message.rule_set,
        rated: message.rated, bot_after_s: message.bot_after_s, waiting: null, window: null,
        waited_s: 0, lost: false } };
    case "queued":
    case "queue":
      return queueWord(state, message);
    case "matched":
      return { ...state, seeking: null, matched: message };
    case "lost": // the connection dropped: the server forgot the search, net.js reconnects
      return state.seeking ? { ...state, seeking: { ...state.seeking, lost: true } } : state;
    case "stopped": // cancelled, or refused
      return { ...state, seeking: null };
    default:
      return state;
  }
}

// The server's word on the queue the player is in (its reply, then one every wave): the count
// and the window, which are also that game's count in the list.
function queueWord(state, message) {
  const { seeking } = state;
  if (!seeking || message.rule_set !== seeking.rule_set || message.rated !== seeking.rated) {
    return state;
  }
  const kind = message.rated ? "rated" : "unrated";
  const counts = { ...state.counts,
    [message.rule_set]: { ...state.counts[message.rule_set], [kind]: message.waiting } };
  return { ...state, counts, seeking: { ...seeking, waiting: message.waiting,
    window: message.window ?? null, waited_s: message.waited_s ?? seeking.waited_s,
    lost: false } };
}

// How many wait for a game's rated (or unrated) quick race: "nobody waiting", "2 waiting".
export function waitingCount(state, ruleSet, rated) {
  return state.counts[ruleSet]?.[rated ? "rated" : "unrated"] ?? 0;
}

export function waitingWords(count) {
  return count ? `${count} waiting` : "nobody waiting";
}

// "Looking for racers: 3 waiting, window ±150" ("any rating" in an unrated queue, or once
// the window is open to everyone); before the server's first word, "Looking for racers…".
export function seekingWords(seeking) {
  if (seeking.lost) return "Connection lost – asking again once back…";
  if (seeking.waiting === null) return "Looking for racers…";
  const window = seeking.window === null ? "any rating" : `window ±${seeking.window}`;
  return `Looking for racers: ${seeking.waiting} waiting, ${window}`;
}

// The practice bot's choice as the request says it: a whole number of seconds in range, or
// null for no bot.
export function botAfter(enabled, seconds) {
  if (!enabled) return null;
  const value = Math.round(Number(seconds));
  if (!Number.isFinite(value)) return BOT_AFTER_S.usual;
  return Math.min(BOT_AFTER_S.max, Math.max(BOT_AFTER_S.min, value));
}
