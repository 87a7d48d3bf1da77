// Signing up (with an e-mail address, confirmed by the code step of email.js), signing in by username or
// e-mail with a password, signing out, who is signed in, and privacy mode; shows each panel's signed-in or
// signed-out parts.
import { del, get, patch, post } from './api.js';
import { on } from './bus.js';
import { mailRefusal } from './codes.js';
import { byId } from './dom.js';
import { nameWithUsername } from './format.js';
import { formAction, prepareForm } from './forms.js';
import { reporting, showError, showOk } from './messages.js';
import { stopForSignOut } from './push.js';
import { beginSession, bearer, codeSignInAt, currentAccount, endSession, updateAccount } from './session.js';

const SIGN_UP_WORDS = {
  username: 'Username',
  email: 'E-mail',
  password: 'Password',
  first_name: 'First name',
  last_name: 'Last name',
};

export function initAccount() {
  const signUpForm = byId('signup-form');
  prepareForm(signUpForm, { words: SIGN_UP_WORDS });
  signUpForm.addEventListener('submit', formAction(signUpForm, signUp, { explain: explainSignUp }));
  const signInForm = byId('signin-form');
  prepareForm(signInForm, {
    words: { username: 'Username', email: 'E-mail', login: 'Username or e-mail', password: 'Password' },
    controls: { username: 'signin-login', email: 'signin-login' },
  });
  signInForm.addEventListener('submit', formAction(signInForm, signIn, { explain: explainSignIn }));
  byId('signout').addEventListener('click', reporting(signOut));
  byId('privacy-mode').addEventListener('change', setPrivacy);
  byId('default-share').addEventListener('change', setDefaultShare);
  on('session', showSession);
  on('account', showSession);
  showSession(null);
}

// A token kept from earlier in this tab signs the page in again, if it still works.
export async function restoreSession() {
  const token = bearer();
  if (!token) return;
  try {
    const account = await get('/v1/me', { auth: true });
    beginSession(token, account, { codeSignInAt: codeSignInAt() });
  } catch (error) {
    endSession();
    if (error.status !== 401) showError(error);
  }
}

async function signUp() {
  const username = byId('signup-username').value.trim();
  const password = byId('signup-password').value;
  const email = byId('signup-email').value.trim();
  const body = {
    username,
    password,
    first_name: byId('signup-first-name').value,
    last_name: byId('signup-last-name').value,
  };
  // Left out when empty: the server says whether it asks for one.
  if (email !== '') body.email = email;
  const account = await post('/v1/users', { body });
  await openSession({ username, password });
  byId('signup-form').reset();
  if (account.pending_email) {
    showOk(`Welcome, ${account.first_name}: your account is made and you are signed in. One more step: the code we mailed you.`);
    // The code step (email.js) is shown for the address waiting; the keyboard goes straight to it.
    byId('email-code').focus();
  } else {
    showOk(`Welcome, ${currentAccount().first_name}: your account is made and you are signed in.`);
  }
}

function explainSignUp(error) {
  if (error.status === 409) return { field: 'username', text: 'This username is taken; choose another.' };
  return mailRefusal(error, 'email');
}

async function signIn() {
  const login = byId('signin-login').value.trim();
  const password = byId('signin-password').value;
  // An address holds an @, a username never does.
  await openSession(login.includes('@') ? { email: login, password } : { username: login, password });
  byId('signin-form').reset();
  showOk(`Signed in as ${nameWithUsername(currentAccount())}.`);
}

function explainSignIn(error) {
  if (error.status !== 401) return null;
  const byEmail = byId('signin-login').value.includes('@');
  return {
    field: null,
    text: byEmail
      ? 'The e-mail address or password is wrong. An address signs in once it is confirmed with the code mailed to it.'
      : 'The username or password is wrong.',
  };
}

async function openSession(credentials) {
  const session = await post('/v1/sessions', { body: credentials });
  beginSession(session.token, session.user);
}

async function signOut() {
  await stopForSignOut();
  try {
    await del('/v1/sessions/current', { auth: true });
  } finally {
    // Signed out here whatever the server said: a token it no longer knows is as good as gone.
    endSession();
  }
  showOk('Signed out.');
}

async function setPrivacy(event) {
  const box = event.target;
  const wanted = box.checked;
  try {
    const account = await patch('/v1/me', { auth: true, body: { privacy_mode: wanted } });
    updateAccount(account);
    showOk(wanted ? 'Privacy mode is on: no friend sees where you are.' : 'Privacy mode is off: friends you share with see where you are.');
  } catch (error) {
    box.checked = !wanted;
    showError(error);
  }
}

async function setDefaultShare(event) {
  const select = event.target;
  const wanted = select.value;
  try {
    const account = await patch('/v1/me', { auth: true, body: { default_share: wanted } });
    updateAccount(account);
    showOk('New friends will see ' + select.selectedOptions[0].textContent.toLowerCase() + '. Friends you have keep what you chose for each.');
  } catch (error) {
    select.value = previousDefaultShare;
    showError(error);
  }
}

let previousDefaultShare = 'exact';

function showSession(account) {
  const signedIn = account !== null;
  for (const part of document.querySelectorAll('[data-when]')) {
    part.hidden = part.dataset.when !== (signedIn ? 'signed-in' : 'signed-out');
  }
  byId('whoami').textContent = signedIn ? `Signed in as ${nameWithUsername(account)}` : '';
  byId('privacy-mode').checked = signedIn && account.privacy_mode;
  previousDefaultShare = signedIn ? account.default_share : 'exact';
  byId('default-share').value = previousDefaultShare;
}
