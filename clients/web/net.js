// The WebSocket connection (docs/protocol.md), the player's identity, and the HTTP API.
//
// One Connection serves the whole page. Requests get an `id` and a promise of their reply;
// everything else the server sends (room events, your view) goes to the listeners. If the
// socket drops, it reconnects to the server's address, says hello with the stored token, then
// tells the listeners ("reconnected") so the room page can `resume` with the last seq it saw.
// When the room is held by another worker of the server, `moveTo` moves to that worker's own
// address (`reconnect_to`, docs/protocol.md "Workers") to skip a hop per request.

const IDENTITY_KEY = "patience-race.identity";
const RECONNECT_DELAY_MS = 1000;

export class Refused extends Error {
  constructor(error) {
    super(error.message);
    this.code = error.code;
  }
}

// The player: { name, token, player_id }, kept in localStorage, or null.
export const identity = {
  get() {
    try {
      return JSON.parse(localStorage.getItem(IDENTITY_KEY));
    } catch {
      return null;
    }
  },
  set(value) {
    localStorage.setItem(IDENTITY_KEY, JSON.stringify(value));
  },
  forget() {
    localStorage.removeItem(IDENTITY_KEY);
  },
};

export async function getJson(path) {
  const response = await fetch(path);
  const body = await response.json();
  if (!response.ok) throw new Refused({ code: body.error, message: body.message });
  return body;
}

export class Connection {
  constructor(url) {
    this.url = url;
    this.socket = null;
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = new Set();
    this.opening = null;
    this.room = null; // the code of the room this connection is in (lobby.js keeps it)
  }

  // Listen to every message that is not a reply, and to {type: "reconnected"} / {type: "lost"}.
  listen(listener) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // Connected and identified: resolves with the player ({ name, token, player_id }), or, for
  // a spectator without a name (`anonymous`), null: connected without an identity.
  ready({ anonymous = false } = {}) {
    if (anonymous && !identity.get()?.name) this.anonymous = true;
    if (!this.opening) {
      this.opening = this.connect().catch((error) => {
        this.opening = null;
        throw error;
      });
    }
    return this.opening;
  }

  async connect() {
    await new Promise((resolve, reject) => {
      const socket = new WebSocket(this.url);
      socket.onopen = () => resolve();
      socket.onerror = () => reject(new Error(`cannot connect to ${this.url}`));
      socket.onmessage = (event) => this.receive(JSON.parse(event.data), socket);
      socket.onclose = () => this.dropped(socket);
      this.socket = socket;
    });
    return this.hello();
  }

  // The player changed their name: say hello again as the new player, if connected.
  async identify() {
    this.anonymous = false;
    if (this.socket?.readyState === WebSocket.OPEN) await this.hello();
  }

  async hello(socket = this.socket) {
    const known = identity.get();
    if (known?.token) {
      try {
        await this.request({ type: "hello", token: known.token, own_progress: false }, socket);
        return known;
      } catch (error) {
        if (error.code !== "bad_token") throw error;
        identity.forget();
      }
    }
    if (!known?.name && this.anonymous) {
      await this.request({ type: "hello", own_progress: false }, socket);
      return null;
    }
    if (!known?.name) throw new Refused({ code: "no_name", message: "choose a name first" });
    const welcome = await this.request({ type: "hello", name: known.name, own_progress: false });
    const player = { name: welcome.name, token: welcome.token, player_id: welcome.player_id };
    identity.set(player);
    return player;
  }

  request(message, socket = this.socket) {
    const id = String(this.nextId++);
    return new Promise((resolve, reject) => {
      if (socket?.readyState !== WebSocket.OPEN) {
        reject(new Refused({ code: "offline", message: "not connected to the server" }));
        return;
      }
      this.pending.set(id, { resolve, reject, socket });
      socket.send(JSON.stringify({ ...message, id }));
    });
  }

  // Replies from any socket; the rest only from the current one (one being left is not heard:
  // what it would still say comes again on the new one).
  receive(message, socket) {
    const waiting = message.id != null && this.pending.get(message.id);
    if (waiting) {
      this.pending.delete(message.id);
      if (message.type === "error") waiting.reject(new Refused(message));
      else waiting.resolve(message);
    } else if (socket === this.socket) {
      this.emit(message);
    }
  }

  // Move to a worker's own address: a new socket there says hello, becomes the current one,
  // and `rejoin` (resume, or spectate) runs on it; only then the old socket closes, so the
  // room never sees the player away. A later drop still reconnects to `this.url`. False (and
  // nothing changed) if that worker cannot be reached.
  async moveTo(address, rejoin) {
    const old = this.socket;
    const socket = new WebSocket(address);
    socket.onmessage = (event) => this.receive(JSON.parse(event.data), socket);
    socket.onclose = () => this.dropped(socket);
    try {
      await new Promise((resolve, reject) => {
        socket.onopen = resolve;
        socket.onerror = reject;
      });
      await this.hello(socket);
    } catch {
      socket.close();
      return false;
    }
    this.socket = socket;
    try {
      await rejoin();
    } finally {
      old.close();
    }
    return true;
  }

  emit(message) {
    for (const listener of [...this.listeners]) listener(message);
  }

  dropped(socket) {
    for (const [id, waiting] of this.pending) {
      if (waiting.socket !== socket) continue;
      this.pending.delete(id);
      waiting.reject(new Refused({ code: "offline", message: "the connection dropped" }));
    }
    if (socket !== this.socket) return;
    this.opening = null;
    this.emit({ type: "lost" });
    setTimeout(() => this.reconnect(), RECONNECT_DELAY_MS);
  }

  async reconnect() {
    try {
      await this.ready();
      this.emit({ type: "reconnected" });
    } catch {
      setTimeout(() => this.reconnect(), RECONNECT_DELAY_MS);
    }
  }
}

export function serverUrl() {
  const scheme = location.protocol === "https:" ? "wss" : "ws";
  return `${scheme}://${location.host}/ws`;
}
