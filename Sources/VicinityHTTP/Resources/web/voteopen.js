// Opening a vote at the current point: subject, options, how many are to vote, the six-digit password to
// say in the room, how long it stays open, and whether it is listed nearby.
import { localProblem, post } from './api.js';
import { emit } from './bus.js';
import { byId, clear, el } from './dom.js';
import { formAction, prepareForm } from './forms.js';
import { showOk } from './messages.js';
import { currentPoint } from './point.js';
import { openVote } from './vote.js';

export function initVoteOpen() {
  const form = byId('vote-open-form');
  prepareForm(form);
  form.addEventListener('submit', formAction(form, openHere));
}

async function openHere() {
  const point = currentPoint();
  if (!point) throw localProblem('Choose a point first (Places): the vote is held there.');
  const participants = byId('vote-participants').value.trim();
  const body = {
    subject: byId('vote-subject').value,
    options: byId('vote-options').value.split('\n').map((line) => line.trim()).filter((line) => line !== ''),
    // Anything but a whole number goes as typed, so that the server's message names the field.
    participants: /^\d+$/.test(participants) ? Number(participants) : participants,
    password: byId('vote-password').value.trim(),
    duration: byId('vote-duration').value,
    visibility: byId('vote-visibility').value,
    anonymous: byId('vote-anonymous').checked,
    lat: point.lat,
    lon: point.lon,
  };
  const vote = await post('/v1/votes', { auth: true, body });

  const created = byId('vote-created');
  clear(created);
  created.append('Vote ', el('span', { class: 'vote-id', text: vote.id }), ' is open. Say its id and password aloud in the room.');
  created.hidden = false;
  byId('vote-open-form').reset();
  showOk(`Vote ${vote.id} is open, ${vote.label}.`);
  emit('vote-opened', vote);
  await openVote(vote.id, vote);
}
