// What the room page knows of its room and race, built from the server's messages alone.
//
// `state = reduce(state, message, { now })` is pure: no DOM, no clock, no network. `now` (Unix
// ms, given by the caller when the message arrived) is only read to stop a racer's clock when
// they finish. room.js feeds it the server's messages (room events, your view, the replies to
// your moves, live verdicts) and a few of its own (a refused move, a hint, the connection lost
// or back), then draws the state it returns. As clients/terminal_state.py does for the
// terminal racer.

export const OVER = new Set(["won", "lost", "resigned", "timed_out", "abandoned"]);
export const LOW_TIME_MS = 30_000;
const LOG_LENGTH = 12;

export function initialState({ code, watching = false, me = null, dealNumber = null } = {}) {
  return {
    code,
    watching, // a spectator: sees progress, never a board
    me, // your player_id (null for a spectator without a name)
    room: null, // the last `room` (RoomState), seats updated by progress
    view: null, // your board (ViewModel), updated by each accepted move
    lastSeq: 0,
    commitment: null,
    dealNumber,
    startsAtMs: null, // the countdown's end (Unix ms), while it runs
    finished: null, // race_finished
    stoppedAt: {}, // player_id -> Unix ms when their game ended (their clock stops there)
    lastMove: null, // { move, events }: your last accepted move
    log: [], // the latest moves and what followed them, newest last
    refusal: null, // { move, message }
    hint: null,
    verdict: null, // the solver's live verdict on your position (practice alone): live_verdict
    notice: "",
    lost: false, // the connection dropped; since when (Unix ms) in lostAt
    lostAt: null,
    back: false, // reconnected a moment ago: the page says so briefly ("settled" ends it)
    rematch: null, // the open rematch offer: { accepted, waiting, declined_by }
    result: null, // the last race_finished, kept on screen until dismissed or the next race
    heldMs: null, // a race time the clocks do not go below (see `restarted`)
  };
}

// Room events carry a seq; one seen already (live, then again in `resumed`) is applied once.
const EVENTS = new Set(["countdown", "race_started", "progress", "race_finished",
  "rematch_offer"]);

export function reduce(state, message, { now = 0 } = {}) {
  // Another room's messages (the one being left, still talking) are not this page's; nor are
  // events before this room's first snapshot.
  if (message.type === "room" && message.code !== state.code) return state;
  if ((EVENTS.has(message.type) || message.type === "view" || message.type === "move_ok")
    && !state.room) {
    return state;
  }
  if (EVENTS.has(message.type) && message.seq !== undefined && message.seq <= state.lastSeq
    && state.lastSeq !== 0) {
    return state;
  }
  const seen = typeof message.seq === "number" ? Math.max(state.lastSeq, message.seq)
    : state.lastSeq;
  const next = { ...state, lastSeq: seen };
  switch (message.type) {
    case "room":
      return roomMessage(next, message, now);
    case "countdown":
      return { ...next, startsAtMs: message.starts_at_ms };
    case "race_started":
      return {
        ...next, commitment: message.commitment, dealNumber: message.deal_number ?? null,
        startsAtMs: null, finished: null, stoppedAt: {}, view: null, lastMove: null, log: [],
        refusal: null, hint: null, verdict: null, result: null, rematch: null, heldMs: null,
        room: next.room && { ...next.room, started_at_ms: message.started_at_ms },
      };
    case "view":
      return { ...next, view: message.view, ...stopMine(next, message.view.status, now) };
    case "move_ok":
      return accepted(next, message, now);
    case "progress":
      return progress(next, message, now);
    case "race_finished":
      return { ...next, finished: message, result: { ...message, total: cardsInTheGame(next) },
        rematch: null,
        room: next.room && { ...next.room, phase: "finished" } };
    case "rematch_offer":
      return { ...next, rematch: { accepted: message.accepted, waiting: message.waiting,
        declined_by: message.declined_by ?? null } };
    case "dismiss": // the player closed the results
      return { ...next, result: null };
    case "resumed":
      return message.missed.reduce((s, missed) => reduce(s, missed, { now }),
        { ...next, notice: "", lost: false, lostAt: null });
    case "refused":
      return { ...next, refusal: message.message
        ? { move: message.move, message: message.message } : null };
    case "hint":
      return { ...next, hint: message };
    case "live_verdict":
      return { ...next, verdict: message };
    case "notice":
      return { ...next, notice: message.text };
    case "watching": // a join refused (full, or under way): watch instead
      return { ...next, watching: true, notice: message.text ?? "" };
    case "shutdown":
    case "lost":
      return { ...next, lost: true, lostAt: next.lostAt ?? now, back: false };
    case "reconnected": // what went wrong while away (a move refused as not connected) is past
      return { ...next, lost: false, lostAt: null, back: true, notice: "", refusal: null };
    case "settled":
      return { ...next, back: false };
    default:
      return state;
  }
}

