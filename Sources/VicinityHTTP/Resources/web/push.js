// Notifications on this device: "Notify me on this device" subscribes this browser with its push service and
// registers the subscription with the server as one of the person's devices; turning it off unsubscribes and
// removes that device. The kinds of event that notify are the person's, for all their devices. The service
// worker (/sw.js) is registered at every load, signed in or not: it only shows what the server pushes.
// Every failure is said in the page's own words next to the switch, never as the browser's exception text.
import { del, get, post, put } from './api.js';
import { on } from './bus.js';
import { byId, clear, el } from './dom.js';
import { currentAccount } from './session.js';

const SAY = {
  unsupported: 'This browser cannot receive notifications.',
  noServer: 'This server does not send notifications.',
  blocked: "Notifications are blocked for this site in the browser's settings.",
  noPushService: 'This browser has no push service available right now.',
  dismissed: 'Notifications were not allowed: turn the switch on again to be asked again.',
  noWorker: 'The page could not start its notification worker. Reload the page and try again.',
  failed: 'Notifications could not be turned on. Try again.',
  on: 'Notifications are on for this device.',
  off: 'Notifications are off for this device.',
};
// A push service answers a subscription within a few seconds, even on a slow phone network.
const SUBSCRIBE_WAIT_MS = 10000;
// This browser's device on the server ({ user, device, endpoint }): the device's id is what turning off
// removes. In localStorage, unlike the session: the subscription outlives the tab.
const DEVICE_KEY = 'vicinity.pushDevice';

let registering = null; // the worker's registration under way or done; null where the browser has none
let keyLookup = null; // the server's key: { key }, or { key: null } when it sends no notifications (404)

export function initPush() {
  if (supported()) {
    registering = navigator.serviceWorker.register('/sw.js', { updateViaCache: 'none' });
    // A failure is told when the switch is used, not at every load.
    registering.catch(() => {});
  }
  byId('push-switch').addEventListener('change', toggled);
  for (const box of kindBoxes()) box.addEventListener('change', savePreferences);
  on('session', (account) => {
    if (account) showState(account);
    else reset();
  });
}

// Turns this device's notifications off before signing out: the next person at this browser must not get
// them. Whatever fails is left for the server to find out (the push service then says the device is gone).
export async function stopForSignOut() {
  const account = currentAccount();
  if (!account || !byId('push-switch').checked) return;
  try {
    await turnOff(account);
  } catch {
    // signing out goes on
  }
}

function supported() {
  return window.isSecureContext && 'serviceWorker' in navigator && 'PushManager' in window && 'Notification' in window;
}

async function showState(account) {
  const box = byId('push-switch');
  say('');
  box.checked = false;
  loadPreferences(account);
  if (!supported()) {
    box.disabled = true;
    say(SAY.unsupported, true);
    return;
  }
  box.disabled = false;
  lookUpKey().catch(() => {}); // told when the switch is used
  const subscription = await currentSubscription();
  if (currentAccount()?.id !== account.id) return; // signed out or in as another meanwhile
  const kept = keptDevice();
  box.checked = subscription !== null && kept?.user === account.id && kept.endpoint === subscription.endpoint;
  if (box.checked && Notification.permission === 'denied') say(SAY.blocked, true);
}

function reset() {
  const box = byId('push-switch');
  box.checked = false;
  box.disabled = false;
  say('');
  byId('push-kinds').hidden = true;
  sayKinds('');
}

async function toggled() {
  const box = byId('push-switch');
  const account = currentAccount();
  if (!account) return;
  const wanted = box.checked;
  box.disabled = true;
  say(wanted ? 'Turning notifications on…' : 'Turning notifications off…');
  try {
    if (wanted) await turnOn(account);
    else await turnOff(account);
    say(wanted ? SAY.on : SAY.off);
  } catch (error) {
    say(error?.say ?? error?.problem?.detail ?? SAY.failed, true);
  } finally {
    // The switch shows what is so, whatever happened on the way.
    box.checked = await isOn(account);
    box.disabled = !supported();
  }
}

async function turnOn(account) {
  if (!supported()) throw refusal(SAY.unsupported);
  // Known without asking: no need to fetch the key to say so.
  if (Notification.permission === 'denied') throw refusal(SAY.blocked);
  // Looked up at sign-in, so that the permission is asked for while the click still counts as the person's
  // (Safari and Firefox ask only then), and nobody is asked on a server that sends nothing.
  const { key } = await (keyLookup ?? lookUpKey());
  if (!key) {
    keyLookup = null; // looked up again next time: the server may be set up by then
    throw refusal(SAY.noServer);
  }
  const applicationServerKey = keyBytes(key);
  const permission = await Notification.requestPermission();
  if (permission === 'denied') throw refusal(SAY.blocked);
  if (permission !== 'granted') throw refusal(SAY.dismissed);
  let registration;
  try {
    await registering;
    registration = await navigator.serviceWorker.ready;
  } catch {
    throw refusal(SAY.noWorker);
  }

  let subscription = await registration.pushManager.getSubscription();
  if (subscription && !sameBytes(subscription.options?.applicationServerKey, applicationServerKey)) {
    // Made for another key (the server's key changed): the push service would refuse the server's messages.
    await subscription.unsubscribe();
    subscription = null;
  }
  try {
    subscription ??= await subscribeWithin(registration, applicationServerKey, SUBSCRIBE_WAIT_MS);
  } catch (error) {
    if (error?.name === 'NotAllowedError') throw refusal(SAY.blocked);
    // AbortError, NotSupportedError, InvalidStateError: no push service to be had (headless, offline, no
    // service built in).
    throw refusal(SAY.noPushService);
  }
  try {
    const device = await post('/v1/me/push-subscriptions', { auth: true, body: wire(subscription) });
    keepDevice({ user: account.id, device: device.id, endpoint: subscription.endpoint });
  } catch (error) {
    // Not left subscribed for nothing: the server does not know where to send.
    await subscription.unsubscribe().catch(() => {});
    throw error;
  }
}

