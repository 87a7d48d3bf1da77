// The friends list and the friends' pins: where each is in words, how far and which way, their status,
// poking, per-friend hiding, blocking, and live moves from the event stream (friend_moved) without reloading.
import { get, patch, post } from './api.js';
import { emit, on } from './bus.js';
import { byId, el, emptyItem } from './dom.js';
import { blockButton } from './blocks.js';
import { formatAge, formatDistanceBearing, formatTime, fullName } from './format.js';
import { showDirection } from './direction.js';
import { layerGroup, makeMarker, moveMarker, relabelMarker } from './map.js';
import { reporting, showError, showOk } from './messages.js';
import { bearer, isSignedIn } from './session.js';
import { selectTab } from './tabs.js';

const LOCATED = new Set(['current', 'last_seen']);
// What a friend sees of one's position, by the API's level.
export const SHARE_TEXT = {
  exact: 'My exact position',
  building: 'Only the building I am at',
  none: 'Nothing',
};
// How long a level chosen here holds, in seconds; then one's default does ("New friends see", Account).
const SHARE_FOR = {
  '': 'until I change it',
  3600: 'for 1 hour',
  14400: 'for 4 hours',
  86400: 'for a day',
};
// Moves arrive live (friend_moved), and so does a change of what one may see of a friend without a move
// (friend_visibility: privacy mode, a sharing level, a position taken away); a position turns last seen by
// age alone, so the list is also read again this often.
const REFRESH_MS = 60000;
const entries = new Map(); // user id → { friend, item, parts, marker }
let loading = null;
let loadAgain = false;

export function initFriends() {
  on('session', (account) => (account ? load() : show([])));
  // Moves are not replayed after a reconnection, so the list is read again.
  on('stream-open', load);
  on('stream:friend_accepted', load);
  on('stream:friend_moved', moved);
  on('stream:friend_visibility', load);
  // A level given for a while has ended: the list shows the default now in force.
  on('stream:sharing_ended', load);
  on('friends-changed', load);
  // Distances are measured from one's own position.
  on('own-position', () => {
    if (isSignedIn()) load();
  });
  setInterval(() => {
    if (isSignedIn() && !document.hidden) load();
  }, REFRESH_MS);
}

// Several reasons to reload often come together (signing in opens the stream and reads one's position):
// they share one request, plus one more if a reason came while it was under way.
async function load() {
  if (loading) {
    loadAgain = true;
    return loading;
  }
  loading = (async () => {
    do {
      loadAgain = false;
      try {
        const asked = bearer();
        const answer = await get('/v1/friends', { auth: true });
        // Not after signing out meanwhile, nor after someone else signed in: their friends are not these.
        if (isSignedIn() && bearer() === asked) show(answer.friends);
      } catch (error) {
        showError(error);
      }
    } while (loadAgain && isSignedIn());
  })();
  await loading;
  loading = null;
}

// Items already shown are kept and updated, so that focus and the map's pins stay where they are.
function show(friends) {
  const list = byId('friends-list');
  const wanted = new Set(friends.map((friend) => friend.id));
  for (const [id, entry] of entries) {
    if (wanted.has(id)) continue;
    if (entry.marker) layerGroup('friends')?.removeLayer(entry.marker);
    entry.item.remove();
    entries.delete(id);
  }
  list.querySelector('li.empty')?.remove();
  if (friends.length === 0) list.append(emptyItem('No friends yet: find people above and ask them.'));
  friends.forEach((friend, index) => {
    let entry = entries.get(friend.id);
    if (!entry) {
      entry = build(friend);
      entries.set(friend.id, entry);
    }
    update(entry, friend);
    if (list.children[index] !== entry.item) list.insertBefore(entry.item, list.children[index] ?? null);
  });
  // Unfriending sends no notice, and hiding one reaches here as a read of the list: what it now says reaches
  // the direction line.
  emit('friends-shown', wanted);
}

function moved(friend) {
  const entry = entries.get(friend.id);
  if (!entry) {
    load(); // someone new: the list is read again
    return;
  }
  update(entry, friend);
  emit('friend-updated', friend);
}