// How many cards a game of this race has (the results do not say it).
function cardsInTheGame(state) {
  return state.view?.total ?? Math.max(0, ...(state.room?.seats ?? []).map((s) => s.total));
}

function roomMessage(state, room, now) {
  const previous = state.room;
  // Rematch: a finished room back in the lobby is a new race in the same room.
  const rematch = previous && previous.phase === "finished" && room.phase === "lobby";
  let next = { ...state, room: mergeProgress(room, previous),
    commitment: room.commitment ?? (rematch ? null : state.commitment),
    heldMs: restarted(state, room, now) };
  if (room.rematch !== undefined) next.rematch = offerOf(room.rematch, state.rematch);
  if (room.phase !== "countdown") next.startsAtMs = null;
  else if (room.starts_at_ms) next.startsAtMs = room.starts_at_ms;
  if (rematch || room.phase === "lobby") {
    next = { ...next, finished: null, view: null, stoppedAt: {}, lastMove: null, log: [],
      refusal: null, hint: null, verdict: null, dealNumber: rematch ? null : next.dealNumber,
      heldMs: null, rematch: rematch ? null : next.rematch };
  }
  // The room says its deal's number (a chosen one, a secret one once revealed): a reloaded
  // page shows it without having seen race_started.
  if (room.deal_number !== undefined && room.deal_number !== null) {
    next.dealNumber = room.deal_number;
  }
  for (const seat of room.seats) {
    if (OVER.has(seat.status) && next.stoppedAt[seat.player_id] === undefined) {
      next.stoppedAt = { ...next.stoppedAt, [seat.player_id]: now };
    }
  }
  return next;
}

// A room snapshot says everything; keep nothing of the previous one but what it has, and the
// order of its seats: the order the racers sat down, however the server lists them after a
// restart or a reconnection (newcomers last, in the server's order).
function mergeProgress(room, previous) {
  const before = new Map((previous?.seats ?? []).map((seat, index) => [seat.player_id, index]));
  const place = (seat) => before.get(seat.player_id) ?? before.size;
  const seats = room.seats.map((seat, index) => ({ seat, index }))
    .sort((a, b) => place(a.seat) - place(b.seat) || a.index - b.index)
    .map(({ seat }) => ({ ...seat }));
  return { ...room, seats,
    started_at_ms: room.started_at_ms ?? (room.phase !== "lobby" ? previous?.started_at_ms : null)
      ?? null };
}

// The room's open rematch offer (RoomState.rematch): null once the offer is over, unless the
// last word on it was a decline, which stays said until a new offer.
function offerOf(offer, previous) {
  if (offer) return { accepted: offer.accepted, waiting: offer.waiting, declined_by: null };
  return previous?.declined_by ? previous : null;
}

// A server that restarts restores the race with the outage charged to nobody: its start moves
// later, and the race time computed from it drops below what the page showed. The clocks then
// hold the time already shown (until the real one catches up with it) rather than run
// backwards; the hold is the race time the old start gave when the new one arrived.
function restarted(state, room, now) {
  const before = state.room?.started_at_ms;
  const after = room.started_at_ms;
  if (room.phase !== "racing" || !before || !after || after <= before) return state.heldMs;
  return Math.max(state.heldMs ?? 0, now - before);
}

function progress(state, event, now) {
  if (!state.room) return state;
  const { on_foundations, total, moves, status } = event;
  const seats = state.room.seats.map((seat) => (seat.player_id === event.player_id
    ? { ...seat, on_foundations, total, moves, status } : seat));
  let stoppedAt = state.stoppedAt;
  if (OVER.has(status) && stoppedAt[event.player_id] === undefined) {
    stoppedAt = { ...stoppedAt, [event.player_id]: now };
  }
  return { ...state, room: { ...state.room, seats }, stoppedAt };
}

