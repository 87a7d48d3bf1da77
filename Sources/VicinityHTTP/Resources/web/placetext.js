// How a place reads in a list: its name as stored (Thai names included), followed by its Thai name when
// the data has one beside an English name. Returns nodes to append, the name first in its own element.
import { el } from './dom.js';

export function placeName(place, className = 'place-name') {
  const nodes = [el('span', { class: className, text: place.name })];
  const thai = place.attributes?.name_th;
  if (thai && thai !== place.name) nodes.push(' ', el('span', { class: 'place-name-th', text: thai, attrs: { lang: 'th' } }));
  return nodes;
}

export function placeCategory(place) {
  return place.category.replaceAll('_', ' ');
}
