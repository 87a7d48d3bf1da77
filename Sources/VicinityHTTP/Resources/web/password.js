// Changing one's password: with the current one, or without it for a while after signing in with a mailed
// code, which is how a forgotten password is replaced ("Forgot password?" in codesignin.js). The server ends
// every other session of the account.
import { put } from './api.js';
import { on } from './bus.js';
import { byId } from './dom.js';
import { formatTime } from './format.js';
import { formAction, prepareForm } from './forms.js';
import { showOk } from './messages.js';
import { passwordlessUntil } from './session.js';
import { selectTab } from './tabs.js';

let graceTimer = null;

export function initPassword() {
  const form = byId('password-form');
  prepareForm(form, { words: { password: 'New password', current_password: 'Current password' } });
  form.addEventListener('submit', formAction(form, change, { explain: explainRefusal('current_password') }));
  on('session', show);
  on('password-reset', () => {
    selectTab('account');
    const input = byId('password-new');
    input.scrollIntoView({ block: 'center' });
    input.focus();
  });
  show(null);
}

function show(account) {
  clearTimeout(graceTimer);
  const form = byId('password-form');
  form.reset();
  byId('password-username').value = account?.username ?? '';
  const until = account ? passwordlessUntil() : null;
  const note = byId('password-passwordless');
  note.hidden = until === null;
  byId('password-current-field').hidden = until !== null;
  if (until !== null) {
    note.textContent = `You signed in with a code: until ${formatTime(new Date(until).toISOString())} you can choose a new password without the current one.`;
    // Then the current password is asked for again, as the server will.
    graceTimer = setTimeout(() => show(account), until - Date.now());
  }
}

async function change() {
  const body = { password: byId('password-new').value };
  const current = byId('password-current');
  if (!byId('password-current-field').hidden && current.value !== '') body.current_password = current.value;
  await put('/v1/me/password', { auth: true, body });
  byId('password-form').reset();
  showOk('Your password is changed. Every other device you signed in on is signed out; this one stays signed in.');
}

// A 403 is about proving who one is: the current password wrong or missing, or the code sign-in too long ago.
// Its words go to `field` (the password control of the form), or to the form when that control is hidden.
export function explainRefusal(field) {
  return (error, problem) => {
    if (error.status !== 403) return null;
    return { field, text: problem.detail ?? 'Give your current password.' };
  };
}
