// Signing in with a code mailed to one's confirmed address, instead of the password ("Sign in with a code
// instead") or because it is forgotten ("Forgot password?": then a new password is asked for at once, which
// needs no old one for a while after a code sign-in). The server answers a request for a code the same
// whether or not an account has the address, and so does the page.
import { post } from './api.js';
import { emit } from './bus.js';
import { codeRefused, mailRefusal, typedCode } from './codes.js';
import { byId } from './dom.js';
import { nameWithUsername } from './format.js';
import { clearFormErrors, formAction, prepareForm } from './forms.js';
import { clearMessage, showOk } from './messages.js';
import { beginSession, currentAccount } from './session.js';

const INTROS = {
  code: 'We mail a six-digit code to the e-mail address of your account; typed here, it signs you in without your password.',
  reset: 'Sign in with a code mailed to the e-mail address of your account, then choose a new password: the old one is not needed.',
};

let resetting = false; // whether this code sign-in is for a forgotten password
let requestedFor = null; // the address the last code was asked for

export function initCodeSignIn() {
  const request = byId('code-request-form');
  prepareForm(request, { words: { email: 'E-mail address' } });
  request.addEventListener('submit', formAction(request, requestCode, { explain: (error) => mailRefusal(error, 'email') }));
  const signIn = byId('code-signin-form');
  prepareForm(signIn, { words: { code: 'The code' } });
  signIn.addEventListener('submit', formAction(signIn, signInWithCode, { explain: explainCode }));

  byId('signin-by-code').addEventListener('click', () => open(false));
  byId('forgot-password').addEventListener('click', () => open(true));
  byId('code-back').addEventListener('click', close);
  byId('code-section').addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    close();
  });
}

function open(reset) {
  resetting = reset;
  clearMessage();
  byId('code-heading').textContent = reset ? 'Forgot your password?' : 'Sign in with a code';
  byId('code-intro').textContent = reset ? INTROS.reset : INTROS.code;
  byId('signin-section').hidden = true;
  byId('code-section').hidden = false;
  // An address already typed as the login is the likely one.
  const login = byId('signin-login').value.trim();
  const email = byId('code-email');
  if (login.includes('@') && email.value.trim() === '') email.value = login;
  email.focus();
}

function close() {
  for (const form of [byId('code-request-form'), byId('code-signin-form')]) clearFormErrors(form);
  byId('code-signin-form').hidden = true;
  byId('code-section').hidden = true;
  byId('signin-section').hidden = false;
  byId('signin-login').focus();
}

async function requestCode() {
  const email = byId('code-email').value.trim();
  const answer = await post('/v1/sign-in-codes', { body: { email } });
  requestedFor = email;
  const minutes = Math.round((answer?.code_lifetime_s ?? 900) / 60);
  // The same words whether or not the address is anyone's: the server does not say, and neither can the page.
  byId('code-sent').textContent = `If an account has ${email} as its confirmed address, a code is on its way to it. `
    + `It works for ${minutes} minutes; ask again for a new one if none arrives.`;
  const form = byId('code-signin-form');
  clearFormErrors(form);
  form.hidden = false;
  byId('code-request').textContent = 'Mail me a new code';
  byId('code-code').value = '';
  byId('code-code').focus();
}

async function signInWithCode() {
  const code = typedCode(byId('code-code'));
  const email = requestedFor ?? byId('code-email').value.trim();
  const session = await post('/v1/sessions', { body: { email, code } });
  beginSession(session.token, session.user, { codeSignInAt: Date.now() });
  const reset = resetting;
  finish();
  if (reset) {
    showOk(`Signed in with a code as ${nameWithUsername(currentAccount())}. Now choose a new password below: the old one is not needed.`);
    // password.js shows the form without the current password and takes the keyboard there.
    emit('password-reset');
  } else {
    showOk(`Signed in with a code as ${nameWithUsername(currentAccount())}.`);
  }
}

// Back to the password form for the next time the page is signed out.
function finish() {
  resetting = false;
  requestedFor = null;
  for (const id of ['code-request-form', 'code-signin-form']) {
    byId(id).reset();
    clearFormErrors(byId(id));
  }
  byId('code-signin-form').hidden = true;
  byId('code-request').textContent = 'Mail me a code';
  byId('code-section').hidden = true;
  byId('signin-section').hidden = false;
}

function explainCode(error) {
  if (error.status === 401) {
    return { field: 'code', text: codeRefused('ask for a new code above') };
  }
  return null;
}

