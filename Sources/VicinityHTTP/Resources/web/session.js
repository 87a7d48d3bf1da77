// Who is signed in: the bearer token, kept in sessionStorage (never in a URL) so that it dies with the tab,
// the account it belongs to, and when the session was opened with a mailed code, if it was.
import { emit } from './bus.js';

const TOKEN_KEY = 'vicinity.token';
const CODE_SIGN_IN_KEY = 'vicinity.codeSignInAt';
// The server's rule (CodeRules.recentCodeSignIn): this long after signing in with a code, a new password
// or deleting the account needs no password. The server decides; the page only says so.
const CODE_SIGN_IN_GRACE_MS = 10 * 60 * 1000;

let account = null;
// Used when the browser refuses storage: the session then lasts until the page is left.
const memory = new Map();

function recall(key) {
  try {
    return sessionStorage.getItem(key) ?? memory.get(key) ?? null;
  } catch {
    return memory.get(key) ?? null;
  }
}

function remember(key, value) {
  if (value === null) memory.delete(key);
  else memory.set(key, value);
  try {
    if (value === null) sessionStorage.removeItem(key);
    else sessionStorage.setItem(key, value);
  } catch {
    // kept in memory only
  }
}

export function bearer() {
  return recall(TOKEN_KEY);
}

export function currentAccount() {
  return account;
}

export function isSignedIn() {
  return account !== null;
}

// `codeSignInAt` (ms since the epoch) when a mailed code opened the session; a session restored in this tab
// keeps the time it was opened with.
export function beginSession(token, user, { codeSignInAt = null } = {}) {
  remember(TOKEN_KEY, token);
  remember(CODE_SIGN_IN_KEY, codeSignInAt === null ? null : String(codeSignInAt));
  account = user;
  emit('session', account);
}

// When the session was opened with a mailed code (ms since the epoch), or null.
export function codeSignInAt() {
  const stored = Number(recall(CODE_SIGN_IN_KEY));
  return Number.isFinite(stored) && stored > 0 ? stored : null;
}

// Until when (ms since the epoch) this session may set a password or delete the account without the
// current password; null when it may not.
export function passwordlessUntil(now = Date.now()) {
  const since = codeSignInAt();
  if (since === null) return null;
  const until = since + CODE_SIGN_IN_GRACE_MS;
  return until > now ? until : null;
}

export function updateAccount(user) {
  account = user;
  emit('account', account);
}

export function endSession() {
  const wasSignedIn = account !== null || bearer() !== null;
  remember(TOKEN_KEY, null);
  remember(CODE_SIGN_IN_KEY, null);
  account = null;
  if (wasSignedIn) emit('session', null);
}
