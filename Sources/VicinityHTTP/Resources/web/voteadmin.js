// The initiator's controls on the vote shown (#vote-admin): close it now, call it off (after a second,
// confirming press), extend a timed vote once, change its subject and options before the first ballot, and,
// while it settles ballots cast under the same name, void or restore them and publish the result.
// Whether the signed-in person opened the vote is what the vote read by its id says (`you_initiated`),
// remembered for the answers to the controls, which do not say it, and for votes opened on this page.
import { get, patch, post } from './api.js';
import { emit, on } from './bus.js';
import { byId, clear, el, emptyItem } from './dom.js';
import { formatAge, formatDateTime, formatTime } from './format.js';
import { formAction, prepareForm } from './forms.js';
import { reporting, showError, showOk } from './messages.js';
import { isSignedIn } from './session.js';
import { refreshVote, showVote, shownVote } from './vote.js';

const mine = new Set(); // ids of votes the signed-in person opened
let conflictsRead = null;

export function initVoteAdmin() {
  on('session', () => {
    mine.clear();
    hide();
    // The vote shown stays; whether the new person opened it is asked afresh.
    const vote = shownVote();
    if (vote) update(vote);
  });
  on('vote-opened', (vote) => mine.add(vote.id));
  on('vote-shown', update);

  byId('vote-close').addEventListener('click', reporting(() => act('close', (id) => post(`/v1/votes/${id}/close`, { auth: true }),
    (vote) => `Vote ${vote.id} is closed: ${vote.ballots_cast} of ${vote.participants} voted.`)));
  byId('vote-cancel').addEventListener('click', () => askToCancel(true));
  byId('vote-cancel-no').addEventListener('click', () => askToCancel(false, { focus: true }));
  byId('vote-cancel-confirm').addEventListener('keydown', (event) => {
    if (event.key !== 'Escape') return;
    event.preventDefault();
    askToCancel(false, { focus: true });
  });
  byId('vote-cancel-yes').addEventListener('click', reporting(() => act('cancel', (id) => post(`/v1/votes/${id}/cancel`, { auth: true }),
    (vote) => `Vote ${vote.id} is called off.`)));
  const extendForm = byId('vote-extend-form');
  prepareForm(extendForm);
  extendForm.addEventListener('submit', formAction(extendForm, () => {
    const duration = byId('vote-extend-duration').value;
    return act('extend', (id) => post(`/v1/votes/${id}/extend`, { auth: true, body: { duration } }),
      (vote) => `Vote ${vote.id} now closes at ${formatDateTime(vote.closes_at)}.`);
  }));
  const editForm = byId('vote-edit-form');
  prepareForm(editForm);
  editForm.addEventListener('submit', formAction(editForm, () => {
    const body = {
      subject: byId('vote-edit-subject').value,
      options: byId('vote-edit-options').value.split('\n').map((line) => line.trim()).filter((line) => line !== ''),
    };
    return act('edit', (id) => patch(`/v1/votes/${id}`, { auth: true, body }), (vote) => {
      fillEditForm(vote);
      return `Vote ${vote.id} now asks “${vote.subject}”.`;
    });
  }));
  byId('vote-publish').addEventListener('click', reporting(() => act('publish', (id) => post(`/v1/votes/${id}/publish`, { auth: true }),
    (vote) => `The result of vote ${vote.id} is published.`)));
}

function update(vote) {
  controls(vote).catch(showError);
}

async function controls(vote) {
  const admin = byId('vote-admin');
  const live = vote.state === 'open' || vote.state === 'settling';
  if (admin.dataset.voteId !== vote.id || !live || !isSignedIn()) hide();
  if (!live || !isSignedIn()) return;
  if (vote.you_initiated === true) mine.add(vote.id);
  const initiator = typeof vote.you_initiated === 'boolean' ? vote.you_initiated : mine.has(vote.id);
  if (!initiator) {
    hide();
    return;
  }

  const open = vote.state === 'open';
  const settling = vote.state === 'settling';
  admin.dataset.voteId = vote.id;
  byId('vote-close').hidden = !open;
  byId('vote-extend-form').hidden = !(open && vote.duration !== 'permanent' && !vote.extended_by);
  byId('vote-edit').hidden = !(open && vote.ballots_cast === 0);
  if (byId('vote-edit-form').dataset.voteId !== vote.id) {
    fillEditForm(vote);
    byId('vote-edit').open = false;
  }
  byId('vote-settling').hidden = !settling;
  admin.hidden = false;
  if (settling) {
    byId('vote-settling').querySelector('.settling-until').textContent =
      `Settling until ${formatDateTime(vote.settling_until)}. Void any ballot not cast by the person of that name, `
      + 'then publish the result; at that time it is published as the ballots then stand.';
    await readConflicts(vote.id);
  }
}

