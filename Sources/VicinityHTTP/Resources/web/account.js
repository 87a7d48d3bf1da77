// Signing up, in and out, who is signed in, and privacy mode; shows each panel's signed-in or signed-out
// parts.
import { del, get, patch, post } from './api.js';
import { on } from './bus.js';
import { byId } from './dom.js';
import { nameWithUsername } from './format.js';
import { reporting, showError, showOk } from './messages.js';
import { beginSession, bearer, currentAccount, endSession, updateAccount } from './session.js';

export function initAccount() {
  byId('signup-form').addEventListener('submit', reporting(signUp));
  byId('signin-form').addEventListener('submit', reporting(signIn));
  byId('signout').addEventListener('click', reporting(signOut));
  byId('privacy-mode').addEventListener('change', setPrivacy);
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
    beginSession(token, account);
  } catch (error) {
    endSession();
    if (error.status !== 401) showError(error);
  }
}

async function signUp(event) {
  event.preventDefault();
  const username = byId('signup-username').value.trim();
  const password = byId('signup-password').value;
  await post('/v1/users', {
    body: {
      username,
      password,
      first_name: byId('signup-first-name').value,
      last_name: byId('signup-last-name').value,
    },
  });
  await openSession(username, password);
  byId('signup-form').reset();
  showOk(`Welcome, ${currentAccount().first_name}: your account is made and you are signed in.`);
}

async function signIn(event) {
  event.preventDefault();
  await openSession(byId('signin-username').value.trim(), byId('signin-password').value);
  byId('signin-form').reset();
  showOk(`Signed in as ${nameWithUsername(currentAccount())}.`);
}

async function openSession(username, password) {
  const session = await post('/v1/sessions', { body: { username, password } });
  beginSession(session.token, session.user);
}

async function signOut() {
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

function showSession(account) {
  const signedIn = account !== null;
  for (const part of document.querySelectorAll('[data-when]')) {
    part.hidden = part.dataset.when !== (signedIn ? 'signed-in' : 'signed-out');
  }
  byId('whoami').textContent = signedIn ? `Signed in as ${nameWithUsername(account)}` : '';
  byId('privacy-mode').checked = signedIn && account.privacy_mode;
}