function stopMine(state, status, now) {
  if (!state.me || !OVER.has(status) || state.stoppedAt[state.me] !== undefined) return {};
  return { stoppedAt: { ...state.stoppedAt, [state.me]: now } };
}

function accepted(state, ack, now) {
  if (!state.view) return state;
  const changed = new Map(ack.changed.map((pile) => [pile.pile, pile]));
  const view = {
    ...state.view,
    piles: state.view.piles.map((pile) => changed.get(pile.pile) ?? pile),
    legal_moves: ack.legal_moves, status: ack.status, reason: ack.reason ?? "",
    on_foundations: ack.on_foundations, moves: ack.moves, notes: ack.notes,
  };
  const lastMove = { move: ack.move, events: ack.events };
  const lastSeq = typeof ack.seq === "number" ? Math.max(state.lastSeq, ack.seq) : state.lastSeq;
  let next = { ...state, view, lastMove, lastSeq, refusal: null,
    log: [...state.log, lastMove].slice(-LOG_LENGTH) };
  // Your own progress event is not sent to you: the reply says the same figures.
  if (state.me) {
    next = progress(next, { player_id: state.me, on_foundations: ack.on_foundations,
      total: view.total, moves: ack.moves,
      status: ack.status === "in_progress" ? "racing" : ack.status }, now);
  }
  return { ...next, ...stopMine(next, ack.status, now) };
}

// -- what the view reads ----------------------------------------------------------------------

// A quick race's room in the lobby of its first race, as the room says: it starts by itself
// once the players matched into it are in (docs/protocol.md, "Quick race"), and nobody is asked
// to get ready. Its rematch is raced as in any room.
export function startsByItself(state) {
  return Boolean(state.room?.starts_by_itself);
}

export function mySeat(state) {
  return state.room?.seats.find((seat) => seat.player_id === state.me) ?? null;
}

// A racer's race time (ms) at `now`: stopped when their game ended (the result's own time once
// the race is over), null before the start.
export function raceTime(state, playerId, now) {
  const entry = state.finished?.ranking.find((e) => e.player_id === playerId);
  if (entry && entry.time_ms !== null && entry.time_ms !== undefined) return entry.time_ms;
  const started = state.room?.started_at_ms;
  if (!started) return null;
  const stopped = state.stoppedAt[playerId];
  if (stopped !== undefined) return Math.max(0, stopped - started);
  if (state.finished) return null;
  return Math.max(0, now - started, state.heldMs ?? 0);
}

// The time left of a race with a limit (ms), or null.
export function timeLeft(state, playerId, now) {
  const limit = state.room?.time_limit_s;
  const elapsed = raceTime(state, playerId, now);
  if (!limit || elapsed === null) return null;
  return Math.max(0, limit * 1000 - elapsed);
}

export function lowTime(state, playerId, now) {
  const left = timeLeft(state, playerId, now);
  return left !== null && left <= LOW_TIME_MS && state.stoppedAt[playerId] === undefined;
}

// Is my own game over (won, lost, resigned, out of time)?
export function myGameOver(state) {
  const seat = mySeat(state);
  return Boolean((state.view && OVER.has(state.view.status)) || (seat && OVER.has(seat.status))
    || (state.finished && seat));
}

export function ordinal(n) {
  const tens = n % 100;
  if (tens >= 11 && tens <= 13) return `${n}th`;
  return `${n}${{ 1: "st", 2: "nd", 3: "rd" }[n % 10] ?? "th"}`;
}

// What happened to a racer, as their own headline says it (before their place).
const YOUR_RESULT = { won: "You cleared the deal", lost: "No move left",
  resigned: "You resigned", timed_out: "Time's up", abandoned: "You left the race" };
const THEIR_RESULT = { won: "cleared the deal", lost: "had no move left",
  resigned: "resigned", timed_out: "ran out of time", abandoned: "left the race" };

