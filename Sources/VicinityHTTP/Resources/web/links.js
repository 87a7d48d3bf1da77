// Addresses that open a panel: "/#friends", "/#votes", "/#account", "/#places", and "/#votes/7KQ2MX" (or
// "/#vote/7KQ2MX") for one vote. A notification's click arrives here too: the service worker tells an open
// tab where to go rather than reloading it.
import { selectTab } from './tabs.js';
import { openVote } from './vote.js';

const TABS = ['places', 'friends', 'votes', 'account'];

export function initLinks() {
  window.addEventListener('hashchange', () => follow(location.hash));
  navigator.serviceWorker?.addEventListener('message', (event) => {
    if (event.data?.type !== 'open' || typeof event.data.url !== 'string') return;
    const hash = new URL(event.data.url, location.origin).hash;
    // The same hash again fires no hashchange: followed here either way.
    if (hash !== location.hash) history.replaceState(null, '', hash || location.pathname);
    follow(hash);
  });
}

// After the session is restored, so that a vote opens with one's own ballot.
export function followAddress() {
  follow(location.hash);
}

function follow(hash) {
  const [name, id] = decodeURIComponent(hash.replace(/^#/, '')).split('/');
  if (name === 'vote' || name === 'votes') {
    selectTab('votes');
    if (id) openVote(id);
  } else if (TABS.includes(name)) {
    selectTab(name);
  }
}
