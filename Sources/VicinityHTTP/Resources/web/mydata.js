// What one holds here: a copy of it all as a JSON file, and deleting the account with everything about it,
// after a confirming step that says what goes and asks for the password (none for a while after signing in
// with a mailed code).
import { del, get } from './api.js';
import { on } from './bus.js';
import { byId, el } from './dom.js';
import { formatTime, nameWithUsername } from './format.js';
import { clearFormErrors, formAction, prepareForm } from './forms.js';
import { showOk } from './messages.js';
import { explainRefusal } from './password.js';
import { currentAccount, endSession, passwordlessUntil } from './session.js';

const EXPORT_NAME = 'vicinity-export.json';
// The download reads the file from its Blob URL after the click returns; the URL is let go well after that.
const BLOB_URL_LIFETIME_MS = 60 * 1000;

export function initMyData() {
  const exportForm = byId('export-form');
  prepareForm(exportForm);
  exportForm.addEventListener('submit', formAction(exportForm, download));

  const deleteForm = byId('delete-form');
  prepareForm(deleteForm, { words: { password: 'Password' } });
  deleteForm.addEventListener('submit', formAction(deleteForm, deleteAccount, { explain: explainRefusal('password') }));
  byId('delete-account').addEventListener('click', () => askToDelete(true));
  byId('delete-no').addEventListener('click', () => askToDelete(false, { focus: true }));
  deleteForm.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    askToDelete(false, { focus: true });
  });
  on('session', () => askToDelete(false));
}

async function download() {
  // Fetched with the bearer token (a plain link could not send it), then handed to the browser as a file.
  const response = await get('/v1/me/export', { auth: true, raw: true });
  const blob = await response.blob();
  const name = fileName(response.headers.get('Content-Disposition'));
  const url = URL.createObjectURL(blob);
  const link = el('a', { attrs: { href: url, download: name } });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), BLOB_URL_LIFETIME_MS);
  showOk(`Your data is saved as ${name} in your downloads.`);
}

// The name the server gives the file (a plain `filename="…"`), or the usual one.
function fileName(disposition) {
  const found = /filename="([^"\\/]+)"/.exec(disposition ?? '');
  return found ? found[1] : EXPORT_NAME;
}

function askToDelete(open, { focus = false } = {}) {
  const form = byId('delete-form');
  const button = byId('delete-account');
  form.reset();
  clearFormErrors(form);
  form.hidden = !open;
  button.setAttribute('aria-expanded', String(open));
  if (!open) {
    if (focus) button.focus();
    return;
  }
  const account = currentAccount();
  byId('delete-who').textContent = account ? nameWithUsername(account) : '';
  const until = passwordlessUntil();
  byId('delete-password-field').hidden = until !== null;
  const note = byId('delete-passwordless');
  note.hidden = until === null;
  if (until !== null) {
    note.textContent = `You signed in with a code: until ${formatTime(new Date(until).toISOString())} no password is needed.`;
  }
  (until === null ? byId('delete-password') : byId('delete-yes')).focus();
}

async function deleteAccount() {
  const password = byId('delete-password').value;
  const withPassword = !byId('delete-password-field').hidden && password !== '';
  await del('/v1/me', { auth: true, body: withPassword ? { password } : undefined });
  endSession();
  showOk('Your account is deleted, with everything about you, and you are signed out.');
  byId('signin-login').focus();
}
