// Pending friend requests: those received, to accept, decline or block their sender, and those sent, to cancel.
import { del, get, post } from './api.js';
import { blockButton } from './blocks.js';
import { emit, on } from './bus.js';
import { byId, clear, el, emptyItem } from './dom.js';
import { fullName, nameWithUsername } from './format.js';
import { showError, showOk } from './messages.js';
import { isSignedIn } from './session.js';

export function initRequests() {
  on('session', (account) => (account ? load() : show({ incoming: [], outgoing: [] })));
  on('stream-open', load);
  on('stream:friend_request', load);
  on('stream:friend_accepted', load);
  on('requests-changed', load);
}

async function load() {
  try {
    const requests = await get('/v1/friend-requests', { auth: true });
    if (isSignedIn()) show(requests); // not after signing out meanwhile
  } catch (error) {
    showError(error);
  }
}

function show({ incoming, outgoing }) {
  const received = byId('friend-requests');
  clear(received);
  if (incoming.length === 0) received.append(emptyItem('No request is waiting for you.'));
  for (const request of incoming) received.append(incomingItem(request));

  const sent = byId('outgoing-requests');
  clear(sent);
  if (outgoing.length === 0) sent.append(emptyItem('You have no request waiting for an answer.'));
  for (const request of outgoing) sent.append(outgoingItem(request));
}

function incomingItem(request) {
  const accept = el('button', { class: 'accept-request', text: 'Accept', attrs: { type: 'button' } });
  const decline = el('button', { class: 'decline-request', text: 'Decline', attrs: { type: 'button' } });
  accept.addEventListener('click', () => act(accept, async () => {
    await post(`/v1/friend-requests/${encodeURIComponent(request.id)}/accept`, { auth: true });
    showOk(`You and ${fullName(request.from)} are friends now.`);
    emit('friends-changed');
  }));
  decline.addEventListener('click', () => act(decline, async () => {
    await del(`/v1/friend-requests/${encodeURIComponent(request.id)}`, { auth: true });
    showOk(`You declined ${fullName(request.from)}'s request.`);
  }));
  return el('li', { data: { requestId: request.id } },
    el('span', { class: 'request-from', text: `${nameWithUsername(request.from)} asks to be friends` }),
    el('span', { class: 'actions' }, accept, decline, blockButton(request.from)));
}

function outgoingItem(request) {
  const cancel = el('button', { class: 'cancel-request', text: 'Cancel', attrs: { type: 'button' } });
  cancel.addEventListener('click', () => act(cancel, async () => {
    await del(`/v1/friend-requests/${encodeURIComponent(request.id)}`, { auth: true });
    showOk(`Your request to ${fullName(request.to)} is cancelled.`);
  }));
  return el('li', { data: { requestId: request.id } },
    el('span', { class: 'request-to', text: `To ${nameWithUsername(request.to)}, waiting` }),
    el('span', { class: 'actions' }, cancel));
}

async function act(button, action) {
  button.disabled = true;
  try {
    await action();
    await load();
  } catch (error) {
    button.disabled = false;
    showError(error);
  }
}
