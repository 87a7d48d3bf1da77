// The Leaflet map: its base (a tile layer when the server names one, else a plain background), the current
// point's marker, and the one way markers are made, so that every marker's element carries data-kind,
// data-id, data-lat and data-lon, and every change to a marker has labels.js place the labels again.
import { on } from './bus.js';
import { el } from './dom.js';
import { initLabels, RANK, scheduleLabels } from './labels.js';
import { setPoint } from './point.js';

// Tile servers commonly stop at 19 (OpenStreetMap's do); the plain map stops there too.
const MAX_ZOOM = 19;
// Moving to a point found far away zooms in at least this far, to read the buildings around it.
const FOCUS_ZOOM = 16;
// Small enough that a campus block's dots stay apart at the opening zoom.
const PIN_SIZE_PX = 14;
// The chosen point is a ring wide enough to go round a pin of any kind on the same spot (a temple's
// diamond reaches 10 px out), so that it reads as "here" and not as one more place.
const POINT_SIZE_PX = 28;
// zIndexOffset adds to Leaflet's order by pixel row, so steps far above any map's height in pixels keep
// each kind above the ones of lower rank (labels.js): people over votes, temples, the point and places.
const STACKING_STEP = 100000;

let map = null;
let pointMarker = null;

export function mapReady() {
  return map !== null;
}

export function leafletMap() {
  return map;
}

export function createMap(config) {
  const { start, tiles } = config;
  map = L.map('map', { center: [start.lat, start.lon], zoom: start.zoom, maxZoom: MAX_ZOOM });
  if (tiles) {
    // The attribution is text from the server's settings; Leaflet writes it as markup, so it is escaped.
    L.tileLayer(tiles.url, { attribution: escapeMarkup(tiles.attribution), maxZoom: MAX_ZOOM }).addTo(map);
  } else {
    map.getContainer().classList.add('no-tiles');
  }
  initLabels(map);
  map.on('click', (event) => {
    const where = event.latlng.wrap();
    setPoint(where.lat, where.lng, { source: 'map' });
  });
  on('point', drawPoint);
}

export function centreOn(lat, lon) {
  if (!map) return;
  map.setView([lat, lon], Math.max(map.getZoom(), FOCUS_ZOOM));
  bringIntoView();
}

// On a phone the panel is below the map, so what was chosen there would move a map scrolled out of sight:
// the page scrolls up to the map when less than half of it shows.
function bringIntoView() {
  const container = map.getContainer();
  const box = container.getBoundingClientRect();
  const shown = Math.min(box.bottom, window.innerHeight) - Math.max(box.top, 0);
  if (shown < box.height / 2) container.scrollIntoView({ block: 'nearest' });
}

// A layer group on the map, made when first asked for.
const groups = new Map();
export function layerGroup(name) {
  if (!map) return null;
  if (!groups.has(name)) groups.set(name, L.layerGroup().addTo(map));
  return groups.get(name);
}

// kind: place, friend, me, point, vote or temple; label: text shown beside the dot (or null).
export function makeMarker({ kind, id, lat, lon, label = null, title = null, onClick = null }) {
  const labelNode = label === null ? null : el('span', { class: 'pin-label', text: label });
  const body = el('span', { class: 'pin-body' }, el('span', { class: 'pin-dot', attrs: { 'aria-hidden': 'true' } }), labelNode);
  const size = kind === 'point' ? POINT_SIZE_PX : PIN_SIZE_PX;
  const icon = L.divIcon({ className: `pin pin-${kind}`, html: body, iconSize: [size, size] });
  const interactive = onClick !== null;
  const marker = L.marker([lat, lon], {
    icon,
    interactive,
    // Hundreds of places as tab stops would bury the panel; they are reached through its lists instead.
    keyboard: interactive && kind !== 'place',
    title: title ?? label ?? '',
    zIndexOffset: ((RANK[kind] ?? 1) - 1) * STACKING_STEP,
  });
  marker.vicinity = { kind, id, labelNode };
  if (onClick) marker.on('click', onClick);
  marker.on('add', () => {
    stamp(marker);
    // A pin reached with the Tab key may be outside the view (a temple far away): the map goes to it.
    marker.getElement()?.addEventListener('focus', () => {
      if (!map.getBounds().contains(marker.getLatLng())) map.panTo(marker.getLatLng());
    });
    scheduleLabels();
  });
  marker.on('remove', scheduleLabels);
  return marker;
}

export function moveMarker(marker, lat, lon) {
  marker.setLatLng([lat, lon]);
  stamp(marker);
  scheduleLabels();
}

export function relabelMarker(marker, label) {
  if (marker.vicinity.labelNode) marker.vicinity.labelNode.textContent = label;
  const element = marker.getElement();
  if (element) element.title = label;
  scheduleLabels();
}

function stamp(marker) {
  const element = marker.getElement();
  if (!element) return;
  const { lat, lng } = marker.getLatLng();
  element.dataset.kind = marker.vicinity.kind;
  element.dataset.id = marker.vicinity.id;
  element.dataset.lat = String(lat);
  element.dataset.lon = String(lng);
}

function drawPoint(point) {
  if (!map) return;
  if (pointMarker) {
    moveMarker(pointMarker, point.lat, point.lon);
  } else {
    pointMarker = makeMarker({ kind: 'point', id: 'point', lat: point.lat, lon: point.lon, title: 'Current point' });
    pointMarker.addTo(map);
  }
  if (point.centre) centreOn(point.lat, point.lon);
}

const MARKUP_ESCAPES = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
function escapeMarkup(text) {
  return String(text).replace(/[&<>"']/g, (character) => MARKUP_ESCAPES[character]);
}
