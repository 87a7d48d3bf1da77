// Place search by name or alias (building codes are aliases): each result centres the map on the place
// and makes it the current point.
import { get, localProblem } from './api.js';
import { byId, clear, el, emptyItem } from './dom.js';
import { formAction, prepareForm } from './forms.js';
import { placeCategory, placeName } from './placetext.js';
import { setPoint } from './point.js';

// Enough to scan on a phone; a more exact name narrows it.
const RESULT_LIMIT = 20;

export function initSearch() {
  const form = byId('place-search-form');
  prepareForm(form);
  form.addEventListener('submit', formAction(form, search, { explain: explainSearch }));
}

async function search() {
  const list = byId('place-results');
  const q = byId('place-search').value.trim();
  if (q === '') throw localProblem('Nothing to search for.');
  const answer = await get('/v1/places', { query: { q, limit: RESULT_LIMIT } });
  clear(list);
  if (answer.places.length === 0) list.append(emptyItem(`No place is named like “${q}”.`));
  for (const place of answer.places) list.append(resultItem(place));
}

// An empty search: the page says what to type, beside the search field.
function explainSearch() {
  if (byId('place-search').value.trim() !== '') return null;
  return { field: 'q', text: 'Type a name or a building code to search for.' };
}

function resultItem(place) {
  const button = el('button', { attrs: { type: 'button' } },
    placeName(place),
    el('span', { class: 'place-category', text: placeCategory(place) }));
  button.addEventListener('click', () => setPoint(place.lat, place.lon, { source: 'place', centre: true }));
  return el('li', { data: { placeId: place.id } }, button);
}
