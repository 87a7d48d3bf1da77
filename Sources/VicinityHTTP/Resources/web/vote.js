// One vote: its public facts and state, casting one's secret ballot with the six-digit password, and the
// result once it is finished (when opened finished, or when an event about it arrives). Each vote shown is
// announced as "vote-shown", for the initiator's controls (voteadmin.js). A refused ballot is explained in
// the ballot form, a wrong password's tries left beside the password, where a phone's screen shows it.
import { get, localProblem, post } from './api.js';
import { emit, on } from './bus.js';
import { byId, clear, el } from './dom.js';
import { formatDateTime } from './format.js';
import { clearFormErrors, formAction, prepareForm } from './forms.js';
import { showError, showOk } from './messages.js';
import { isSignedIn } from './session.js';

const VOTE_ID = /^[2-9A-HJKMNP-TV-Z]{6}$/;
const VOTE_PASSWORD = /^[0-9]{6}$/;
const FINISH_REASONS = { all_voted: 'everyone has voted', time_up: 'its time was up', closed: 'the initiator closed it' };
const STATE_NAMES = { open: 'open', settling: 'settling', finished: 'finished', cancelled: 'called off' };
// A vote also moves on by the clock (closes_at, settling_until); the server's announcer looks once a second,
// so the vote is read again this long after such a time.
const CLOCK_SLACK_MS = 1500;
// The longest wait setTimeout keeps (about 24.8 days).
const MAX_TIMER_MS = 2 ** 31 - 1;

let shown = null; // the vote in #vote-detail
const ownBallots = new Map(); // vote id → own ballot ({ option, counted }), for this session
let clockTimer = null;
let clockTarget = null; // "id@time" of the last timer set, so that a clock that runs ahead never loops

export function initVote() {
  const findForm = byId('vote-find-form');
  prepareForm(findForm);
  findForm.addEventListener('submit', formAction(findForm, () => loadVote(byId('vote-find-id').value)));
  const ballotForm = byId('ballot-form');
  prepareForm(ballotForm, { words: { password: 'Vote password', option: 'An option' } });
  ballotForm.addEventListener('submit', formAction(ballotForm, cast, { explain: explainBallot }));
  // vote_progress comes to the initiator at each ballot: the count and the controls that depend on it move.
  for (const type of ['vote_finished', 'vote_conflict', 'vote_cancelled', 'vote_progress']) {
    on(`stream:${type}`, (event) => {
      if (shown?.id === event.vote_id) refreshVote(event.vote_id).catch(showError);
    });
  }
  // Those who look at a vote are not known to the server, so an initiator's edit reaches them when they come
  // back to the Votes panel.
  on('tab', (name) => {
    if (name === 'votes' && shown) refreshVote(shown.id).catch(showError);
  });
  on('session', () => {
    ownBallots.clear();
    byId('vote-result').hidden = true;
    if (shown) render(shown);
  });
}

export function shownVote() {
  return shown;
}

// Shows the vote; a listing from the nearby list stands in for guests, who may not read a vote by id.
export async function openVote(rawId, listing = null) {
  try {
    await loadVote(rawId, listing);
  } catch (error) {
    showError(error);
  }
}

async function loadVote(rawId, listing = null) {
  const id = rawId.trim().toUpperCase();
  if (!VOTE_ID.test(id)) {
    throw localProblem('A vote id is 6 characters of 2-9 and A-Z without I, L, O and U, such as 7KQ2MX.', [
      { field: 'id', message: 'is 6 characters of 2-9 and A-Z without I, L, O and U, such as 7KQ2MX' },
    ]);
  }
  let vote = listing;
  if (isSignedIn()) {
    vote = await get(`/v1/votes/${id}`, { auth: true });
    // One's own ballot comes with the vote, from another device or an earlier visit too.
    keepOwnBallot(vote.id, vote.your_ballot);
  }
  if (!vote) throw localProblem('Sign in (Account) to open a vote by its id.');
  if (shown?.id !== vote.id) byId('vote-result').hidden = true;
  render(vote);
  byId('vote-detail').scrollIntoView({ block: 'nearest' });
  if (vote.state === 'finished' && isSignedIn()) await showResult(vote.id);
}