// A browser that cannot reach its push service (headless Chromium, offline) may never settle subscribe(): after
// this long it counts as no push service. A late subscription is dropped, as nobody registered it.
async function subscribeWithin(registration, applicationServerKey, milliseconds) {
  const subscribing = registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey });
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => {
      subscribing.then((subscription) => {
        if (keptDevice()?.endpoint !== subscription.endpoint) return subscription.unsubscribe();
        return null;
      }, () => {}).catch(() => {});
      reject(new DOMException('The push service did not answer.', 'AbortError'));
    }, milliseconds);
  });
  try {
    return await Promise.race([subscribing, late]);
  } finally {
    clearTimeout(timer);
  }
}

function lookUpKey() {
  keyLookup = get('/v1/push/vapid-public-key').then(({ key }) => ({ key }), (error) => {
    keyLookup = null; // a failure is not remembered
    if (error.status === 404) return { key: null };
    throw error;
  });
  return keyLookup;
}

async function turnOff(account) {
  const subscription = await currentSubscription();
  const kept = keptDevice();
  let id = kept?.user === account.id ? kept.device : null;
  if (!id && subscription) {
    // Not remembered here (storage cleared, say): registering the same endpoint again names its device.
    id = await post('/v1/me/push-subscriptions', { auth: true, body: wire(subscription) }).then((device) => device.id, () => null);
  }
  // The browser first: whatever the server says next, nothing more is shown on this device.
  await subscription?.unsubscribe().catch(() => {});
  forgetDevice();
  if (!id) return;
  try {
    await del(`/v1/me/push-subscriptions/${encodeURIComponent(id)}`, { auth: true });
  } catch (error) {
    if (error.status !== 404) throw error; // 404: removed already, from another tab
  }
}

async function isOn(account) {
  if (!supported()) return false;
  const subscription = await currentSubscription();
  const kept = keptDevice();
  return subscription !== null && kept?.user === account.id && kept.endpoint === subscription.endpoint;
}

async function currentSubscription() {
  try {
    const registration = await navigator.serviceWorker.getRegistration('/');
    return (await registration?.pushManager.getSubscription()) ?? null;
  } catch {
    return null;
  }
}

// The subscription as the server takes it: what PushSubscription.toJSON() gives, with its kind.
function wire(subscription) {
  const { endpoint, keys } = subscription.toJSON();
  return { kind: 'webpush', endpoint, keys: { p256dh: keys.p256dh, auth: keys.auth } };
}

// The server's key, base64url without padding, as the bytes subscribe() takes.
function keyBytes(text) {
  try {
    const base64 = text.replace(/-/g, '+').replace(/_/g, '/') + '='.repeat((4 - (text.length % 4)) % 4);
    return Uint8Array.from(atob(base64), (character) => character.charCodeAt(0));
  } catch {
    throw refusal(SAY.failed);
  }
}

function sameBytes(buffer, bytes) {
  if (!buffer) return false;
  const other = new Uint8Array(buffer);
  return other.length === bytes.length && other.every((byte, index) => byte === bytes[index]);
}

function refusal(text) {
  const error = new Error(text);
  error.say = text;
  return error;
}

function keptDevice() {
  try {
    return JSON.parse(localStorage.getItem(DEVICE_KEY) ?? 'null');
  } catch {
    return null;
  }
}

function keepDevice(device) {
  try {
    localStorage.setItem(DEVICE_KEY, JSON.stringify(device));
  } catch {
    // not kept: turning off then finds the device by registering the endpoint again
  }
}

function forgetDevice() {
  try {
    localStorage.removeItem(DEVICE_KEY);
  } catch {
    // nothing kept
  }
}

// The line under the switch: a state in the hint's colours, a problem in the page's error style.
function say(text, problem = false) {
  const line = byId('push-state');
  clear(line);
  line.className = problem ? 'form-error' : 'hint';
  line.setAttribute('role', problem ? 'alert' : 'status');
  if (text) line.append(el('span', { text }));
}

// Which kinds of event notify

function kindBoxes() {
  return [...document.querySelectorAll('#push-kinds input[data-kind]')];
}

async function loadPreferences(account) {
  const fieldset = byId('push-kinds');
  sayKinds('');
  try {
    const preferences = await get('/v1/me/push-preferences', { auth: true });
    if (currentAccount()?.id !== account.id) return;
    showPreferences(preferences);
    fieldset.hidden = false;
  } catch (error) {
    fieldset.hidden = true;
    // 404: this server keeps no notification settings.
    if (error.status !== 404 && error.name !== 'AbortError') sayKinds(error.problem?.detail ?? 'The notification settings could not be read.');
  }
}

function showPreferences(preferences) {
  for (const box of kindBoxes()) box.checked = preferences?.[box.dataset.kind] !== false;
}

async function savePreferences(event) {
  const changed = event.target;
  const boxes = kindBoxes();
  const body = Object.fromEntries(boxes.map((box) => [box.dataset.kind, box.checked]));
  for (const box of boxes) box.disabled = true;
  sayKinds('');
  try {
    showPreferences(await put('/v1/me/push-preferences', { auth: true, body }));
  } catch (error) {
    changed.checked = !changed.checked;
    sayKinds(error.problem?.detail ?? 'The notification settings could not be saved. Try again.');
  } finally {
    for (const box of boxes) box.disabled = false;
  }
}

function sayKinds(text) {
  const line = byId('push-kinds-error');
  clear(line);
  if (text) line.append(el('span', { text }));
}
