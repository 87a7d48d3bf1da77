// Live notices (#notices): pokes, friend requests, accepted requests and finished votes, as they arrive on
// the event stream. Each stays until dismissed; the oldest go when too many pile up.
import { on } from './bus.js';
import { byId, el } from './dom.js';
import { formatTime, fullName } from './format.js';
import { selectTab } from './tabs.js';
import { openVote } from './vote.js';

// More than this would cover the map on a phone.
const MAX_NOTICES = 5;

export function initNotices() {
  on('stream:poke', (event) => add(event, `${fullName(event.from)} poked you`));
  on('stream:friend_request', (event) =>
    add(event, `${fullName(event.from)} (@${event.from.username}) asked to be your friend`, {
      label: 'See requests',
      act: () => selectTab('friends'),
    }));
  on('stream:friend_accepted', (event) => add(event, `${fullName(event.friend)} is now your friend`));
  on('stream:vote_finished', (event) =>
    add(event, `The vote ${event.vote_id} “${event.subject}” has finished: ${event.ballots_cast} of ${event.participants} voted`, {
      label: 'See the result',
      act: () => {
        selectTab('votes');
        openVote(event.vote_id);
      },
    }));
  on('stream:vote_conflict', (event) =>
    add(event, `In your vote ${event.vote_id} “${event.subject}”, ${event.ballots} voters are named ${event.name}`));
  on('session', (account) => {
    if (!account) byId('notices').replaceChildren();
  });
}

function add(event, text, action = null) {
  const list = byId('notices');
  const item = el('li', { class: `notice notice-${event.type}`, data: { eventId: event.id ?? '' } },
    el('span', { class: 'notice-text', text }),
    el('time', { text: formatTime(event.at), attrs: { datetime: event.at } }));
  if (action) {
    const button = el('button', { class: 'notice-action', text: action.label, attrs: { type: 'button' } });
    button.addEventListener('click', () => {
      action.act();
      item.remove();
    });
    item.append(button);
  }
  const dismiss = el('button', { class: 'notice-dismiss', text: '×', attrs: { type: 'button', 'aria-label': 'Dismiss' } });
  dismiss.addEventListener('click', () => item.remove());
  item.append(dismiss);
  list.append(item);
  while (list.children.length > MAX_NOTICES) list.firstElementChild.remove();
}
