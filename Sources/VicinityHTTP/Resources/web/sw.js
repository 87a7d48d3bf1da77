// The page's service worker, served at /sw.js so that its scope is the whole page. It shows the server's
// push messages as notifications ({type, title, body, url, tag, event}, as the server sends them), and a
// click on one brings the page up at the panel the message names. It caches nothing and answers no fetch:
// the page is always the server's current one.
'use strict';

const ICON = '/app/app-icon-192.png';
// A push must show something (subscribed with userVisibleOnly): one that cannot be read still says where to look.
const FALLBACK_TITLE = 'Vicinity';
const FALLBACK_BODY = 'Something happened: open Vicinity to see it.';

// A new version takes over at once: the worker keeps no state that an older page could depend on.
self.addEventListener('install', () => self.skipWaiting());
self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));

self.addEventListener('push', (event) => event.waitUntil(showPush(event.data)));

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  event.waitUntil(openPage(event.notification.data?.url));
});

function showPush(data) {
  const message = readMessage(data);
  const title = nonEmpty(message.title) ?? FALLBACK_TITLE;
  const options = {
    body: nonEmpty(message.body) ?? (message.title ? '' : FALLBACK_BODY),
    icon: ICON,
    data: { url: pageAddress(message.url), type: message.type ?? null, event: message.event ?? null },
  };
  const tag = nonEmpty(message.tag);
  if (tag) {
    // A newer message of the same kind replaces the older one, and still alerts (a second poke is news).
    options.tag = tag;
    options.renotify = true;
  }
  return self.registration.showNotification(title, options);
}

function readMessage(data) {
  try {
    const message = data?.json();
    if (message && typeof message === 'object') return message;
  } catch {
    // not JSON: shown as the fallback
  }
  return {};
}

function nonEmpty(text) {
  return typeof text === 'string' && text.trim() !== '' ? text : null;
}

// The address as a path on this site ("/#friends"): a message never sends anyone to another site.
function pageAddress(url) {
  try {
    const target = new URL(url, self.location.origin);
    if (target.origin === self.location.origin) return target.pathname + target.search + target.hash;
  } catch {
    // no address, or not one: the page's start
  }
  return '/';
}

// Focuses a tab that shows the page and tells it where to go (the page opens the panel without reloading,
// so that a session kept in that tab stays); with no such tab, opens one at the address.
async function openPage(url) {
  const address = pageAddress(url);
  const target = new URL(address, self.location.origin);
  const windows = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const page = windows.find((client) => new URL(client.url).pathname === target.pathname)
    ?? windows.find((client) => new URL(client.url).origin === target.origin);
  if (!page) {
    await self.clients.openWindow(target.href);
    return;
  }
  const focused = (await page.focus()) ?? page;
  if (new URL(focused.url).pathname === target.pathname) {
    focused.postMessage({ type: 'open', url: address });
    return;
  }
  try {
    await focused.navigate(target.href);
  } catch {
    // navigate() is refused for a tab this worker does not control: a new tab then
    await self.clients.openWindow(target.href);
  }
}
