// People search, to ask someone to be friends; it never says where anyone is.
import { get, post } from './api.js';
import { unblock } from './blocks.js';
import { emit, on } from './bus.js';
import { byId, clear, el, emptyItem } from './dom.js';
import { fullName, nameWithUsername } from './format.js';
import { clearMessage, reporting, showError, showOk } from './messages.js';

const RESULT_LIMIT = 20;
const RELATIONSHIP_TEXT = {
  friend: 'Friend',
  request_sent: 'Request sent',
  request_received: 'Asked you',
  blocked: 'Blocked',
};

let lastQuery = null; // the search shown, read again when how one stands to those found changes

export function initPeople() {
  byId('people-form').addEventListener('submit', reporting(search));
  on('session', () => {
    lastQuery = null;
    clear(byId('people-results'));
  });
  // An answer or a block elsewhere changes the marks ("Request sent" becomes "Friend").
  for (const name of ['stream:friend_accepted', 'stream:friend_request', 'friends-changed', 'blocks-changed']) {
    on(name, () => {
      if (lastQuery !== null) show(lastQuery).catch(showError);
    });
  }
}

async function search(event) {
  event.preventDefault();
  await show(byId('people-search').value.trim());
  clearMessage();
}

async function show(q) {
  const answer = await get('/v1/users', { auth: true, query: { q, limit: RESULT_LIMIT } });
  lastQuery = q;
  const list = byId('people-results');
  clear(list);
  if (answer.users.length === 0) list.append(emptyItem(`Nobody is named like “${q}”.`));
  for (const person of answer.users) list.append(personItem(person));
}

function personItem(person) {
  const item = el('li', { data: { userId: person.id } }, el('span', { class: 'person-name', text: nameWithUsername(person) }));
  const state = el('span', { class: 'person-relationship', text: RELATIONSHIP_TEXT[person.relationship] ?? '' });
  item.append(state);
  if (person.relationship === 'none' || person.relationship === 'request_received') {
    // Asking someone who has already asked you accepts their request at once.
    const text = person.relationship === 'none' ? 'Ask to be friends' : 'Accept';
    const button = el('button', { class: 'send-request', text, attrs: { type: 'button' } });
    button.addEventListener('click', () => sendRequest(person, button, state));
    item.append(button);
  } else if (person.relationship === 'blocked') {
    const button = el('button', { class: 'unblock-person', text: 'Unblock', attrs: { type: 'button' } });
    button.addEventListener('click', reporting(async () => {
      await unblock(person);
      button.remove();
      state.textContent = '';
    }));
    item.append(button);
  }
  return item;
}

async function sendRequest(person, button, state) {
  button.disabled = true;
  try {
    const request = await post('/v1/friend-requests', { auth: true, body: { to: person.id } });
    button.remove();
    if (request.state === 'accepted') {
      state.textContent = RELATIONSHIP_TEXT.friend;
      showOk(`You and ${fullName(person)} are friends now.`);
      emit('friends-changed');
    } else {
      state.textContent = RELATIONSHIP_TEXT.request_sent;
      showOk(`Friend request sent to ${fullName(person)}.`);
    }
    emit('requests-changed');
  } catch (error) {
    button.disabled = false;
    showError(error);
  }
}
