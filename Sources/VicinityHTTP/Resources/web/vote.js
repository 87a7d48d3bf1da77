// One vote: its public facts, casting one's secret ballot with the six-digit password, and the result
// once it is finished (when opened finished, or when a vote_finished event names it).
import { get, localProblem, post } from './api.js';
import { on } from './bus.js';
import { byId, clear, el } from './dom.js';
import { formatDateTime } from './format.js';
import { reporting, showError, showOk } from './messages.js';
import { isSignedIn } from './session.js';

const VOTE_ID = /^[2-9A-HJKMNP-TV-Z]{6}$/;
const VOTE_PASSWORD = /^[0-9]{6}$/;
const FINISH_REASONS = { all_voted: 'everyone has voted', time_up: 'its time is up' };

let shown = null; // the vote in #vote-detail
const ownBallots = new Map(); // vote id → option index, for this session

export function initVote() {
  byId('vote-find-form').addEventListener('submit', reporting(async (event) => {
    event.preventDefault();
    await openVote(byId('vote-find-id').value);
  }));
  byId('ballot-form').addEventListener('submit', reporting(cast));
  on('stream:vote_finished', (event) => {
    if (shown && shown.id === event.vote_id) openVote(event.vote_id);
  });
  on('session', () => {
    ownBallots.clear();
    byId('vote-result').hidden = true;
    if (shown) render(shown);
  });
}

// Shows the vote; a listing from the nearby list stands in for guests, who may not read a vote by id.
export async function openVote(rawId, listing = null) {
  try {
    const id = rawId.trim().toUpperCase();
    if (!VOTE_ID.test(id)) {
      throw localProblem('A vote id is 6 characters of 2-9 and A-Z without I, L, O and U, such as 7KQ2MX.', [
        { field: 'id', message: 'is not a vote id' },
      ]);
    }
    let vote = listing;
    if (isSignedIn()) {
      vote = await get(`/v1/votes/${id}`, { auth: true });
      // One's own ballot comes with the vote, from another device or an earlier visit too.
      if (vote.your_ballot) ownBallots.set(vote.id, vote.your_ballot.option);
    }
    if (!vote) throw localProblem('Sign in (Account) to open a vote by its id.');
    if (shown?.id !== vote.id) byId('vote-result').hidden = true;
    render(vote);
    byId('vote-detail').scrollIntoView({ block: 'nearest' });
    if (vote.state === 'finished' && isSignedIn()) await showResult(vote.id);
  } catch (error) {
    showError(error);
  }
}

function render(vote) {
  shown = vote;
  const detail = byId('vote-detail');
  detail.dataset.voteId = vote.id;
  detail.querySelector('.vote-subject').textContent = vote.subject;
  detail.querySelector('.vote-state').textContent = vote.state;
  detail.querySelector('.vote-state').className = `vote-state state-${vote.state}`;
  detail.querySelector('.vote-progress').textContent = progress(vote);
  const closes = vote.state === 'open' && vote.closes_at ? ` Closes at ${formatDateTime(vote.closes_at)}.` : '';
  detail.querySelector('.vote-where').textContent =
    `Vote ${vote.id}, ${vote.label}, opened by ${vote.initiator_name}.${closes}${vote.anonymous ? ' Anonymous.' : ''}`;

  const options = detail.querySelector('.vote-options');
  clear(options);
  vote.options.forEach((option, index) => {
    const id = `vote-option-${index}`;
    options.append(el('div', { class: 'check' },
      el('input', { id, attrs: { type: 'radio', name: 'vote-option', value: index } }),
      el('label', { text: option, attrs: { for: id } })));
  });

  const ballot = ownBallots.get(vote.id);
  detail.querySelector('.vote-ballot').textContent = ballot === undefined ? '' : `You voted for ${vote.options[ballot]}.`;
  byId('ballot-form').hidden = !(isSignedIn() && vote.state === 'open' && ballot === undefined);
  byId('ballot-password').value = '';
  detail.hidden = false;
}

function progress(vote) {
  const counted = `${vote.ballots_cast} of ${vote.participants} voted`;
  if (vote.state !== 'finished') return counted;
  return `${counted}; finished because ${FINISH_REASONS[vote.finish_reason] ?? 'it was closed'}.`;
}

async function cast(event) {
  event.preventDefault();
  if (!shown) return;
  const chosen = byId('ballot-form').querySelector('input[name="vote-option"]:checked');
  const password = byId('ballot-password').value.trim();
  const errors = [];
  if (!chosen) errors.push({ field: 'option', message: 'choose one of the options' });
  if (!VOTE_PASSWORD.test(password)) errors.push({ field: 'password', message: 'is the 6 digits said in the room' });
  if (errors.length > 0) throw localProblem('The ballot is not complete.', errors);

  const option = Number(chosen.value);
  const receipt = await post(`/v1/votes/${shown.id}/ballots`, { auth: true, body: { password, option } });
  ownBallots.set(receipt.vote.id, receipt.ballot.option);
  render(receipt.vote);
  showOk(`Your ballot is cast: you voted for ${receipt.vote.options[receipt.ballot.option]}.`);
  if (receipt.vote.state === 'finished') await showResult(receipt.vote.id);
}

async function showResult(id) {
  const result = await get(`/v1/votes/${id}/result`, { auth: true });
  if (shown?.id !== id) return; // another vote was opened meanwhile
  if (result.your_ballot) ownBallots.set(id, result.your_ballot.option);
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
  const voided = result.ballots_cast - result.ballots_counted;
  box.querySelector('.result-summary').textContent =
    `${result.ballots_counted} of ${result.participants} ballots counted${voided > 0 ? ` (${voided} voided)` : ''}.`;
  box.dataset.voteId = id;
  box.hidden = false;
}
