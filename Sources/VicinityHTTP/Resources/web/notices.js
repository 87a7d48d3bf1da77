// Live notices (#notices): pokes, friend requests, accepted requests, and votes finished, called off or
// waiting for their initiator to settle ballots cast under the same name, as they arrive on the event stream.
// Each goes by itself after a while, or when dismissed; the oldest go when too many pile up.
import { on } from './bus.js';
import { byId, el } from './dom.js';
import { formatDateTime, formatDistance, formatTime, fullName } from './format.js';
import { selectTab } from './tabs.js';
import { openVote } from './vote.js';

// More than this would cover the map on a phone.
const MAX_NOTICES = 5;
// Time to read the longest notice twice; one the pointer or the keyboard is on stays until left.
const NOTICE_SHOWN_MS = 15000;

export function initNotices() {
  on('stream:poke', (event) => add(event, `${fullName(event.from)} poked you`));
  on('stream:friend_request', (event) =>
    add(event, `${fullName(event.from)} (@${event.from.username}) asked to be your friend`, {
      label: 'See requests',
      act: () => selectTab('friends'),
    }));
  on('stream:friend_accepted', (event) => add(event, `${fullName(event.friend)} is now your friend`));
  // Alerts: a place's name, or "the point you watch"; never where exactly.
  const watched = (event) => event.place_name ?? 'the point you watch';
  on('stream:friend_arrived', (event) => add(event, `${fullName(event.friend)} arrived at ${watched(event)}`));
  on('stream:friend_left', (event) => add(event, `${fullName(event.friend)} left ${watched(event)}`));
  on('stream:friend_nearby', (event) => add(event, `${fullName(event.friend)} is within ${formatDistance(event.radius_m)} of you`));
  on('stream:vote_finished', (event) => {
    const voided = event.result?.ballots_voided ?? 0;
    const voidedText = voided > 0 ? `, ${voided} ${voided === 1 ? 'ballot' : 'ballots'} voided` : '';
    add(event, `The vote ${event.vote_id} “${event.subject}” has finished: ${event.ballots_cast} of ${event.participants} voted${voidedText}`,
      openingVote(event.vote_id, 'See the result'));
  });
  on('stream:vote_conflict', (event) => {
    const names = (event.conflicts ?? []).map((conflict) => `${conflict.name} (${conflict.ballots} ballots)`).join(', ');
    add(event, `Your vote ${event.vote_id} “${event.subject}” has ended with ballots cast under the same name: ${names}. `
      + `Settle them by ${formatDateTime(event.settling_until)}, or the result is published as they stand`,
    openingVote(event.vote_id, 'Check the ballots'));
  });
  on('stream:vote_cancelled', (event) =>
    add(event, `The vote ${event.vote_id} “${event.subject}” was called off by its initiator: it has no result`,
      openingVote(event.vote_id, 'See the vote')));
  on('session', (account) => {
    if (!account) byId('notices').replaceChildren();
  });
}

// A notice's action that opens the vote in the Votes panel.
function openingVote(id, label) {
  return {
    label,
    act: () => {
      selectTab('votes');
      openVote(id);
    },
  };
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
  goesByItself(item);
  while (list.children.length > MAX_NOTICES) list.firstElementChild.remove();
}

function goesByItself(item) {
  let timer = null;
  const wait = () => {
    clearTimeout(timer);
    timer = setTimeout(() => item.remove(), NOTICE_SHOWN_MS);
  };
  const hold = () => clearTimeout(timer);
  item.addEventListener('pointerenter', hold);
  item.addEventListener('pointerleave', wait);
  item.addEventListener('focusin', hold);
  item.addEventListener('focusout', (event) => {
    if (!item.contains(event.relatedTarget)) wait();
  });
  wait();
}
