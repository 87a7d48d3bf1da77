// The places on the map: every place Vicinity knows around the view, as labelled markers with their
// footprints, read again whenever the view has settled after a move (labels.js keeps their names apart).
import { get } from './api.js';
import { layerGroup, leafletMap, makeMarker, mapReady } from './map.js';
import { showError } from './messages.js';
import { setPoint } from './point.js';

// A drag or a zoom fires several moves; the places are read once the view has been still this long.
const SETTLE_MS = 300;
// The API's own ceilings for nearby places.
const MAX_RADIUS_M = 50000;
const MAX_PLACES = 500;
// The radius must be above zero even for a map that has no size yet.
const MIN_RADIUS_M = 1;

const drawn = new Map(); // place id → { marker, footprint }
let timer = null;
let inFlight = null;
let firstDrawn = false;

export function initPlaceLayer() {
  if (!mapReady()) return;
  leafletMap().on('moveend', () => {
    clearTimeout(timer);
    timer = setTimeout(refresh, SETTLE_MS);
  });
  refresh();
}

async function refresh() {
  const map = leafletMap();
  inFlight?.abort();
  inFlight = new AbortController();
  const centre = map.getCenter().wrap();
  // The circle through the view's corners covers all of it.
  const toCorner = centre.distanceTo(map.getBounds().getNorthEast());
  const radius = Math.ceil(Math.min(MAX_RADIUS_M, Math.max(MIN_RADIUS_M, toCorner)));
  try {
    const answer = await get('/v1/places/nearby', {
      query: { lat: centre.lat, lon: centre.lng, radius, limit: MAX_PLACES, footprint: true },
      signal: inFlight.signal,
    });
    draw(answer.places);
    if (!firstDrawn) {
      firstDrawn = true;
      performance.mark('vicinity-first-map');
    }
  } catch (error) {
    showError(error);
  }
}

function draw(places) {
  const markers = layerGroup('places');
  const footprints = layerGroup('footprints');
  const wanted = new Set(places.map((place) => place.id));
  for (const [id, shown] of drawn) {
    if (wanted.has(id)) continue;
    markers.removeLayer(shown.marker);
    if (shown.footprint) footprints.removeLayer(shown.footprint);
    drawn.delete(id);
  }
  for (const place of places) {
    if (drawn.has(place.id)) continue;
    const marker = makeMarker({
      kind: 'place',
      id: place.id,
      lat: place.lat,
      lon: place.lon,
      label: place.name,
      title: `${place.name} (${place.category.replaceAll('_', ' ')})`,
      onClick: () => setPoint(place.lat, place.lon, { source: 'place' }),
    });
    markers.addLayer(marker);
    let footprint = null;
    if (place.footprint) {
      footprint = L.geoJSON(place.footprint, { interactive: false, style: () => ({ className: 'footprint' }) });
      footprints.addLayer(footprint);
    }
    drawn.set(place.id, { marker, footprint });
  }
}
