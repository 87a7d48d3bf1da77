// Place search by name or alias (building codes are aliases): each result centres the map on the place
// and makes it the current point.
import { get } from './api.js';
import { byId, clear, el, emptyItem } from './dom.js';
import { clearMessage, showError } from './messages.js';
import { placeCategory, placeName } from './placetext.js';
import { setPoint } from './point.js';

// Enough to scan on a phone; a more exact name narrows it.
const RESULT_LIMIT = 20;

export function initSearch() {
  byId('place-search-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const list = byId('place-results');
    const q = byId('place-search').value.trim();
    try {
      const answer = await get('/v1/places', { query: { q, limit: RESULT_LIMIT } });
      clearMessage();
      clear(list);
      if (answer.places.length === 0) list.append(emptyItem(`No place is named like “${q}”.`));
      for (const place of answer.places) list.append(resultItem(place));
    } catch (error) {
      showError(error);
    }
  });
}

function resultItem(place) {
  const button = el('button', { attrs: { type: 'button' } },
    placeName(place),
    el('span', { class: 'place-category', text: placeCategory(place) }));
  button.addEventListener('click', () => setPoint(place.lat, place.lon, { source: 'place', centre: true }));
  return el('li', { data: { placeId: place.id } }, button);
}