// Shows the vote as an answer gave it (the initiator's controls answer with the vote), with its result
// when it is finished.
export async function showVote(vote) {
  if (shown?.id !== vote.id) byId('vote-result').hidden = true;
  render(vote);
  if (vote.state === 'finished' && isSignedIn()) await showResult(vote.id);
}

// Reads the shown vote again, in place: after an event about it, or when its time has come.
export async function refreshVote(id) {
  if (!isSignedIn() || shown?.id !== id) return;
  const vote = await get(`/v1/votes/${id}`, { auth: true });
  if (shown?.id !== id) return; // another vote was opened meanwhile
  keepOwnBallot(id, vote.your_ballot);
  await showVote(vote);
}

function keepOwnBallot(id, ballot) {
  if (ballot) ownBallots.set(id, { option: ballot.option, counted: ballot.counted !== false });
}

function render(vote) {
  // What was said of a ballot for another vote is not this one's.
  if (shown?.id !== vote.id) clearFormErrors(byId('ballot-form'));
  shown = vote;
  const detail = byId('vote-detail');
  detail.dataset.voteId = vote.id;
  detail.dataset.state = vote.state;
  detail.querySelector('.vote-subject').textContent = vote.subject;
  detail.querySelector('.vote-state').textContent = STATE_NAMES[vote.state] ?? vote.state;
  detail.querySelector('.vote-state').className = `vote-state state-${vote.state}`;
  detail.querySelector('.vote-progress').textContent = progress(vote);
  detail.querySelector('.vote-where').textContent =
    `Vote ${vote.id}, ${vote.label}, opened by ${vote.initiator_name}.${closes(vote)}${vote.anonymous ? ' Anonymous.' : ''}`;
  detail.querySelector('.vote-status').textContent = status(vote);

  const options = detail.querySelector('.vote-options');
  clear(options);
  vote.options.forEach((option, index) => {
    const id = `vote-option-${index}`;
    options.append(el('div', { class: 'check' },
      el('input', { id, attrs: { type: 'radio', name: 'vote-option', value: index } }),
      el('label', { text: option, attrs: { for: id } })));
  });

  const ballot = ownBallots.get(vote.id);
  detail.querySelector('.vote-ballot').textContent = ballot === undefined ? '' : ownBallotText(vote, ballot);
  byId('ballot-form').hidden = !(isSignedIn() && vote.state === 'open' && ballot === undefined);
  byId('ballot-password').value = '';
  if (vote.state !== 'finished') byId('vote-result').hidden = true;
  detail.hidden = false;
  watchClock(vote);
  emit('vote-shown', vote);
}

function closes(vote) {
  if (vote.state !== 'open' || !vote.closes_at) return '';
  const extended = vote.extended_by ? ` (extended by ${vote.extended_by.replace(/m$/, ' min')})` : '';
  return ` Closes at ${formatDateTime(vote.closes_at)}${extended}.`;
}

function progress(vote) {
  const counted = `${vote.ballots_cast} of ${vote.participants} voted`;
  const reason = FINISH_REASONS[vote.finish_reason] ?? 'it was closed';
  switch (vote.state) {
    case 'settling': return `${counted}; voting ended because ${reason}.`;
    case 'finished': return `${counted}; finished because ${reason}.`;
    case 'cancelled': return `${counted}; called off.`;
    default: return counted;
  }
}

// What every viewer is told of a vote that is neither open nor plainly finished.
function status(vote) {
  if (vote.state === 'settling') {
    return 'The initiator is checking ballots cast under the same name; the result comes by '
      + `${formatDateTime(vote.settling_until)} at the latest.`;
  }
  if (vote.state === 'cancelled') {
    const at = vote.cancelled_at ? ` on ${formatDateTime(vote.cancelled_at)}` : '';
    return `Called off by the initiator${at}: it takes no more ballots and has no result.`;
  }
  return '';
}

