// The current point, that the places, temples and votes lists and a shared position are about: set by a
// click on the map, a place found, the browser's own position, or typed coordinates.
import { emit } from './bus.js';
import { localProblem } from './api.js';
import { byId } from './dom.js';
import { formatCoordinate } from './format.js';
import { clearActionErrors, clearBeside, formAction, prepareForm, showBeside } from './forms.js';
import { clearMessage, showOk } from './messages.js';

// Geolocation may take a while outdoors; after this the manual form is offered instead.
const LOCATE_TIMEOUT_MS = 15000;
// A position a minute old is still where a walking person is, near enough.
const LOCATE_MAX_AGE_MS = 60000;

let current = null;

export function currentPoint() {
  return current;
}

// source: "map", "place", "device" or "typed"; centre: whether the map should move to the point.
export function setPoint(lat, lon, { source = 'map', accuracy = null, centre = false } = {}) {
  current = { lat, lon, source, accuracy };
  byId('point-lat').value = formatCoordinate(lat);
  byId('point-lon').value = formatCoordinate(lon);
  emit('point', { ...current, centre });
}

export function initPointControls() {
  const form = byId('point-form');
  prepareForm(form);
  form.addEventListener('submit', formAction(form, typed));
  byId('locate-me').addEventListener('click', locate);
}

function typed() {
  const lat = readDegrees(byId('point-lat').value);
  const lon = readDegrees(byId('point-lon').value);
  const errors = [];
  if (lat === null || lat < -90 || lat > 90) errors.push({ field: 'lat', message: 'must be a number of degrees from -90 to 90' });
  if (lon === null || lon < -180 || lon > 180) errors.push({ field: 'lon', message: 'must be a number of degrees from -180 to 180' });
  if (errors.length > 0) throw localProblem('The point needs a latitude and a longitude in decimal degrees.', errors);
  setPoint(lat, lon, { source: 'typed', centre: true });
}

function readDegrees(text) {
  const trimmed = text.trim();
  if (!/^[-+]?\d+(\.\d*)?$|^[-+]?\.\d+$/.test(trimmed)) return null;
  return Number(trimmed);
}

function locate() {
  clearMessage();
  clearActionErrors();
  if (!('geolocation' in navigator)) {
    offerManualEntry('This browser cannot tell its position.');
    return;
  }
  const button = byId('locate-me');
  button.disabled = true;
  showOk('Asking the browser for your position…');
  navigator.geolocation.getCurrentPosition(
    (position) => {
      button.disabled = false;
      const { latitude, longitude, accuracy } = position.coords;
      clearBeside(button);
      showOk(`Your position is set as the point (within ${Math.round(accuracy)} m).`);
      setPoint(latitude, longitude, { source: 'device', accuracy, centre: true });
    },
    (error) => {
      button.disabled = false;
      const reasons = {
        [error.PERMISSION_DENIED]: 'The browser was not allowed to tell your position.',
        [error.POSITION_UNAVAILABLE]: 'The browser could not find your position.',
        [error.TIMEOUT]: 'Finding your position took too long.',
      };
      offerManualEntry(reasons[error.code] ?? 'Your position is not available.');
    },
    { enableHighAccuracy: true, timeout: LOCATE_TIMEOUT_MS, maximumAge: LOCATE_MAX_AGE_MS },
  );
}

// Said under the button, where the eyes are after pressing it; the keyboard goes on to the coordinates.
function offerManualEntry(reason) {
  clearMessage();
  showBeside([byId('locate-me')], localProblem(`${reason} Type the latitude and longitude instead, or click the map.`));
  byId('point-lat').focus();
}
