// The page's one message line at the top of the panel (#message): for what concerns the whole page (the map's
// places could not be read, the session ended), and for a control's error once the control is gone. Errors of
// a control go beside it instead (forms.js). An error that says the server could not be reached is marked, so
// that it goes once the server answers again (connection.js).
import { byId, clear, el } from './dom.js';
import { problemLines } from './problems.js';

export function showError(error) {
  if (error?.name === 'AbortError') return; // a newer request replaced this one: nothing went wrong
  const box = byId('message');
  clear(box);
  box.setAttribute('role', 'alert');
  box.className = 'error';
  markUnreachable(box, error);
  const { detail, fields } = problemLines(error);
  box.append(el('p', { class: 'detail', text: detail }));
  if (fields.length > 0) box.append(el('ul', { class: 'field-errors' }, fields.map((text) => el('li', { text }))));
}

export function showOk(text) {
  const box = byId('message');
  clear(box);
  box.setAttribute('role', 'status');
  box.className = 'ok';
  delete box.dataset.unreachable;
  box.append(el('p', { text }));
}

export function clearMessage() {
  const box = byId('message');
  clear(box);
  box.className = '';
  box.setAttribute('role', 'alert');
  delete box.dataset.unreachable;
}

// Marks `node` as saying the server could not be reached, or unmarks it.
export function markUnreachable(node, error) {
  if (error?.unreachable) node.dataset.unreachable = 'true';
  else delete node.dataset.unreachable;
}
