// The one message line (#message): a problem+json answer as its detail and each field's message, or a
// short success notice.
import { byId, clear, el } from './dom.js';

export function showError(error) {
  if (error?.name === 'AbortError') return; // a newer request replaced this one: nothing went wrong
  const box = byId('message');
  clear(box);
  box.setAttribute('role', 'alert');
  box.className = 'error';
  const problem = error?.problem;
  if (!problem) {
    box.append(el('p', { text: `Something went wrong: ${error?.message ?? error}` }));
    return;
  }
  // The server's words already say when to try again (429 and 503 name the wait): said once.
  const detail = problem.detail ?? 'The request failed.';
  box.append(el('p', { class: 'detail', text: detail }));
  if (Array.isArray(problem.errors) && problem.errors.length > 0) {
    box.append(el('ul', { class: 'field-errors' },
      problem.errors.map((item) => el('li', { text: `${item.field}: ${item.message}` }))));
  }
}

export function showOk(text) {
  const box = byId('message');
  clear(box);
  box.setAttribute('role', 'status');
  box.className = 'ok';
  box.append(el('p', { text }));
}

export function clearMessage() {
  const box = byId('message');
  clear(box);
  box.className = '';
  box.setAttribute('role', 'alert');
}

// Runs an action and reports its failure, so that a click handler never leaves a rejected promise behind.
// The message of an earlier action goes first: it would read as this one's.
export function reporting(action) {
  return async (...args) => {
    clearMessage();
    try {
      await action(...args);
    } catch (error) {
      showError(error);
    }
  };
}
