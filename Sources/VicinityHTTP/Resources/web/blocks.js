// Blocking: a button on each friend, request and search result, and the list of people one blocked, to
// unblock them. Blocking ends a friendship, which unblocking does not bring back, so the button asks once
// more, in place: a second click within a few seconds blocks.
import { del, get, post } from './api.js';
import { emit, on } from './bus.js';
import { byId, clear, el, emptyItem } from './dom.js';
import { formatDateTime, fullName, nameWithUsername } from './format.js';
import { reporting, showError, showOk } from './messages.js';
import { bearer, isSignedIn } from './session.js';

// Long enough to read the question and click again; short enough that a stray click later does nothing.
const CONFIRM_MS = 6000;

export function initBlocks() {
  on('session', (account) => (account ? load() : show([])));
  on('blocks-changed', load);
}

// A button that blocks `person` on its second click.
export function blockButton(person) {
  const text = 'Block';
  const button = el('button', { class: 'block-person', text, attrs: { type: 'button' } });
  let timer = null;
  button.addEventListener('click', reporting(async () => {
    if (!timer) {
      button.textContent = `Block ${person.first_name}? Click again`;
      button.classList.add('confirming');
      timer = setTimeout(() => {
        timer = null;
        button.textContent = text;
        button.classList.remove('confirming');
      }, CONFIRM_MS);
      return;
    }
    clearTimeout(timer);
    timer = null;
    button.disabled = true;
    try {
      await post('/v1/blocks', { auth: true, body: { user: person.id } });
    } catch (error) {
      button.disabled = false;
      button.textContent = text;
      button.classList.remove('confirming');
      throw error;
    }
    showOk(`You blocked ${fullName(person)}. They are not told; they can no longer find you, ask you or poke you.`);
    for (const name of ['blocks-changed', 'friends-changed', 'requests-changed']) emit(name);
  }));
  return button;
}

export async function unblock(person) {
  await del(`/v1/blocks/${encodeURIComponent(person.id)}`, { auth: true });
  showOk(`You unblocked ${fullName(person)}.`);
  for (const name of ['blocks-changed', 'requests-changed']) emit(name);
}

async function load() {
  try {
    const asked = bearer();
    const answer = await get('/v1/blocks', { auth: true });
    if (isSignedIn() && bearer() === asked) show(answer.blocks);
  } catch (error) {
    showError(error);
  }
}

function show(blocks) {
  const list = byId('blocks-list');
  clear(list);
  if (blocks.length === 0) list.append(emptyItem('You have blocked nobody.'));
  for (const block of blocks) {
    const button = el('button', { class: 'unblock-person', text: 'Unblock', attrs: { type: 'button' } });
    button.addEventListener('click', reporting(() => unblock(block.user)));
    list.append(el('li', { data: { userId: block.user.id } },
      el('span', { class: 'blocked-name', text: `${nameWithUsername(block.user)}, blocked ${formatDateTime(block.since)}` }),
      el('span', { class: 'actions' }, button)));
  }
}
