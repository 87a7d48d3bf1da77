// The panel's sections as tabs: one panel shown at a time; arrow keys, Home and End move between tabs. The
// tab shown is announced as "tab", so that a panel can read again what may have changed while it was away.
import { emit } from './bus.js';

const NAMES = ['places', 'friends', 'votes', 'account'];

export function initTabs() {
  for (const name of NAMES) {
    const tab = document.getElementById(`tab-${name}`);
    tab.addEventListener('click', () => selectTab(name));
    tab.addEventListener('keydown', (event) => moveFocus(event, name));
  }
}

export function selectTab(name, { focus = false } = {}) {
  for (const other of NAMES) {
    const tab = document.getElementById(`tab-${other}`);
    const selected = other === name;
    tab.setAttribute('aria-selected', String(selected));
    tab.tabIndex = selected ? 0 : -1;
    document.getElementById(`panel-${other}`).hidden = !selected;
    if (selected && focus) tab.focus();
  }
  emit('tab', name);
}

function moveFocus(event, name) {
  const index = NAMES.indexOf(name);
  const targets = {
    ArrowRight: NAMES[(index + 1) % NAMES.length],
    ArrowLeft: NAMES[(index + NAMES.length - 1) % NAMES.length],
    Home: NAMES[0],
    End: NAMES[NAMES.length - 1],
  };
  const target = targets[event.key];
  if (!target) return;
  event.preventDefault();
  selectTab(target, { focus: true });
}
