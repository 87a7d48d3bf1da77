// Alerts: "tell me when a friend arrives at or leaves the chosen point, or comes near me", the alerts one set,
// and who may set alerts on oneself (allowed here, taken back here, with the alerts they hold). The events
// themselves are shown as notices (notices.js).
import { del, get, localProblem, post, put } from './api.js';
import { on } from './bus.js';
import { byId, clear, el, emptyItem } from './dom.js';
import { formatDistance, fullName, nameWithUsername } from './format.js';
import { formAction, prepareForm } from './forms.js';
import { reporting, showError, showOk } from './messages.js';
import { currentPoint } from './point.js';
import { bearer, isSignedIn } from './session.js';

export function initAlerts() {
  const alertForm = byId('alert-form');
  prepareForm(alertForm, { words: { friend: 'Friend', kind: 'What', radius_m: 'Distance' } });
  alertForm.addEventListener('submit', formAction(alertForm, setAlert));
  const watcherForm = byId('watcher-form');
  prepareForm(watcherForm, { words: { friend: 'Friend' } });
  watcherForm.addEventListener('submit', formAction(watcherForm, allow));
  on('session', (account) => (account ? load() : show({ friends: [], alerts: [], watchers: [] })));
  for (const name of ['friends-changed', 'stream:friend_accepted', 'stream-open']) on(name, () => isSignedIn() && load());
  // Alerts friends set on oneself are told to nobody live: the lists are read again whenever the panel opens.
  on('tab', (name) => name === 'friends' && isSignedIn() && load());
}

async function load() {
  const asked = bearer();
  try {
    const [friends, alerts, watchers] = await Promise.all([
      get('/v1/friends', { auth: true }), get('/v1/alerts', { auth: true }), get('/v1/me/watchers', { auth: true }),
    ]);
    if (isSignedIn() && bearer() === asked) show({ friends: friends.friends, alerts: alerts.alerts, watchers: watchers.watchers });
  } catch (error) {
    // A read that the session's end overtook says nothing: signing out is not an error.
    if (isSignedIn() && bearer() === asked) showError(error);
  }
}

function show({ friends, alerts, watchers }) {
  for (const id of ['alert-friend', 'watcher-friend']) {
    const select = byId(id);
    const chosen = select.value;
    select.replaceChildren(...friends.map((friend) => el('option', { text: nameWithUsername(friend), attrs: { value: friend.id } })));
    if (friends.some((friend) => friend.id === chosen)) select.value = chosen;
    select.disabled = friends.length === 0;
  }
  const list = byId('alerts-list');
  clear(list);
  if (alerts.length === 0) list.append(emptyItem('You have set no alerts.'));
  for (const alert of alerts) {
    const button = el('button', { class: 'remove-alert', text: 'Remove', attrs: { type: 'button' } });
    button.addEventListener('click', reporting(async () => {
      await del(`/v1/alerts/${encodeURIComponent(alert.id)}`, { auth: true });
      showOk('The alert is removed.');
      await load();
    }));
    list.append(el('li', { data: { alertId: alert.id } },
      el('span', { class: 'alert-text', text: describe(alert, `When ${fullName(alert.friend)}`) }),
      el('span', { class: 'actions' }, button)));
  }
  const watching = byId('watchers-list');
  clear(watching);
  if (watchers.length === 0) watching.append(emptyItem('Nobody may set alerts on you.'));
  for (const watcher of watchers) {
    const held = watcher.alerts.map((alert) => describe(alert, 'when you')).join('; ');
    const text = `${nameWithUsername(watcher.user)}${watcher.allowed_since ? ' may set alerts on you' : ''}`
      + (held ? `: tells them ${held}` : '');
    const item = el('li', { data: { userId: watcher.user.id } }, el('span', { class: 'watcher-text', text }));
    if (watcher.allowed_since) {
      const button = el('button', { class: 'revoke-watcher', text: 'Stop', attrs: { type: 'button' } });
      button.addEventListener('click', reporting(async () => {
        await del(`/v1/me/watchers/${encodeURIComponent(watcher.user.id)}`, { auth: true });
        showOk(`${fullName(watcher.user)} may no longer set alerts on you; theirs have ended.`);
        await load();
      }));
      item.append(el('span', { class: 'actions' }, button));
    }
    watching.append(item);
  }
}

// "When Pim arrives at or leaves Library (100 m)", "when you come within 300 m".
function describe(alert, subject) {
  const within = alert.radius_m ? ` (${formatDistance(alert.radius_m)})` : '';
  switch (alert.kind) {
    case 'nearby': return `${subject} ${subject === 'when you' ? 'come' : 'comes'} within ${formatDistance(alert.radius_m)}`;
    case 'point': return `${subject} ${subject === 'when you' ? 'arrive at or leave' : 'arrives at or leaves'} ${alert.point.lat.toFixed(5)}, ${alert.point.lon.toFixed(5)}${within}`;
    default: return `${subject} ${subject === 'when you' ? 'arrive at or leave' : 'arrives at or leaves'} ${alert.place?.name ?? alert.place?.id}${within}`;
  }
}

async function setAlert() {
  const friend = byId('alert-friend').value;
  const kind = byId('alert-kind').value;
  const radius = Number(byId('alert-radius').value);
  if (!friend) throw localProblem('Add a friend first: alerts are about friends.', [{ field: 'friend', message: 'is needed' }]);
  const body = { friend, kind, radius_m: radius };
  if (kind === 'point') {
    const point = currentPoint();
    if (!point) throw localProblem('Choose a point first: click the map, pick a place, or use your position.', [{ field: 'kind', message: 'needs a chosen point: click the map, pick a place, or use your position' }]);
    body.point = { lat: point.lat, lon: point.lon };
  }
  const alert = await post('/v1/alerts', { auth: true, body });
  showOk(`Alert set: ${describe(alert, `when ${fullName(alert.friend)}`)}.`);
  await load();
}

async function allow() {
  const friend = byId('watcher-friend').value;
  if (!friend) throw localProblem('Add a friend first.', [{ field: 'friend', message: 'is needed' }]);
  await put(`/v1/me/watchers/${encodeURIComponent(friend)}`, { auth: true });
  showOk(`${byId('watcher-friend').selectedOptions[0]?.textContent ?? 'They'} may now set alerts on you; you see them here.`);
  await load();
}