// The result's headline: "You won the race" (first, the deal cleared), "You cleared the deal –
// 3rd of 3", "Time's up – 2nd of 4"; alone, no place. "Waiting for Bob…" (with your own
// result first) while others still race; a spectator's names the winner.
export function finishHeadline(state, clock) {
  if (state.result) {
    const ranking = state.result.ranking;
    const mine = ranking.find((e) => e.player_id === state.me);
    if (mine) {
      if (mine.status === "won" && mine.rank === 1 && ranking.length > 1) return "You won the race";
      const what = YOUR_RESULT[mine.status] ?? mine.status;
      return ranking.length > 1 ? `${what} – ${placeWords(mine, ranking)}` : what;
    }
    const first = ranking[0];
    if (!first) return "The race is over";
    return first.status === "won" ? `${first.name} won the race${first.time_ms != null
      ? `, ${clock(first.time_ms)}` : ""}` : `The race is over: ${first.name} came 1st`;
  }
  const racing = (state.room?.seats ?? []).filter((seat) => seat.player_id !== state.me
    && !OVER.has(seat.status));
  const waiting = racing.length ? `Waiting for ${names(racing.map((s) => s.name))}…`
    : "Waiting for the result…";
  const status = state.view?.status ?? mySeat(state)?.status;
  if (!status || !OVER.has(status)) return waiting;
  const time = raceTime(state, state.me, 0);
  return `${YOUR_RESULT[status] ?? status}${time !== null ? `, ${clock(time)}` : ""}. ${waiting}`;
}

// A racer's place: "2nd of 4"; "joint 1st of 2" when another racer shares it (equal cards
// home, reached at the same moment: docs/protocol.md, "Ranking").
export function placeWords(entry, ranking) {
  const shared = ranking.some((other) => other !== entry && other.rank === entry.rank);
  return `${shared ? "joint " : ""}${ordinal(entry.rank)} of ${ranking.length}`;
}

// A racer's result in a few words: "cleared the deal", "resigned".
export function resultWords(status) {
  return THEIR_RESULT[status] ?? status;
}

// "1 move", "2 moves".
export function counted(n, word) {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function names(list) {
  if (list.length <= 1) return list.join("");
  return `${list.slice(0, -1).join(", ")} and ${list[list.length - 1]}`;
}

// A rating as players are shown it (docs/protocol.md, "Ratings"): the shown figure, with "?"
// while it is provisional (the first races say little), and its change "+12", "−8", "±0",
// taken between the shown figures, so that a loss never reads as a gain. "–" for an unrated
// race.
export function ratingText(rating) {
  if (!rating) return "–";
  const change = rating.after.shown - rating.before.shown;
  const sign = change > 0 ? "+" : change < 0 ? "−" : "±";
  return `${ratingFigure(rating.after)} (${sign}${Math.abs(change)})`;
}

export function ratingFigure(rating) {
  return `${rating.shown}${rating.provisional ? "?" : ""}`;
}

// The names the board shows: each racer's own, and where two racers share one, a short tag
// from their player id that tells them apart ("Ann ·k3F", "Ann ·9xQ").
export function boardNames(seats) {
  const tags = nameTags(seats);
  return new Map(seats.map((seat) => [seat.player_id,
    `${seat.name}${tags.get(seat.player_id) ? ` ${tags.get(seat.player_id)}` : ""}`]));
}

// The tags alone ("·k3F"; "" for a name nobody else has), for a strip that cuts names short.
export function nameTags(seats) {
  const count = new Map();
  for (const seat of seats) count.set(seat.name, (count.get(seat.name) ?? 0) + 1);
  return new Map(seats.map((seat) => [seat.player_id,
    count.get(seat.name) > 1 ? `·${seat.player_id.slice(-3)}` : ""]));
}

// Where each racer stands now: the finished race's ranks; during the race, by cards home
// (equal counts share a place).
export function standings(state) {
  const ranks = new Map();
  if (state.finished) {
    for (const entry of state.finished.ranking) ranks.set(entry.player_id, entry.rank);
    return ranks;
  }
  const seats = state.room?.seats ?? [];
  for (const seat of seats) {
    ranks.set(seat.player_id,
      1 + seats.filter((other) => other.on_foundations > seat.on_foundations).length);
  }
  return ranks;
}

// The rematch offer in words: "2 of 3 want a rematch"; "Bob declined the rematch".
export function rematchWords(offer, seatNames) {
  if (!offer) return "";
  if (offer.declined_by) {
    return `${seatNames.get(offer.declined_by) ?? "A racer"} declined the rematch.`;
  }
  const total = offer.accepted.length + offer.waiting.length;
  return `${offer.accepted.length} of ${total} want a rematch`;
}