function ownBallotText(vote, ballot) {
  const voted = `You voted for ${vote.options[ballot.option]}.`;
  return ballot.counted ? voted : `${voted} The initiator voided this ballot: another was cast under the same name.`;
}

// Reads the vote again when its clock moves it on: a timed vote at closes_at, a settling one at
// settling_until. Once per such time, so that a browser clock ahead of the server's cannot loop.
function watchClock(vote) {
  clearTimeout(clockTimer);
  clockTimer = null;
  const time = vote.state === 'open' ? vote.closes_at : vote.state === 'settling' ? vote.settling_until : null;
  if (!time || !isSignedIn()) return;
  const target = `${vote.id}@${time}`;
  if (target === clockTarget) return;
  const wait = Math.max(new Date(time).getTime() - Date.now(), 0) + CLOCK_SLACK_MS;
  if (!Number.isFinite(wait) || wait > MAX_TIMER_MS) return;
  clockTimer = setTimeout(() => {
    clockTarget = target;
    refreshVote(vote.id).catch(showError);
  }, wait);
}

async function cast(event) {
  event.preventDefault();
  if (!shown) return;
  const chosen = byId('ballot-form').querySelector('input[name="vote-option"]:checked');
  const password = byId('ballot-password').value.trim();
  const errors = [];
  if (!chosen) errors.push({ field: 'option', message: 'must be chosen' });
  if (!VOTE_PASSWORD.test(password)) errors.push({ field: 'password', message: 'must be the 6 digits said in the room' });
  if (errors.length > 0) throw localProblem('The ballot is not complete.', errors);

  const option = Number(chosen.value);
  const receipt = await post(`/v1/votes/${shown.id}/ballots`, { auth: true, body: { password, option } });
  keepOwnBallot(receipt.vote.id, receipt.ballot);
  render(receipt.vote);
  showOk(`Your ballot is cast: you voted for ${receipt.vote.options[receipt.ballot.option]}.`);
  if (receipt.vote.state === 'finished') await showResult(receipt.vote.id);
}

// A refusal that counts this person's tries at the vote (a wrong password, or the lock with its wait) goes
// beside the password, in the server's words, which name the tries left or the wait once.
function explainBallot(error, problem) {
  if (!Number.isInteger(problem.tries_left)) return null;
  return { field: 'password', text: problem.detail ?? 'The password of this vote is wrong.' };
}

async function showResult(id) {
  const result = await get(`/v1/votes/${id}/result`, { auth: true });
  if (shown?.id !== id) return; // another vote was opened meanwhile
  keepOwnBallot(id, result.your_ballot);
  render(result.vote);

  const box = byId('vote-result');
  const winners = new Set(result.winners);
  const tally = box.querySelector('.tally');
  clear(tally);
  for (const entry of result.tally) {
    tally.append(el('li', { class: winners.has(entry.index) ? 'winner' : '' },
      el('span', { class: 'option-name', text: entry.option }),
      el('span', { class: 'option-count', text: String(entry.ballots) }),
      winners.has(entry.index) ? el('span', { class: 'winner-mark', text: 'most votes' }) : null));
  }
  const voided = result.ballots_voided ?? result.ballots_cast - result.ballots_counted;
  const voidedText = voided > 0 ? `; ${voided} ${voided === 1 ? 'ballot' : 'ballots'} voided` : '';
  box.querySelector('.result-summary').textContent =
    `${result.ballots_counted} of ${result.participants} ballots counted${voidedText}.`;
  box.querySelector('.result-settlement').textContent = settlementText(result.settlement);
  box.dataset.voteId = id;
  box.dataset.ballotsVoided = String(voided);
  box.hidden = false;
}

// How a vote with ballots under the same name got its result: published by its initiator, or by the clock.
function settlementText(settlement) {
  if (!settlement) return '';
  const at = formatDateTime(settlement.at);
  if (settlement.by === 'initiator') {
    return `Ballots cast under the same name were checked by the initiator, who published this result on ${at}.`;
  }
  return `Ballots cast under the same name were not settled in time; this result was published as they stood on ${at}.`;
}
