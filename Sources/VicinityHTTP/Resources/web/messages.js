// What the panels tell people: a control's error beside that control (forms.js), anything about the whole
// page, and short success notices, in the message line (messageline.js).
import { clearActionErrors, clearFormErrors, showBeside } from './forms.js';
import { clearMessage } from './messageline.js';

export { clearMessage, showError, showOk } from './messageline.js';

// Runs an action and reports its failure beside the control it was started from (the button pressed, the form
// sent), so that a click handler never leaves a rejected promise behind and its error shows where the eyes are.
// What an earlier action said goes first: it would read as this one's.
export function reporting(action) {
  return async (event, ...rest) => {
    // Only while the event is dispatched does it name the control; the action may wait first.
    const control = event?.currentTarget instanceof Element ? event.currentTarget : null;
    const trail = control ? ancestors(control) : [];
    clearMessage();
    clearActionErrors();
    const form = control?.closest('form');
    if (form) clearFormErrors(form);
    try {
      await action(event, ...rest);
    } catch (error) {
      showBeside(trail, error);
    }
  };
}

// The control and what holds it, nearest first, up to its form or the section it is in: a list drawn again by
// the action has replaced the button, and its error then goes beside the list.
function ancestors(control) {
  const trail = [];
  for (let node = control; node && !node.matches('section, .panel, .card'); node = node.parentElement) {
    trail.push(node);
    if (node.tagName === 'FORM') break;
  }
  return trail;
}
