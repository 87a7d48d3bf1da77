// One's own shared position and status: sharing the current point, stopping, and one's own pin.
import { del, get, localProblem, put } from './api.js';
import { emit, on } from './bus.js';
import { byId } from './dom.js';
import { formatCoordinate, formatTime } from './format.js';
import { formAction, prepareForm } from './forms.js';
import { layerGroup, makeMarker, moveMarker, relabelMarker } from './map.js';
import { reporting, showError, showOk } from './messages.js';
import { currentPoint } from './point.js';
import { currentAccount, isSignedIn } from './session.js';

let own = null; // the position as the server answered it, or null when sharing none
let marker = null;

export function ownPosition() {
  return own;
}

export function initPosition() {
  const form = byId('position-form');
  prepareForm(form);
  form.addEventListener('submit', formAction(form, share));
  byId('stop-sharing').addEventListener('click', reporting(stop));
  on('point', describePoint);
  on('session', (account) => (account ? load() : show(null)));
  describePoint(null);
}

async function load() {
  try {
    const position = await get('/v1/me/position', { auth: true });
    if (isSignedIn()) show(position); // not after signing out meanwhile
  } catch (error) {
    show(null);
    if (error.status !== 404) showError(error); // 404: sharing nothing yet
  }
}

async function share() {
  const point = currentPoint();
  if (!point) throw localProblem('Choose a point first (Places): click the map, pick a place, or use your position.');
  const status = byId('position-status').value.trim();
  const body = { lat: point.lat, lon: point.lon, status: status === '' ? null : status };
  if (point.accuracy !== null) body.accuracy_m = point.accuracy;
  const answer = await put('/v1/me/position', { auth: true, body });
  show(answer);
  showOk(`Your position is shared: ${answer.label}.`);
}

async function stop() {
  await del('/v1/me/position', { auth: true });
  show(null);
  showOk('You no longer share a position; it is deleted.');
}

function show(position) {
  own = position;
  const line = byId('position-shared');
  if (position) {
    const status = position.status ? ` with the status “${position.status}”` : '';
    const when = position.presence === 'last_seen' ? ` (last seen ${formatTime(position.updated_at)})` : '';
    line.textContent = `You share: ${position.label}${status}${when}.`;
  } else {
    line.textContent = 'You share no position.';
  }
  drawPin(position);
  emit('own-position', position);
}

function drawPin(position) {
  const group = layerGroup('me');
  if (!group) return;
  if (!position) {
    group.clearLayers();
    marker = null;
    return;
  }
  const account = currentAccount();
  const label = `${account ? account.first_name : 'You'} (you) — ${position.label}`;
  if (marker) {
    moveMarker(marker, position.lat, position.lon);
    relabelMarker(marker, label);
  } else {
    marker = makeMarker({ kind: 'me', id: account?.id ?? 'me', lat: position.lat, lon: position.lon, label });
    group.addLayer(marker);
  }
}

function describePoint(point) {
  byId('position-point').textContent = point
    ? `Shares the current point, ${formatCoordinate(point.lat)}, ${formatCoordinate(point.lon)}.`
    : 'Choose a point first (Places): click the map, pick a place, or use your position.';
}
