// Who is signed in: the bearer token, kept in sessionStorage (never in a URL) so that it dies with the tab,
// and the account it belongs to.
import { emit } from './bus.js';

const TOKEN_KEY = 'vicinity.token';
let account = null;
// Used when the browser refuses storage: the session then lasts until the page is left.
let memoryToken = null;

export function bearer() {
  try {
    return sessionStorage.getItem(TOKEN_KEY) ?? memoryToken;
  } catch {
    return memoryToken;
  }
}

export function currentAccount() {
  return account;
}

export function isSignedIn() {
  return account !== null;
}

export function beginSession(token, user) {
  memoryToken = token;
  try {
    sessionStorage.setItem(TOKEN_KEY, token);
  } catch {
    // kept in memory only
  }
  account = user;
  emit('session', account);
}

export function updateAccount(user) {
  account = user;
  emit('account', account);
}

export function endSession() {
  const wasSignedIn = account !== null || bearer() !== null;
  memoryToken = null;
  try {
    sessionStorage.removeItem(TOKEN_KEY);
  } catch {
    // nothing was stored
  }
  account = null;
  if (wasSignedIn) emit('session', null);
}
