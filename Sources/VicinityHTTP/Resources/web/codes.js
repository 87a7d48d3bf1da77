// What the account forms share about mailed codes: reading a typed code, and the refusals of anything that
// mails one, in the page's words.
import { localProblem } from './api.js';

const CODE = /^\d{6}$/;
// The server's rules for codes (CodeRules.standard), as its mail states them.
const CODE_MINUTES = 15;
const CODE_TRIES = 5;

// The six digits typed into `input`, spaces dropped; a local problem naming the field `code` otherwise.
export function typedCode(input) {
  const code = input.value.replace(/\s+/g, '');
  if (!CODE.test(code)) {
    throw localProblem('The code is not complete.', [{ field: 'code', message: 'is the 6 digits in the mail' }]);
  }
  return code;
}

// The page's words for a code refused, with what to do `then` ("ask for a new code").
export function codeRefused(then) {
  return `This code is wrong, or it no longer works (a code works for ${CODE_MINUTES} minutes and ${CODE_TRIES} tries, `
    + `and only the newest one does). Check the mail, or ${then}.`;
}

// The page's words for a refusal to mail a code, for the control `field` (null for the form): no relay on this
// server, or enough codes mailed for now. Null for any other refusal.
export function mailRefusal(error, field) {
  const problem = error?.problem ?? {};
  if (error?.status === 503 && problem.setting === '--smtp-url') {
    return { field, text: 'This server cannot send mail (no mail relay is set up), so it cannot mail codes. Ask its operator.' };
  }
  if (error?.status === 429) {
    return { field, text: `Enough codes have been mailed for now; try again ${inAWhile(problem.retryAfterSeconds)}.` };
  }
  return null;
}

// "in 40 s", "in about 12 minutes", "later".
export function inAWhile(seconds) {
  if (!Number.isFinite(seconds)) return 'later';
  if (seconds < 90) return `in ${Math.max(1, Math.round(seconds))} s`;
  return `in about ${Math.round(seconds / 60)} minutes`;
}
