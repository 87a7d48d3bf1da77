// Calls the Vicinity API and turns every failure into an ApiError holding a problem+json body, so that
// each panel reports errors the same way. Whether the server could be reached is announced on the page's bus
// ("server-reachable", "server-unreachable") for connection.js, and marked on the error (`unreachable`).
import { emit } from './bus.js';
import { bearer, endSession } from './session.js';

// What a proxy in front of the server answers while the server is down or restarting: not the server's words.
const GATEWAY_STATUSES = new Set([502, 503, 504]);

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem.detail ?? `HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.problem = problem;
  }
}

// A problem made on this side, shaped as the server's are.
export function localProblem(detail, errors = undefined) {
  return new ApiError(0, { detail, errors });
}

// `raw` answers with the Response itself (for a file to download) rather than its JSON.
export async function request(method, path, { query, body, auth = false, signal, raw = false } = {}) {
  const headers = { Accept: 'application/json' };
  if (auth) {
    const token = bearer();
    if (!token) throw localProblem('Sign in first (Account).');
    headers.Authorization = `Bearer ${token}`;
  }
  const options = { method, headers, signal, cache: 'no-store' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    options.body = JSON.stringify(body);
  }

  let response;
  try {
    response = await fetch(withQuery(path, query), options);
  } catch (error) {
    if (error.name === 'AbortError') throw error;
    throw unreachable();
  }
  if (!fromServer(response)) throw unreachable();
  emit('server-reachable');

  if (response.ok) {
    if (raw) return response;
    if (response.status === 204) return null;
    return response.json();
  }
  const problem = await readProblem(response);
  if (response.status === 401 && auth) {
    // The token no longer works (expired or signed out elsewhere): the page stops acting signed in.
    endSession();
    problem.detail = `Your session has ended; sign in again. (${problem.detail})`;
  }
  throw new ApiError(response.status, problem);
}

export const get = (path, options) => request('GET', path, options);
export const post = (path, options) => request('POST', path, options);
export const put = (path, options) => request('PUT', path, options);
export const patch = (path, options) => request('PATCH', path, options);
export const del = (path, options) => request('DELETE', path, options);

function unreachable() {
  emit('server-unreachable');
  const error = localProblem('The server could not be reached. Check the connection and try again.');
  error.unreachable = true;
  return error;
}

// Whether the server itself answered: its own refusals are problem+json (a busy server's 503 among them), a
// proxy's word that it is away is not.
export function fromServer(response) {
  return !GATEWAY_STATUSES.has(response.status) || (response.headers.get('Content-Type') ?? '').includes('json');
}

function withQuery(path, query) {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null) params.append(name, String(value));
  }
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

async function readProblem(response) {
  let problem = null;
  const type = response.headers.get('Content-Type') ?? '';
  if (type.includes('json')) {
    try {
      problem = await response.json();
    } catch {
      problem = null;
    }
  }
  if (!problem || typeof problem !== 'object') {
    problem = { status: response.status, detail: `The server answered ${response.status} ${response.statusText}.` };
  }
  const retryAfter = response.headers.get('Retry-After');
  if (retryAfter && /^\d+$/.test(retryAfter)) problem.retryAfterSeconds = Number(retryAfter);
  return problem;
}
