// Temples recommended near the current point, nearest first, each with how far it is, a link that opens
// directions in the phone's map app where walking there makes sense, and drawn on the map.
import { get, localProblem } from './api.js';
import { on } from './bus.js';
import { byId, clear, el, emptyItem, externalLink } from './dom.js';
import { formatBearing, formatDistance } from './format.js';
import { clearBeside } from './forms.js';
import { centreOn, layerGroup, makeMarker } from './map.js';
import { reporting } from './messages.js';
import { placeName } from './placetext.js';
import { currentPoint } from './point.js';
import { walkable } from './walking.js';

// A short list to choose from; the radius select widens the search instead.
const TEMPLE_LIMIT = 10;

export function initTemples() {
  const button = byId('temples-button');
  button.addEventListener('click', reporting(recommend));
  // Temples listed for another point would mislead; "choose a point first" no longer holds.
  on('point', () => {
    clear(byId('temple-results'));
    layerGroup('temples')?.clearLayers();
    clearBeside(button);
  });
}

async function recommend() {
  const point = currentPoint();
  if (!point) throw localProblem('Choose a point first: click the map, pick a place, or use your position.');
  const radius = Number(byId('temple-radius').value);
  const list = byId('temple-results');
  const answer = await get('/v1/temples/recommended', { query: { lat: point.lat, lon: point.lon, radius, limit: TEMPLE_LIMIT } });
  clear(list);
  const markers = layerGroup('temples');
  markers?.clearLayers();
  if (answer.temples.length === 0) {
    list.append(emptyItem('No temple is known anywhere.'));
  } else if (!answer.within_radius) {
    // The nearest ones beyond the radius: still somewhere to go.
    const nearest = formatDistance(answer.temples[0].distance_m);
    list.append(emptyItem(`No temple within ${formatDistance(radius)}; the nearest is ${nearest} away.`));
  }
  for (const temple of answer.temples) {
    list.append(templeItem(temple));
    markers?.addLayer(makeMarker({
      kind: 'temple', id: temple.id, lat: temple.lat, lon: temple.lon, label: temple.name,
      onClick: () => centreOn(temple.lat, temple.lon),
    }));
  }
}

function templeItem(temple) {
  const show = el('button', { class: 'show-place', text: 'Show on map', attrs: { type: 'button' } });
  show.addEventListener('click', () => centreOn(temple.lat, temple.lon));
  const directions = walkable(temple.distance_m)
    ? externalLink(temple.directions_url, 'Directions', 'directions')
    : el('span', { class: 'too-far', text: 'Too far to walk' });
  return el('li', { data: { placeId: temple.id } },
    placeName(temple, 'temple-name'),
    el('span', { class: 'temple-distance', text: formatDistance(temple.distance_m) }),
    Math.round(temple.distance_m) > 0 ? el('span', { class: 'temple-bearing', text: formatBearing(temple.bearing_deg) }) : null,
    el('span', { class: 'actions' }, directions, show));
}