function hide() {
  const admin = byId('vote-admin');
  admin.hidden = true;
  delete admin.dataset.voteId;
  askToCancel(false);
  conflictsRead?.abort();
  clear(byId('vote-conflicts'));
}

function fillEditForm(vote) {
  const form = byId('vote-edit-form');
  form.dataset.voteId = vote.id;
  byId('vote-edit-subject').value = vote.subject;
  byId('vote-edit-options').value = vote.options.join('\n');
}

// The cancel button's second step: a question and two buttons in place, never a browser dialog.
function askToCancel(asking, { focus = asking } = {}) {
  byId('vote-cancel-confirm').hidden = !asking;
  byId('vote-cancel').setAttribute('aria-expanded', String(asking));
  if (focus) byId(asking ? 'vote-cancel-yes' : 'vote-cancel').focus();
}

// Sends one of the initiator's changes to the shown vote and shows the vote as answered. A refusal (409 or
// 400) is reported by `reporting` with the server's detail, after the vote is read again: a refusal most
// often means it has changed meanwhile (a first ballot, its time up).
async function act(name, send, said) {
  const vote = shownVote();
  if (!vote) return;
  const buttons = [...byId('vote-admin').querySelectorAll('button')];
  for (const button of buttons) button.disabled = true;
  try {
    let changed;
    try {
      changed = await send(vote.id);
    } catch (error) {
      await refreshVote(vote.id).catch(() => {});
      throw error;
    }
    askToCancel(false);
    showOk(said(changed));
    emit('vote-changed', changed);
    await showVote(changed);
  } finally {
    for (const button of buttons) button.disabled = false;
  }
}

async function readConflicts(id) {
  conflictsRead?.abort();
  const reading = new AbortController();
  conflictsRead = reading;
  const answer = await get(`/v1/votes/${id}/conflicts`, { auth: true, signal: reading.signal });
  if (reading.signal.aborted || byId('vote-admin').dataset.voteId !== id) return;
  const list = byId('vote-conflicts');
  clear(list);
  if (answer.conflicts.length === 0) list.append(emptyItem('No ballots share a name any more.'));
  for (const conflict of answer.conflicts) list.append(conflictItem(id, conflict));
}

function conflictItem(id, conflict) {
  const counted = conflict.ballots.filter((ballot) => ballot.counted).length;
  return el('li', { class: 'conflict' },
    el('p', { class: 'conflict-name', text: `${conflict.name}: ${conflict.ballots.length} ballots, ${counted} counted` }),
    el('ul', { class: 'conflict-ballots' }, conflict.ballots.map((ballot) => ballotItem(id, ballot))));
}

function ballotItem(id, ballot) {
  const who = `@${ballot.voter.username}`;
  const action = ballot.counted ? 'Void' : 'Restore';
  const button = el('button', {
    class: `ballot-toggle ${ballot.counted ? 'danger' : 'secondary'}`,
    text: action,
    attrs: { type: 'button', 'aria-label': `${action} the ballot of ${who}` },
  });
  button.addEventListener('click', reporting(async () => {
    button.disabled = true;
    try {
      await patch(`/v1/votes/${id}/ballots/${ballot.id}`, { auth: true, body: { counted: !ballot.counted } });
      showOk(`The ballot of ${who} is ${ballot.counted ? 'voided' : 'counted again'}.`);
    } finally {
      await readConflicts(id).catch(() => {});
      button.disabled = false;
    }
  }));
  return el('li', { class: `ballot ${ballot.counted ? 'counted' : 'voided'}`, data: { ballotId: ballot.id, username: ballot.voter.username } },
    el('span', { class: 'ballot-voter', text: who }),
    el('span', { class: 'ballot-state', text: ballot.counted ? 'counted' : 'voided' }),
    el('span', {
      class: 'ballot-facts',
      text: `account ${formatAge(ballot.voter_since)} old (made ${formatDateTime(ballot.voter_since)}), voted at ${formatTime(ballot.cast_at)}`,
    }),
    button);
}
