// Open public votes within 1000 m of the current point, for guests and everyone: listed in the Places
// and Votes panels and drawn on the map.
import { get } from './api.js';
import { on } from './bus.js';
import { byId, clear, el, emptyItem } from './dom.js';
import { formatDistanceBearing, formatTime } from './format.js';
import { destination } from './geo.js';
import { layerGroup, makeMarker } from './map.js';
import { showError } from './messages.js';
import { currentPoint } from './point.js';
import { selectTab } from './tabs.js';
import { openVote } from './vote.js';

// The page's "within 1000 m".
const VOTE_RADIUS_M = 1000;
// More open votes than this within 1000 m would be a crowd; the nearest are what matter.
const VOTE_LIMIT = 50;
const LIST_IDS = ['public-votes', 'votes-nearby'];
// A vote opened nearby is told to nobody (that would tell who is near it), so the list is read again when a
// panel showing it comes back into view, and this often while the page is visible.
const REFRESH_MS = 30000;

let inFlight = null;

export function initVoteList() {
  on('point', load);
  on('vote-opened', () => load(currentPoint()));
  on('vote-changed', () => load(currentPoint()));
  on('stream:vote_finished', () => load(currentPoint()));
  on('stream:vote_cancelled', () => load(currentPoint()));
  on('tab', (name) => {
    if (name === 'votes' || name === 'places') load(currentPoint());
  });
  setInterval(() => {
    if (!document.hidden) load(currentPoint());
  }, REFRESH_MS);
  showHint('Choose a point (Places) to see the open votes near it.');
}

async function load(point) {
  if (!point) return;
  inFlight?.abort();
  inFlight = new AbortController();
  try {
    const answer = await get('/v1/votes/nearby', {
      query: { lat: point.lat, lon: point.lon, radius: VOTE_RADIUS_M, limit: VOTE_LIMIT },
      signal: inFlight.signal,
    });
    show(answer.votes, point);
  } catch (error) {
    showError(error);
  }
}

function showHint(text) {
  for (const id of LIST_IDS) byId(id).replaceChildren(emptyItem(text));
}

function show(votes, point) {
  if (votes.length === 0) showHint(`No open public vote within ${VOTE_RADIUS_M} m of the point.`);
  else for (const id of LIST_IDS) {
    const list = byId(id);
    clear(list);
    for (const vote of votes) list.append(voteItem(vote));
  }
  const markers = layerGroup('votes');
  if (!markers) return;
  markers.clearLayers();
  for (const vote of votes) {
    // A listing gives a vote's place only as distance and bearing from the point asked about.
    const where = destination(point.lat, point.lon, vote.bearing_deg, vote.distance_m);
    markers.addLayer(makeMarker({
      kind: 'vote', id: vote.id, lat: where.lat, lon: where.lon, label: vote.subject,
      onClick: () => open(vote),
    }));
  }
}

function voteItem(vote) {
  const closes = vote.closes_at ? `, closes ${formatTime(vote.closes_at)}` : '';
  const button = el('button', { attrs: { type: 'button' } },
    el('span', { class: 'listing-subject', text: vote.subject }),
    el('span', { class: 'listing-facts', text: `${formatDistanceBearing(vote.distance_m, vote.bearing_deg)} · ${vote.label} · ${vote.ballots_cast} of ${vote.participants} voted${closes}` }));
  button.addEventListener('click', () => open(vote));
  return el('li', { data: { voteId: vote.id } }, button);
}

function open(vote) {
  selectTab('votes');
  openVote(vote.id, vote);
}
