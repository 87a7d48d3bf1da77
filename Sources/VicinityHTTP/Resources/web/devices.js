// One's phones: OwnTracks or Traccar Client, each with its own password. The list says when each last sent a
// position and removes one at once; adding one shows its settings this once, for OwnTracks also as the app's
// own configuration link and a QR code of it (drawn with the system's qrcode-generator), so that one scan
// sets the app up.
import { del, get, post } from './api.js';
import { on } from './bus.js';
import { byId, clear, el, emptyItem } from './dom.js';
import { formatAge } from './format.js';
import { formAction, prepareForm } from './forms.js';
import { reporting, showError, showOk } from './messages.js';

const KIND_NAMES = { owntracks: 'OwnTracks', traccar: 'Traccar Client' };
// The settings as each app's screens name them, in the order they ask for them.
const SETTING_NAMES = {
  owntracks: [['mode', 'Mode'], ['url', 'URL'], ['username', 'Username'], ['password', 'Password'],
    ['device_id', 'Device ID'], ['tracker_id', 'Tracker ID']],
  traccar: [['server_url', 'Server URL'], ['device_identifier', 'Device identifier']],
};
const SVG = 'http://www.w3.org/2000/svg';
// Error correction M (15% of the code may be lost) and the quiet zone of four modules the standard asks for.
const QR_CORRECTION = 'M';
const QR_QUIET_MODULES = 4;

export function initDevices() {
  const form = byId('device-form');
  prepareForm(form, { words: { name: 'Phone’s name', kind: 'App' }, controls: { kind: 'device-kind-owntracks' } });
  form.addEventListener('submit', formAction(form, add));
  byId('device-setup-done').addEventListener('click', () => {
    hideSetup();
    byId('device-name').focus();
  });
  on('session', (account) => {
    hideSetup();
    // Not `reporting`: that would first clear what signing in just said.
    if (account) load().catch(showError);
    else clear(byId('device-list'));
  });
}

async function load() {
  const { devices } = await get('/v1/me/devices', { auth: true });
  const list = byId('device-list');
  clear(list);
  if (devices.length === 0) {
    list.append(emptyItem('No phone yet.'));
    return;
  }
  for (const device of devices) list.append(item(device));
}

function item(device) {
  const used = device.last_used_at ? `last sent a position ${formatAge(device.last_used_at)} ago` : 'has not sent a position yet';
  const remove = el('button', {
    class: 'secondary', text: 'Remove', attrs: { type: 'button', 'aria-label': `Remove ${device.name}` },
  });
  remove.addEventListener('click', reporting(async () => {
    await del(`/v1/me/devices/${encodeURIComponent(device.id)}`, { auth: true });
    if (byId('device-setup').dataset.deviceId === device.id) hideSetup();
    await load();
    showOk(`${device.name} is removed: its app can no longer send your position.`);
    byId('device-name').focus();
  }));
  return el('li', { data: { deviceId: device.id } },
    el('span', { class: 'device-name', text: device.name }), ' ',
    el('span', { class: 'hint', text: `${KIND_NAMES[device.kind] ?? device.kind}, ${used}` }), ' ',
    remove);
}

async function add() {
  const form = byId('device-form');
  const name = byId('device-name').value;
  const kind = form.querySelector('input[name="kind"]:checked')?.value ?? 'owntracks';
  const added = await post('/v1/me/devices', { auth: true, body: { name, kind } });
  form.reset();
  await showSetup(added);
  await load();
}

async function showSetup(device) {
  const card = byId('device-setup');
  card.dataset.deviceId = device.id;
  byId('device-setup-heading').textContent = `Set up ${KIND_NAMES[device.kind] ?? device.kind} on ${device.name}`;
  const settings = byId('device-settings');
  clear(settings);
  for (const [key, label] of SETTING_NAMES[device.kind] ?? []) {
    if (device.setup?.[key] === undefined) continue;
    settings.append(el('dt', { text: label }), el('dd', { data: { setting: key } }, el('code', { text: device.setup[key] })));
  }
  const qr = byId('device-qr');
  clear(qr);
  const link = device.setup?.config_link;
  byId('device-link-line').hidden = !link;
  if (link) {
    byId('device-link').href = link;
    const library = await qrLibrary();
    qr.append(library ? qrCode(library, link) : el('p', {
      class: 'hint', text: 'No QR code: the server has no QR code library. Open the link on the phone, or type the settings below.',
    }));
  }
  card.hidden = false;
  card.focus();
}

// The QR code library, loaded the first time a code is drawn rather than with the page: most visits draw
// none. Null when the server does not have it.
let qrLoading = null;
function qrLibrary() {
  qrLoading ??= new Promise((resolve) => {
    const script = el('script', { attrs: { src: '/qrcode/qrcode.js' } });
    script.addEventListener('load', () => resolve(typeof window.qrcode === 'function' ? window.qrcode : null));
    script.addEventListener('error', () => {
      qrLoading = null; // tried again next time: the server may have it by then
      resolve(null);
    });
    document.head.append(script);
  });
  return qrLoading;
}

function hideSetup() {
  const card = byId('device-setup');
  card.hidden = true;
  delete card.dataset.deviceId;
  // The password goes from the page with the card.
  clear(byId('device-settings'));
  clear(byId('device-qr'));
  byId('device-link').removeAttribute('href');
}

// An SVG of `text` as a QR code made with `library`, black on white whatever the page's colours (as
// scanners expect).
function qrCode(library, text) {
  const code = library(0, QR_CORRECTION);
  code.addData(text, 'Byte');
  code.make();
  const modules = code.getModuleCount();
  const size = modules + 2 * QR_QUIET_MODULES;
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('viewBox', `0 0 ${size} ${size}`);
  svg.setAttribute('role', 'img');
  svg.setAttribute('aria-label', 'QR code of the OwnTracks settings');
  svg.setAttribute('shape-rendering', 'crispEdges');
  const background = document.createElementNS(SVG, 'rect');
  background.setAttribute('width', String(size));
  background.setAttribute('height', String(size));
  background.setAttribute('fill', '#ffffff');
  svg.append(background);
  // One path for all dark modules: a few thousand squares as one element.
  let path = '';
  for (let row = 0; row < modules; row += 1) {
    for (let column = 0; column < modules; column += 1) {
      if (code.isDark(row, column)) path += `M${column + QR_QUIET_MODULES} ${row + QR_QUIET_MODULES}h1v1h-1z`;
    }
  }
  const dark = document.createElementNS(SVG, 'path');
  dark.setAttribute('d', path);
  dark.setAttribute('fill', '#000000');
  svg.append(dark);
  return svg;
}
