// Starts the page: reads the server's map settings, draws the map when Leaflet is there (and says so in
// words when it is not), wires every panel, signs in again with a token kept in this tab, and opens the
// panel the address names (/#friends).
import { initAlerts } from './alerts.js';
import { get } from './api.js';
import { initBlocks } from './blocks.js';
import { drawCampuses } from './campuses.js';
import { initAccount, restoreSession } from './account.js';
import { initCodeSignIn } from './codesignin.js';
import { initConnection } from './connection.js';
import { initDevices } from './devices.js';
import { initDirection } from './direction.js';
import { byId } from './dom.js';
import { initEmail } from './email.js';
import { initFriends } from './friends.js';
import { initFocusKeeping } from './keepfocus.js';
import { followAddress, initLinks } from './links.js';
import { createMap } from './map.js';
import { showError } from './messages.js';
import { initMyData } from './mydata.js';
import { initNotices } from './notices.js';
import { initPassword } from './password.js';
import { initPeople } from './people.js';
import { initPlaceLayer } from './placelayer.js';
import { initPlaces } from './places.js';
import { initPointControls } from './point.js';
import { initPosition } from './position.js';
import { initPush } from './push.js';
import { initRequests } from './requests.js';
import { initSearch } from './search.js';
import { initStream } from './stream.js';
import { initTabs } from './tabs.js';
import { initTemples } from './temples.js';
import { initVote } from './vote.js';
import { initVoteAdmin } from './voteadmin.js';
import { initVoteList } from './votelist.js';
import { initVoteOpen } from './voteopen.js';

// Where the map opens when the server's settings cannot be read: the Hall of Science, CSULB, the campus
// the shipped data covers (the server's own default).
const FALLBACK_CONFIG = { tiles: null, start: { lat: 33.779842, lon: -118.112526, zoom: 16 } };

async function loadConfig() {
  try {
    const config = await get('/app/config.json');
    return { ...FALLBACK_CONFIG, ...config };
  } catch (error) {
    showError(error);
    return FALLBACK_CONFIG;
  }
}

async function boot() {
  initTabs();
  // Every panel listens before anything happens, so that none misses the first point or the sign-in.
  initPointControls();
  initSearch();
  initPlaces();
  initTemples();
  initVoteList();
  initVote();
  initVoteAdmin();
  initVoteOpen();
  initAccount();
  initCodeSignIn();
  initEmail();
  initPassword();
  initMyData();
  initDevices();
  initPush();
  initPosition();
  initPeople();
  initBlocks();
  initAlerts();
  initRequests();
  initFriends();
  initDirection();
  initNotices();
  initStream();
  initConnection();
  initFocusKeeping();
  initLinks();

  const config = await loadConfig();
  if (typeof window.L === 'undefined') {
    // Leaflet's files were not served: say why there is no map; the panels work without it.
    byId('leaflet-missing').hidden = false;
    document.body.classList.add('without-map');
  } else {
    createMap(config);
    initPlaceLayer();
    drawCampuses();
  }
  await restoreSession();
  followAddress();
}

boot();
