// The direction to one friend: a line on the map from where one is to where they are, with the distance,
// bearing and a walking-directions link where walking there makes sense, kept up to date as either moves.
import { get, localProblem } from './api.js';
import { on } from './bus.js';
import { byId, clear, el, externalLink } from './dom.js';
import { formatDistanceBearing, formatTime, fullName } from './format.js';
import { layerGroup, leafletMap } from './map.js';
import { showError } from './messages.js';
import { currentPoint } from './point.js';
import { ownPosition } from './position.js';
import { isSignedIn } from './session.js';
import { walkable } from './walking.js';

// Room around the line's ends when the map is fitted to it, so neither pin sits on the edge.
const FIT_PADDING_PX = 48;
// Two people in one building would otherwise zoom the map in as far as it goes.
const FIT_MAX_ZOOM = 18;

let shownFor = null; // the friend's id

export function initDirection() {
  on('friend-updated', (friend) => {
    if (friend.id === shownFor) refresh(friend);
  });
  on('friends-shown', (ids) => {
    if (!shownFor) return;
    if (ids.has(shownFor)) refresh({ id: shownFor });
    else hide();
  });
  on('own-position', () => {
    if (shownFor && isSignedIn()) refresh({ id: shownFor });
  });
  on('session', (account) => {
    if (!account) hide();
  });
}

export async function showDirection(friend) {
  const direction = await measure(friend.id);
  shownFor = friend.id;
  draw(direction, { fit: true });
}

async function refresh(friend) {
  try {
    draw(await measure(friend.id), { fit: false });
  } catch (error) {
    hide();
    // Signed out meanwhile (signing out clears one's own position first): the line just goes.
    if (!isSignedIn()) return;
    if (error.status === 404 || error.status === 409) {
      const name = friend.first_name ? fullName(friend) : 'This friend';
      showNote(`${name}'s position is no longer shown to you, so the line is gone.`);
    } else {
      showError(error);
    }
  }
}

// From one's own current position when sharing one, else from the current point.
async function measure(friendId) {
  const own = ownPosition();
  const point = currentPoint();
  let origin;
  let query;
  if (own && own.presence === 'current') {
    origin = own;
  } else if (point) {
    origin = point;
    query = { lat: point.lat, lon: point.lon };
  } else {
    throw localProblem('Share your position (Account) or choose a point (Places) to measure from.');
  }
  const answer = await get(`/v1/friends/${encodeURIComponent(friendId)}/direction`, { auth: true, query });
  return { ...answer, origin };
}

function draw(direction, { fit }) {
  const info = byId('direction-info');
  clear(info);
  const hideButton = el('button', { id: 'hide-direction', text: 'Hide line', attrs: { type: 'button' } });
  hideButton.addEventListener('click', hide);
  const stale = direction.presence === 'last_seen' ? ` (last seen ${formatTime(direction.updated_at)})` : '';
  info.append(
    el('p', { class: 'direction-text', text: `To ${fullName(direction)}: ${formatDistanceBearing(direction.distance_m, direction.bearing_deg)}${stale}` }),
    el('p', { class: 'actions' },
      walkable(direction.distance_m)
        ? externalLink(direction.directions_url, 'Walking directions', 'directions')
        : el('span', { class: 'too-far', text: 'Too far to walk' }),
      hideButton));
  info.hidden = false;

  const group = layerGroup('direction');
  if (!group) return;
  group.clearLayers();
  const ends = [[direction.origin.lat, direction.origin.lon], [direction.position.lat, direction.position.lon]];
  const line = L.polyline(ends, { className: 'direction-line', interactive: false });
  group.addLayer(line);
  const path = line.getElement();
  if (path) {
    path.id = 'direction-line';
    path.dataset.id = direction.id;
  }
  if (fit) leafletMap().fitBounds(line.getBounds(), { padding: [FIT_PADDING_PX, FIT_PADDING_PX], maxZoom: FIT_MAX_ZOOM });
}

function hide() {
  shownFor = null;
  layerGroup('direction')?.clearLayers();
  const info = byId('direction-info');
  clear(info);
  info.hidden = true;
}

function showNote(text) {
  const info = byId('direction-info');
  clear(info);
  info.append(el('p', { text }));
  info.hidden = false;
}