function build(friend) {
  const parts = {
    name: el('span', { class: 'friend-name' }),
    label: el('span', { class: 'friend-label' }),
    status: el('span', { class: 'friend-status' }),
    distance: el('span', { class: 'friend-distance' }),
    seen: el('span', { class: 'friend-seen' }),
  };
  const poke = el('button', { class: 'poke', text: 'Poke', attrs: { type: 'button' } });
  const direction = el('button', { class: 'show-direction', text: 'Direction', attrs: { type: 'button' } });
  const shareId = `share-with-${friend.id}`;
  const share = el('select', { class: 'share-with', id: shareId },
    Object.entries(SHARE_TEXT).map(([value, text]) => el('option', { text, attrs: { value } })));
  parts.shareLabel = el('label', { attrs: { for: shareId } });
  const forId = `share-for-${friend.id}`;
  const shareFor = el('select', { class: 'share-for', id: forId, attrs: { 'aria-label': 'For how long' } },
    Object.entries(SHARE_FOR).map(([value, text]) => el('option', { text, attrs: { value } })));
  parts.shareUntil = el('span', { class: 'share-until' });
  const item = el('li', { class: 'friend', data: { userId: friend.id } },
    el('div', { class: 'friend-head' }, parts.name, parts.distance),
    el('div', { class: 'friend-where' }, parts.label, parts.seen),
    parts.status,
    el('div', { class: 'actions' }, poke, direction, el('span', { class: 'share' }, parts.shareLabel, share, shareFor, parts.shareUntil),
      blockButton(friend)));
  const entry = { friend, item, parts, share, shareFor, marker: null };
  poke.addEventListener('click', reporting(() => pokeFriend(entry)));
  direction.addEventListener('click', reporting(() => showDirection(entry.friend)));
  share.addEventListener('change', () => setSharing(entry, share.value));
  shareFor.addEventListener('change', () => setSharing(entry, share.value));
  return entry;
}

function update(entry, friend) {
  entry.friend = friend;
  const { parts } = entry;
  const located = LOCATED.has(friend.presence);
  parts.name.textContent = fullName(friend);
  parts.label.textContent = !located ? (friend.presence === 'hidden' ? 'Hidden (privacy mode)' : 'No position shared with you')
    : friend.precision === 'building' ? `${friend.label} (building only)` : friend.label;
  parts.seen.textContent = friend.presence === 'last_seen' ? `last seen ${formatAge(friend.updated_at)} ago` : '';
  parts.status.textContent = located && friend.status ? friend.status : '';
  parts.distance.textContent = located && friend.distance_m !== null
    ? formatDistanceBearing(friend.distance_m, friend.bearing_deg)
    : '';
  entry.share.value = friend.share;
  parts.shareUntil.textContent = friend.share_until ? `until ${formatTime(friend.share_until)}` : '';
  if (!friend.share_until) entry.shareFor.value = '';
  parts.shareLabel.textContent = `${friend.first_name} sees`;
  entry.item.classList.toggle('stale', friend.presence === 'last_seen');
  pin(entry);
}

function pin(entry) {
  const group = layerGroup('friends');
  if (!group) return;
  const { friend } = entry;
  if (!LOCATED.has(friend.presence) || !friend.position) {
    if (entry.marker) group.removeLayer(entry.marker);
    entry.marker = null;
    return;
  }
  const seen = friend.presence === 'last_seen' ? `, last seen ${formatAge(friend.updated_at)} ago` : '';
  const label = `${friend.first_name} — ${friend.label}${seen}`;
  const { lat, lon } = friend.position;
  if (entry.marker) {
    moveMarker(entry.marker, lat, lon);
    relabelMarker(entry.marker, label);
  } else {
    entry.marker = makeMarker({
      kind: 'friend', id: friend.id, lat, lon, label,
      onClick: () => {
        selectTab('friends');
        entry.item.scrollIntoView({ block: 'nearest' });
        entry.item.querySelector('button.poke')?.focus();
      },
    });
    group.addLayer(entry.marker);
  }
  entry.marker.getElement()?.classList.toggle('pin-stale', friend.presence === 'last_seen');
}

async function pokeFriend(entry) {
  await post(`/v1/friends/${encodeURIComponent(entry.friend.id)}/pokes`, { auth: true });
  showOk(`You poked ${fullName(entry.friend)}.`);
}

async function setSharing(entry, share) {
  const before = entry.friend.share;
  const seconds = Number(entry.shareFor.value);
  const body = seconds > 0 ? { share, for_s: seconds } : { share };
  try {
    const friend = await patch(`/v1/friends/${encodeURIComponent(entry.friend.id)}`, { auth: true, body });
    update(entry, friend);
    const until = friend.share_until ? ` until ${formatTime(friend.share_until)}` : '';
    showOk(`${fullName(friend)} now sees: ${SHARE_TEXT[share]}${until}.`);
  } catch (error) {
    entry.share.value = before;
    showError(error);
  }
}
