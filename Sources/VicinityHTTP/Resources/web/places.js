// What is at the current point: the closest place with the label people understand, and the places within
// 1000 m, nearest first.
import { get } from './api.js';
import { on } from './bus.js';
import { byId, clear, el, emptyItem } from './dom.js';
import { formatCoordinate, formatDistanceBearing } from './format.js';
import { centreOn } from './map.js';
import { showError } from './messages.js';
import { placeCategory, placeName } from './placetext.js';

// The page's "within 1000 m": the API's default radius, said in the headings.
const NEARBY_RADIUS_M = 1000;
// Enough for a campus block; the list says when there are more.
const NEARBY_LIMIT = 50;
// Shown before "Show all": the closest few say where the point is; fifty would push the temples and the votes
// below, thousands of pixels down on a phone.
const NEARBY_SHOWN = 5;

let inFlight = null;

export function initPlaces() {
  on('point', (point) => show(point));
}

async function show(point) {
  inFlight?.abort();
  inFlight = new AbortController();
  const { signal } = inFlight;
  const where = { lat: point.lat, lon: point.lon };
  const info = byId('point-info');
  const list = byId('nearby-results');
  const [closest, nearby] = await Promise.allSettled([
    get('/v1/places/closest', { query: where, signal }),
    get('/v1/places/nearby', { query: { ...where, radius: NEARBY_RADIUS_M, limit: NEARBY_LIMIT }, signal }),
  ]);
  if (signal.aborted) return;

  clear(info);
  const coordinates = el('p', { class: 'coordinates', text: `${formatCoordinate(point.lat)}, ${formatCoordinate(point.lon)}` });
  if (closest.status === 'fulfilled') {
    const answer = closest.value;
    info.append(
      el('p', { class: 'point-label', text: answer.label }),
      el('p', { class: 'point-closest' },
        'Closest: ', placeName(answer.place), `, ${formatDistanceBearing(answer.distance_m, answer.bearing_deg)}`),
      coordinates);
  } else if (closest.reason?.status === 404) {
    info.append(el('p', { class: 'point-label', text: 'No place is known here.' }), coordinates);
  } else {
    info.append(coordinates);
    showError(closest.reason);
  }

  clear(list);
  if (nearby.status === 'rejected') {
    showError(nearby.reason);
    return;
  }
  const { places, next } = nearby.value;
  if (places.length === 0) list.append(emptyItem(`No place within ${NEARBY_RADIUS_M} m.`));
  const items = places.map(nearbyItem);
  items.forEach((item, index) => {
    item.hidden = index >= NEARBY_SHOWN;
    list.append(item);
  });
  if (places.length > NEARBY_SHOWN) list.append(showAllItem(items));
  if (next) list.append(emptyItem(`Only the nearest ${places.length} are listed.`));
}

// One button that shows the rest of the list, then hides them again.
function showAllItem(items) {
  const rest = items.length - NEARBY_SHOWN;
  const button = el('button', { class: 'show-all', text: `Show ${rest} more`, attrs: { type: 'button', 'aria-expanded': 'false' } });
  button.addEventListener('click', () => {
    const expand = button.getAttribute('aria-expanded') !== 'true';
    items.slice(NEARBY_SHOWN).forEach((item) => { item.hidden = !expand; });
    button.setAttribute('aria-expanded', String(expand));
    button.textContent = expand ? 'Show fewer' : `Show ${rest} more`;
  });
  return el('li', { class: 'show-all-item' }, button);
}

function nearbyItem(place) {
  const button = el('button', { attrs: { type: 'button', title: 'Show on the map' } },
    placeName(place),
    el('span', { class: 'place-category', text: placeCategory(place) }),
    el('span', { class: 'place-distance', text: formatDistanceBearing(place.distance_m, place.bearing_deg) }));
  button.addEventListener('click', () => centreOn(place.lat, place.lon));
  return el('li', { data: { placeId: place.id } }, button);
}
