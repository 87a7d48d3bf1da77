// Whether the page is in touch with the server, said in a note at the foot of the screen: once a request or the
// live-update stream could not reach the server, "Reconnecting…" shows and /health is asked every second or so
// until the server answers; then the note goes, and so do the errors that said the server could not be reached,
// and the stream reconnects at once (stream.js, told by api.js's "server-reachable"). While signed in, a live
// stream that dropped shows the note too, until it is open again; one cut off has the server asked at once.
import { get } from './api.js';
import { on } from './bus.js';
import { byId, el } from './dom.js';
import { clearMessage } from './messageline.js';

// Right after the server went away it is asked this often (and up to half again, so that the pages a restart
// cut off do not all come back in the same instant): a restart is over in seconds.
const PROBE_MS = 1000;
// After a minute it is rather an outage: asked less often, to spare phones' batteries and the proxy in front.
const SLOW_PROBE_MS = 5000;
const FAST_PROBES_FOR_MS = 60000;

let downSince = null; // when a request last found the server unreachable, or null while it answers
let streamLost = false;
let probeTimer = null;
let probing = false;

export function initConnection() {
  document.body.append(el('p', { id: 'connection', class: 'connection', attrs: { role: 'status' } }));
  on('server-unreachable', () => {
    if (downSince !== null) return;
    downSince = Date.now();
    scheduleProbe();
    show();
  });
  on('server-reachable', () => {
    if (downSince === null) return;
    downSince = null;
    clearTimeout(probeTimer);
    clearUnreachableErrors();
    show();
  });
  on('stream-lost', () => {
    streamLost = true;
    show();
  });
  // Cut off: by a network that went, or a server that did. Asked within half a probe's time, at random, so
  // that the pages one restart cut off do not all ask in the same instant.
  on('stream-cut', () => {
    if (downSince !== null) return;
    clearTimeout(probeTimer);
    probeTimer = setTimeout(probe, (PROBE_MS / 2) * Math.random());
  });
  on('stream-open', () => {
    streamLost = false;
    show();
  });
  on('session', (account) => {
    if (account) return;
    streamLost = false;
    show();
  });
  // The device's network is back: no need to wait for the next try.
  window.addEventListener('online', () => {
    if (downSince !== null) probe();
  });
}

function scheduleProbe() {
  clearTimeout(probeTimer);
  const base = Date.now() - downSince < FAST_PROBES_FOR_MS ? PROBE_MS : SLOW_PROBE_MS;
  probeTimer = setTimeout(probe, base * (1 + Math.random() / 2));
}

async function probe() {
  if (probing) return;
  probing = true;
  try {
    await get('/health');
  } catch {
    // Still unreachable (api.js said so), or a server that answers with an error: either way it is there.
  } finally {
    probing = false;
  }
  if (downSince !== null) scheduleProbe();
}

function show() {
  const note = byId('connection');
  const down = downSince !== null;
  note.textContent = down
    ? 'The server cannot be reached. Reconnecting…'
    : streamLost ? 'Live updates stopped. Reconnecting…' : '';
  document.body.classList.toggle('reconnecting', down || streamLost);
}

// The errors that said the server could not be reached no longer hold.
function clearUnreachableErrors() {
  for (const node of document.querySelectorAll('[data-unreachable]')) {
    if (node.id === 'message') clearMessage();
    else node.replaceChildren();
    delete node.dataset.unreachable;
  }
}
