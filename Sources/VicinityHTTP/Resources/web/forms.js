// Errors where they arise: a field's message right under its control (named by the control's
// aria-describedby, the control marked aria-invalid), anything else under the form's buttons, each in the
// form's own words; a button's outside any form, right under the button. Every slot of a form is a live region
// made when the form is wired, empty until needed, so that screen readers announce what is written into it
// later; a button's slot is made at its first error, as an alert.
import { byId, el } from './dom.js';
import { clearMessage, markUnreachable, showError } from './messageline.js';
import { labelWords, problemLines } from './problems.js';

const settings = new WeakMap(); // form → { words, controls }
const besideSlots = new WeakMap(); // a control outside any form → the slot under it
let besideCount = 0;

// `words`: the server's field names as the form says them, where the control's label would not do (by default
// a field is called what the label of its control says: "first_name" → "First name").
// `controls`: the id of the control a field's errors go to, where no control of the form has the field's
// name.
export function prepareForm(form, { words = {}, controls = {} } = {}) {
  settings.set(form, { words, controls });
  for (const control of form.querySelectorAll('input, select, textarea')) {
    if (!control.id || control.type === 'hidden' || control.hidden) continue;
    const slot = el('p', { class: 'field-error', id: `${control.id}-error`, attrs: { role: 'alert' } });
    // Under the row a control shares with its button, so that the row keeps its shape.
    (control.closest('.row') ?? control).after(slot);
    const described = control.getAttribute('aria-describedby');
    control.setAttribute('aria-describedby', described ? `${described} ${slot.id}` : slot.id);
    // Typing again answers the message: it goes, and the control is no longer marked.
    control.addEventListener('input', () => clearControl(control));
  }
  form.append(el('p', { class: 'form-error', id: `${form.id}-error`, attrs: { role: 'alert' } }));
}

// A handler for the form's submit (or a button's click) that runs `action` and shows its failure in the form.
// `explain(error)` may give the form's own words for a refusal: { field, text }, field null for the form.
export function formAction(form, action, { explain } = {}) {
  return async (event) => {
    if (event?.type === 'submit') event.preventDefault();
    // One request at a time: a second press while the first is under way does nothing.
    if (form.getAttribute('aria-busy') === 'true') return;
    form.setAttribute('aria-busy', 'true');
    clearMessage();
    clearActionErrors();
    clearFormErrors(form);
    try {
      await action(event);
    } catch (error) {
      showFormError(form, error, explain);
    } finally {
      form.removeAttribute('aria-busy');
    }
  };
}

export function showFormError(form, error, explain) {
  if (error?.name === 'AbortError') return;
  clearFormErrors(form);
  if (!isShown(form)) {
    // The form went away meanwhile (the session ended, say): the page's message line says it instead.
    showError(error);
    return;
  }
  if (!settings.has(form)) prepareForm(form);
  const { words, controls } = settings.get(form);
  const problem = error?.problem ?? { detail: `Something went wrong: ${error?.message ?? error}` };
  let items = [];
  const explained = explain?.(error, problem);
  if (explained) items = [explained];
  else if (Array.isArray(problem.errors) && problem.errors.length > 0) {
    items = problem.errors.map((item) => {
      const control = controlOf(form, item.field, controls);
      const name = words[item.field] ?? labelWords(control) ?? item.field;
      return { field: item.field, text: `${name} ${item.message}` };
    });
  } else {
    items = [{ field: null, text: problem.detail ?? 'The request failed.' }];
  }
  let first = null;
  for (const { field, text } of items) {
    const control = field ? controlOf(form, field, controls) : null;
    const slot = control ? byId(`${control.id}-error`) : byId(`${form.id}-error`);
    if (control) {
      control.setAttribute('aria-invalid', 'true');
      first ??= control;
    }
    markUnreachable(slot, error);
    slot.append(el('span', { text }));
  }
  // The keyboard goes where the problem is; the control's message is read with it.
  first?.focus();
}

// Shows `error` beside the first of `trail` (a control, then what holds it) still on the page: in its form's
// slots when it is in a form, else in a slot right under it; in the message line when all of it has gone.
export function showBeside(trail, error) {
  if (error?.name === 'AbortError') return;
  const node = trail.find(isShown);
  if (!node) {
    showError(error);
    return;
  }
  const form = node.closest('form');
  if (form) {
    showFormError(form, error);
    return;
  }
  const slot = besideSlot(node);
  const { detail, fields } = problemLines(error);
  slot.replaceChildren(...[detail, ...fields].map((text) => el('span', { text })));
  markUnreachable(slot, error);
}

// Empties the slot under `control`, if it has one: what it said no longer holds.
export function clearBeside(control) {
  besideSlots.get(control)?.replaceChildren();
}

// Empties every button's slot: an action's message goes when the next action starts.
export function clearActionErrors() {
  for (const slot of document.querySelectorAll('.action-error')) slot.replaceChildren();
}

export function clearFormErrors(form) {
  for (const slot of form.querySelectorAll('.field-error, .form-error')) slot.replaceChildren();
  for (const control of form.querySelectorAll('[aria-invalid]')) control.removeAttribute('aria-invalid');
}

// The slot under `control`, made at its first error: under the row or the list item's actions the control is
// in, so that they keep their shape, and named by the control's aria-describedby.
function besideSlot(control) {
  const known = besideSlots.get(control);
  if (known?.isConnected) return known;
  besideCount += 1;
  const slot = el('p', { class: 'action-error', id: `action-error-${besideCount}`, attrs: { role: 'alert' } });
  (control.closest('.row, .actions') ?? control).after(slot);
  const described = (control.getAttribute('aria-describedby') ?? '').split(' ').filter((id) => id && byId(id));
  control.setAttribute('aria-describedby', [...described, slot.id].join(' '));
  besideSlots.set(control, slot);
  return slot;
}

function clearControl(control) {
  byId(`${control.id}-error`)?.replaceChildren();
  control.removeAttribute('aria-invalid');
}

function controlOf(form, field, controls) {
  const control = controls[field] ? byId(controls[field]) : form.elements.namedItem(field);
  return control instanceof HTMLElement && isShown(control) ? control : null;
}

function isShown(node) {
  return node.isConnected && node.getClientRects().length > 0;
}
