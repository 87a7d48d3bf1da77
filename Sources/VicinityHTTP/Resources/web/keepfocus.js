// Where the keyboard goes when what it was on goes away with a sign-in or a sign-out: the form or button
// pressed is hidden with the part of the page it belongs to, and the focus would fall back to the start of
// the page, to be found again from the top. It goes to what the new part says first instead.
import { on } from './bus.js';
import { byId } from './dom.js';

// What takes the focus once signed in, and once signed out.
const SIGNED_IN_TARGET = 'whoami';
const SIGNED_OUT_TARGET = 'signin-heading';

let lastFocused = null;

export function initFocusKeeping() {
  document.addEventListener('focusin', (event) => {
    lastFocused = event.target;
  });
  on('session', (account) => {
    // Once every panel has shown its part, and a panel that puts the focus somewhere itself (the code step
    // after signing up) has done so.
    setTimeout(() => keepFocus(account ? SIGNED_IN_TARGET : SIGNED_OUT_TARGET));
  });
}

function keepFocus(id) {
  const active = document.activeElement;
  if (active && active !== document.body && isShown(active)) return;
  // Only a focus lost by the change, not the page's first sign-in from a token kept in the tab.
  if (!lastFocused || isShown(lastFocused)) return;
  const target = byId(id);
  if (!target || !isShown(target)) return;
  if (!target.hasAttribute('tabindex')) target.tabIndex = -1;
  target.focus();
}

function isShown(node) {
  return node.isConnected && node.getClientRects().length > 0;
}
