// One's e-mail address: the confirmed one, the one waiting for its code (after signing up, or after asking
// for a change: the confirmed one stays until then) with the code step to confirm it or get a new code, and
// asking for a change of address.
import { patch, post } from './api.js';
import { on } from './bus.js';
import { codeRefused, mailRefusal, typedCode } from './codes.js';
import { byId, clear, el } from './dom.js';
import { clearFormErrors, formAction, prepareForm } from './forms.js';
import { showOk } from './messages.js';
import { currentAccount, updateAccount } from './session.js';

const CODE_REFUSED = codeRefused('choose “Mail me a new code”');

let shownPending = null; // the address the code step is for, so that a new one empties the code typed

export function initEmail() {
  const confirmForm = byId('email-confirm-form');
  prepareForm(confirmForm, { words: { code: 'The code' } });
  confirmForm.addEventListener('submit', formAction(confirmForm, confirm, { explain: explainConfirm }));
  byId('email-resend').addEventListener('click', formAction(confirmForm, resend, { explain: explainResend }));
  const changeForm = byId('email-change-form');
  prepareForm(changeForm, { words: { email: 'New e-mail address' } });
  changeForm.addEventListener('submit', formAction(changeForm, change, { explain: (error) => mailRefusal(error, 'email') }));
  // Focused after a confirmation, so that the keyboard stays in the section.
  byId('email-current').tabIndex = -1;
  on('session', show);
  on('account', show);
  show(null);
}

function show(account) {
  const current = byId('email-current');
  clear(current);
  const form = byId('email-confirm-form');
  const pending = account?.pending_email ?? null;
  if (pending !== shownPending) {
    form.reset();
    clearFormErrors(form);
    shownPending = pending;
  }
  if (!account) {
    form.hidden = true;
    return;
  }
  if (account.email) {
    current.append(el('span', { class: 'email-address', text: account.email }), ' ', el('span', { class: 'email-state verified', text: 'confirmed' }));
  } else {
    current.append(el('span', { class: 'hint', text: pending ? 'No confirmed address yet.' : 'Your account has no e-mail address.' }));
  }
  form.hidden = pending === null;
  if (pending) {
    const said = byId('email-pending');
    clear(said);
    said.append('We mailed a code to ', el('strong', { class: 'email-address', text: pending }), '. ');
    said.append(account.email
      ? `Type it here to make it your address; until then ${account.email} stays your address.`
      : 'Type it here to confirm that the address is yours.');
  }
  const adding = !account.email && !pending;
  byId('email-new-label').textContent = adding ? 'Add an e-mail address' : 'New e-mail address';
  byId('email-change').textContent = adding ? 'Add e-mail' : 'Change e-mail';
}

async function confirm() {
  const code = typedCode(byId('email-code'));
  const account = await post('/v1/me/email-verification/confirm', { auth: true, body: { code } });
  updateAccount(account);
  showOk(`${account.email} is confirmed: it is your address now.`);
  byId('email-current').focus();
}

function explainConfirm(error) {
  if (error.status === 403) return { field: 'code', text: CODE_REFUSED };
  if (error.status === 409) {
    return { field: 'code', text: 'Another account has confirmed this address already. Give another address below.' };
  }
  return null;
}

async function resend() {
  const pending = currentAccount()?.pending_email;
  await post('/v1/me/email-verification', { auth: true });
  byId('email-code').value = '';
  const said = byId('email-pending');
  clear(said);
  said.append('We mailed a new code to ', el('strong', { class: 'email-address', text: pending }),
    '. Only the newest code works; type it here.');
  byId('email-code').focus();
}

function explainResend(error) {
  if (error.status === 409) return { field: null, text: 'No address of yours waits for a code.' };
  return mailRefusal(error, null);
}

async function change() {
  const email = byId('email-new').value.trim();
  const account = await patch('/v1/me', { auth: true, body: { email } });
  updateAccount(account);
  byId('email-change-form').reset();
  if (account.pending_email) {
    showOk(`We mailed a code to ${account.pending_email}: type it under E-mail to make it your address.`);
    byId('email-code').focus();
  } else {
    showOk(`${account.email} is your address already; nothing waits for a code.`);
  }
}
