// The signed-in person's live events (GET /v1/events). EventSource cannot send the Authorization header,
// so the stream is read with fetch and parsed here as Server-Sent Events; each event is announced on the
// page's bus as "stream:<type>", every (re)connection as "stream-open", every stream lost as "stream-lost", and
// one cut off (rather than ended by the server) as "stream-cut", for connection.js to see whether the server is
// there.
import { fromServer } from './api.js';
import { emit, on } from './bus.js';
import { bearer, endSession } from './session.js';

// Until the stream's own "retry:" line says otherwise; the server sends 3000. The base of the backoff below.
const DEFAULT_RETRY_MS = 3000;
// A stream that worked and then ended was most likely cut by a restart or a change of network: it is tried
// again after this (and up to half again), so that live updates are back within about two seconds of the
// server; while the server cannot be reached at all, connection.js says when it answers again.
const RECONNECT_MS = 1000;
// A stream that ends before this without delivering anything did not work (a busy server, or more tabs than
// the five streams a person may hold, pushing each other out): the wait doubles, up to MAX_BACKOFF_MS.
const HEALTHY_STREAM_MS = 10000;
const MAX_BACKOFF_MS = 60000;

let controller = null;
let lastEventId = null;
let retryMs = DEFAULT_RETRY_MS;
let retryTimer = null;
// Streams in a row that ended early without an event; reset by any event.
let failures = 0;
// Set by the parser when an event arrives.
let delivered = false;
// A try is due (retryTimer runs).
let waiting = false;
// The server may be away (the last stream was cut off, or a request did not reach it): the next try starts as
// soon as the server answers anything, rather than when the timer says.
let awaitingServer = false;

export function initStream() {
  on('session', (account) => (account ? start() : stop()));
  on('server-unreachable', () => {
    if (waiting) awaitingServer = true;
  });
  on('server-reachable', () => {
    if (!waiting || !awaitingServer || !controller) return;
    clearTimeout(retryTimer);
    connect(controller.signal);
  });
}

function start() {
  stop();
  controller = new AbortController();
  connect(controller.signal);
}

function stop() {
  controller?.abort();
  controller = null;
  clearTimeout(retryTimer);
  waiting = false;
  awaitingServer = false;
  // A new sign-in starts from now, not from another person's last event.
  lastEventId = null;
  failures = 0;
}

async function connect(signal) {
  const opened = Date.now();
  let serverWait = 0;
  delivered = false;
  waiting = false;
  awaitingServer = false;
  let reached = false;
  let cut = false;
  try {
    const token = bearer();
    if (!token) return;
    const headers = { Authorization: `Bearer ${token}`, Accept: 'text/event-stream' };
    if (lastEventId !== null) headers['Last-Event-ID'] = lastEventId;
    const response = await fetch('/v1/events', { headers, signal, cache: 'no-store' });
    reached = fromServer(response);
    if (reached) emit('server-reachable');
    if (response.status === 401) {
      endSession();
      return;
    }
    serverWait = Number(response.headers.get('Retry-After')) * 1000 || 0;
    if (response.ok && response.body) {
      emit('stream-open');
      await read(response.body, signal);
    }
  } catch {
    // A dropped connection, or the server going away: retried below, as SSE clients do.
    cut = reached;
  }
  if (signal.aborted) return;
  failures = delivered || Date.now() - opened >= HEALTHY_STREAM_MS ? 0 : failures + 1;
  const backoff = failures === 0 ? RECONNECT_MS : Math.min(retryMs * 2 ** failures, MAX_BACKOFF_MS);
  // Up to half again at random, so that the tabs and phones a restart cut off do not all come back at once.
  const wait = Math.max(serverWait, backoff * (1 + Math.random() / 2));
  waiting = true;
  retryTimer = setTimeout(() => connect(signal), wait);
  // A stream cut off again and again soon after opening (a proxy's short timeout, say) waits its backoff out.
  awaitingServer = !reached || (cut && failures <= 1);
  emit('stream-lost');
  if (!reached) emit('server-unreachable');
  else if (cut) emit('stream-cut');
}

async function read(body, signal) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  signal.addEventListener('abort', () => reader.cancel().catch(() => {}));
  const parser = new EventParser();
  for (;;) {
    const { value, done } = await reader.read();
    if (done || signal.aborted) return;
    parser.feed(value);
  }
}

// The event stream format of the WHATWG HTML standard: lines of "field: value", an event ending at a blank
// line, comments starting with ":".
class EventParser {
  constructor() {
    this.buffer = '';
    this.reset();
  }

  reset() {
    this.type = '';
    this.data = [];
    this.id = null;
  }

  feed(text) {
    this.buffer += text;
    let start = 0;
    for (let index = 0; index < this.buffer.length; index += 1) {
      const character = this.buffer[index];
      if (character !== '\n' && character !== '\r') continue;
      // A CR at the end of what has come so far may be the first half of a CRLF: wait for the rest.
      if (character === '\r' && index + 1 === this.buffer.length) break;
      this.line(this.buffer.slice(start, index));
      if (character === '\r' && this.buffer[index + 1] === '\n') index += 1;
      start = index + 1;
    }
    this.buffer = this.buffer.slice(start);
  }

  line(text) {
    if (text === '') {
      this.dispatch();
      return;
    }
    if (text.startsWith(':')) return; // ": connected", ": heartbeat"
    const colon = text.indexOf(':');
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? '' : text.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.type = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id' && !value.includes('\0')) this.id = value;
    else if (field === 'retry' && /^\d+$/.test(value)) retryMs = Number(value);
  }

  dispatch() {
    // An event without an id line (friend_moved) leaves the last id as it was, so a reconnection still
    // resumes after the last recorded event.
    if (this.id !== null) lastEventId = this.id;
    if (this.data.length > 0) {
      delivered = true;
      let payload = null;
      try {
        payload = JSON.parse(this.data.join('\n'));
      } catch {
        payload = null; // not one of Vicinity's events
      }
      if (payload !== null) emit(`stream:${this.type || 'message'}`, payload);
    }
    this.reset();
  }
}
