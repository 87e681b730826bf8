// A patience-race racer in Node, written from docs/protocol.md alone: the `ws` package and JSON.
//
//   node racer.mjs ws://127.0.0.1:8765/ws CODE [NAME]
//   node racer.mjs ws://127.0.0.1:8765/ws --quick RULE_SET [NAME]
//
// It says hello as what it is, a program playing by itself (`bot`: marked so on every board,
// never rated), joins the room by its code and gets ready, or with --quick waits in that rule
// set's quick race queue until the server matches it into a room ("Quick race": the unrated
// queue, as bots race unrated; a quick room starts by itself once its racers are in). When its
// board arrives it plays until its game is over: a card home when it can (a move whose target
// is a foundation), otherwise anything but a redeal, and a redeal or resignation when only
// moves that shuffle cards about are left. It prints each move and the final ranking, then exits (0, or 1 on an error).

import WebSocket from "ws";

const args = process.argv.slice(2);
const quick = args[1] === "--quick";
const [url, target, name = "Node"] = quick ? [args[0], ...args.slice(2)] : args;
if (!url || !target) {
  console.error("usage: node racer.mjs WS_URL (ROOM_CODE | --quick RULE_SET) [NAME]");
  process.exit(2);
}

const HOME = /-> (foundation|ace|king|kings)(:\d+)?$/;
const PATIENCE = 300; // moves without a card going home before giving up, as a person would

const socket = new WebSocket(url);
const pending = new Map(); // request id -> resolve
let nextId = 1;
let lastSeq = 0;
let idle = 0;
let home = -1;
let playing = Promise.resolve(); // our own game, until it is over

function request(message) {
  const id = String(nextId++);
  socket.send(JSON.stringify({ ...message, id }));
  return new Promise((resolve) => pending.set(id, resolve));
}

function choose(legalMoves, onFoundations) {
  idle = onFoundations === home ? idle + 1 : 0;
  home = onFoundations;
  const moves = legalMoves.filter((move) => move !== "resign");
  if (moves.length === 0) return "resign";
  if (idle > PATIENCE) return moves.includes("redeal") ? "redeal" : "resign";
  return moves.find((move) => HOME.test(move)) ?? moves.find((move) => move !== "redeal")
    ?? moves[0];
}

async function play(view) {
  let { legal_moves: legal, on_foundations: onFoundations, status } = view;
  while (status === "in_progress") {
    const move = choose(legal, onFoundations);
    let reply = await request({ type: "move", move });
    while (reply.type === "error" && reply.code === "rate_limited") {
      await new Promise((resolve) => setTimeout(resolve, 100));
      reply = await request({ type: "move", move });
    }
    if (reply.type === "error") throw new Error(`${move}: ${reply.code}: ${reply.message}`);
    console.log(`${name}: ${reply.move}${reply.events.length ? "  (" + reply.events.join("; ") + ")" : ""}`);
    ({ legal_moves: legal, on_foundations: onFoundations, status } = reply);
  }
  console.log(`${name}: my game is over: ${status}, ${onFoundations} cards home`);
}

socket.on("message", (data) => {
  const message = JSON.parse(data.toString());
  // Room events, and move_ok: this client says own_progress: false in its hello, so the room's
  // progress event for its own move is not sent to it; the reply carries its seq instead.
  if (message.seq && (!message.id || message.type === "move_ok")) {
    if (lastSeq && message.seq > lastSeq + 1) console.log(`(missed room events after ${lastSeq})`);
    lastSeq = Math.max(lastSeq, message.seq);
  }
  if (message.id && pending.has(message.id)) {
    pending.get(message.id)(message);
    pending.delete(message.id);
    return;
  }
  if (message.type === "queue") {
    console.log(`${name}: ${message.waiting} waiting for ${message.rule_set}`);
  } else if (message.type === "matched") {
    console.log(`${name}: matched into ${message.code} with ${message.racers - 1} other racer(s)`);
  } else if (message.type === "view") {
    playing = play(message.view).catch((error) => {
      console.error(error.message);
      process.exit(1);
    });
  } else if (message.type === "race_finished") {
    // The reply to our last move may have come in the same read: let play() print it first.
    playing.then(() => {
      console.log(JSON.stringify({ race_id: message.race_id, seed: message.seed,
        ranking: message.ranking.map(({ rank, name, status, on_foundations }) =>
          ({ rank, name, status, on_foundations })) }));
      socket.close();
    });
  }
});

// The requests that bring it into a race; the `room` of a quick race comes after `matched`.
const HELLO = ["hello", { name, own_progress: false, bot: true }];
const ENTER = quick ? [HELLO, ["quick_race", { rule_set: target, rated: false }]]
  : [HELLO, ["join", { code: target }], ["ready", {}]];

socket.on("open", async () => {
  for (const [type, fields] of ENTER) {
    const reply = await request({ type, ...fields });
    if (reply.type === "error") {
      console.error(`${type}: ${reply.code}: ${reply.message}`);
      process.exit(1);
    }
    if (type === "join") lastSeq = Math.max(lastSeq, reply.seq);
  }
  console.log(quick ? `${name}: queued for ${target}` : `${name}: joined ${target}, ready`);
});

socket.on("close", () => process.exit(0));
socket.on("error", (error) => {
  console.error(error.message);
  process.exit(1);
});
