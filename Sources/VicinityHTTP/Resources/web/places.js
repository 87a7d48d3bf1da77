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
  for (const place of places) list.append(nearbyItem(place));
  if (next) list.append(emptyItem(`Only the nearest ${places.length} are listed.`));
}

function nearbyItem(place) {
  const button = el('button', { attrs: { type: 'button', title: 'Show on the map' } },
    placeName(place),
    el('span', { class: 'place-category', text: placeCategory(place) }),
    el('span', { class: 'place-distance', text: formatDistanceBearing(place.distance_m, place.bearing_deg) }));
  button.addEventListener('click', () => centreOn(place.lat, place.lon));
  return el('li', { data: { placeId: place.id } }, button);
}
