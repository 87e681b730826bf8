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
  };
}

// Room events carry a seq; one seen already (live, then again in `resumed`) is applied once.
const EVENTS = new Set(["countdown", "race_started", "progress", "race_finished"]);

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
        refusal: null, hint: null, verdict: null,
        room: next.room && { ...next.room, started_at_ms: message.started_at_ms },
      };
    case "view":
      return { ...next, view: message.view, ...stopMine(next, message.view.status, now) };
    case "move_ok":
      return accepted(next, message, now);
    case "progress":
      return progress(next, message, now);
    case "race_finished":
      return { ...next, finished: message,
        room: next.room && { ...next.room, phase: "finished" } };
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
      return { ...next, lost: true, lostAt: next.lostAt ?? now,
        notice: "The connection dropped: reconnecting…" };
    case "reconnected":
      return { ...next, lost: false, lostAt: null, notice: "" };
    default:
      return state;
  }
}

function roomMessage(state, room, now) {
  const previous = state.room;
  // Rematch: a finished room back in the lobby is a new race in the same room.
  const rematch = previous && previous.phase === "finished" && room.phase === "lobby";
  let next = { ...state, room: mergeProgress(room, previous),
    commitment: room.commitment ?? (rematch ? null : state.commitment) };
  if (room.phase !== "countdown") next.startsAtMs = null;
  else if (room.starts_at_ms) next.startsAtMs = room.starts_at_ms;
  if (rematch || room.phase === "lobby") {
    next = { ...next, finished: null, view: null, stoppedAt: {}, lastMove: null, log: [],
      refusal: null, hint: null, verdict: null, dealNumber: rematch ? null : next.dealNumber };
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

// A room snapshot says everything; keep nothing of the previous one but what it has.
function mergeProgress(room, previous) {
  return { ...room, seats: room.seats.map((seat) => ({ ...seat })),
    started_at_ms: room.started_at_ms ?? (room.phase !== "lobby" ? previous?.started_at_ms : null)
      ?? null };
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
  return Math.max(0, now - started);
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

const RESULT_WORDS = { won: "won", lost: "ran out of moves", resigned: "resigned",
  timed_out: "ran out of time", abandoned: "left the race" };

// The finish panel's headline: "You won, 1st of 3, 2:41.3" once the race is over;
// "Waiting for Bob…" (with your own result first) while others still race.
export function finishHeadline(state, clock) {
  const total = state.room?.seats.length ?? 0;
  if (state.finished) {
    const ranking = state.finished.ranking;
    const mine = ranking.find((e) => e.player_id === state.me);
    if (mine) {
      const time = mine.time_ms !== null && mine.time_ms !== undefined ? `, ${clock(mine.time_ms)}`
        : "";
      const verb = mine.status === "won" ? "You won" : `You ${RESULT_WORDS[mine.status]
        ?? mine.status}`;
      return `${verb}, ${ordinal(mine.rank)} of ${ranking.length}${time}`;
    }
    const first = ranking[0];
    if (!first) return "The race is over";
    return first.status === "won" ? `${first.name} won${first.time_ms != null
      ? `, ${clock(first.time_ms)}` : ""}` : `The race is over: ${first.name} came 1st`;
  }
  const racing = (state.room?.seats ?? []).filter((seat) => seat.player_id !== state.me
    && !OVER.has(seat.status));
  const waiting = racing.length ? `Waiting for ${names(racing.map((s) => s.name))}…`
    : "Waiting for the result…";
  const status = state.view?.status ?? mySeat(state)?.status;
  if (!status || !OVER.has(status)) return waiting;
  const verb = status === "won" ? "You won your game" : `You ${RESULT_WORDS[status] ?? status}`;
  const time = raceTime(state, state.me, 0);
  return `${verb}${time !== null && total ? `, ${clock(time)}` : ""}. ${waiting}`;
}

function names(list) {
  if (list.length <= 1) return list.join("");
  return `${list.slice(0, -1).join(", ")} and ${list[list.length - 1]}`;
}

// A racer's rating after the race and its change: "18.4 (+2.1)"; "–" for an unrated race.
export function ratingText(rating) {
  if (!rating) return "–";
  const change = rating.after.ordinal - rating.before.ordinal;
  const sign = change >= 0 ? "+" : "−";
  return `${rating.after.ordinal.toFixed(1)} (${sign}${Math.abs(change).toFixed(1)})`;
}
