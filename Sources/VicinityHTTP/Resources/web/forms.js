// Errors where they arise: a field's message right under its control (named by the control's
// aria-describedby, the control marked aria-invalid), anything else under the form's buttons, each in the
// form's own words. Every slot is a live region made when the form is wired, empty until needed, so that
// screen readers announce what is written into it later.
import { byId, el } from './dom.js';
import { clearMessage, showError } from './messages.js';

const settings = new WeakMap(); // form → { words, controls }

// `words`: the server's field names as the form's labels say them ("first_name" → "First name").
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
  const { words, controls } = settings.get(form) ?? { words: {}, controls: {} };
  const problem = error?.problem ?? { detail: `Something went wrong: ${error?.message ?? error}` };
  let items = [];
  const explained = explain?.(error, problem);
  if (explained) items = [explained];
  else if (Array.isArray(problem.errors) && problem.errors.length > 0) {
    items = problem.errors.map((item) => ({ field: item.field, text: `${words[item.field] ?? item.field} ${item.message}` }));
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
    slot.append(el('span', { text }));
  }
  // The keyboard goes where the problem is; the control's message is read with it.
  first?.focus();
}

export function clearFormErrors(form) {
  for (const slot of form.querySelectorAll('.field-error, .form-error')) slot.replaceChildren();
  for (const control of form.querySelectorAll('[aria-invalid]')) control.removeAttribute('aria-invalid');
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
