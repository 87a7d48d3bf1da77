// How distances, bearings, names and times read on the page.

const METRES_PER_KM = 1000;
// From 100 km on, tenths of a kilometre say nothing useful.
const WHOLE_KM_FROM_M = 100 * METRES_PER_KM;
const COMPASS = ['N', 'NE', 'E', 'SE', 'S', 'SW', 'W', 'NW'];
const DEGREES_PER_POINT = 360 / COMPASS.length;

// Thousands grouped as the page's English reads them: "13,314 km".
const WHOLE_NUMBER = new Intl.NumberFormat('en', { maximumFractionDigits: 0 });

// "420 m", "1.2 km", "153 km", "13,314 km".
export function formatDistance(metres) {
  if (metres === null || metres === undefined || !Number.isFinite(metres)) return '';
  if (metres < METRES_PER_KM) return `${Math.round(metres)} m`;
  if (metres < WHOLE_KM_FROM_M) return `${(metres / METRES_PER_KM).toFixed(1)} km`;
  return `${WHOLE_NUMBER.format(Math.round(metres / METRES_PER_KM))} km`;
}

// "45° NE": whole degrees clockwise from north and the nearest of eight compass points.
export function formatBearing(degrees) {
  if (degrees === null || degrees === undefined || !Number.isFinite(degrees)) return '';
  const whole = Math.round(degrees) % 360;
  const point = COMPASS[Math.round(degrees / DEGREES_PER_POINT) % COMPASS.length];
  return `${whole}° ${point}`;
}

// "120 m, 45° NE"; at the very spot a direction means nothing, so "0 m" alone.
export function formatDistanceBearing(metres, degrees) {
  if (Number.isFinite(metres) && Math.round(metres) === 0) return formatDistance(metres);
  return [formatDistance(metres), formatBearing(degrees)].filter(Boolean).join(', ');
}

export function fullName(person) {
  return `${person.first_name} ${person.last_name}`;
}

// "Pim Chaiyo (@pim)"
export function nameWithUsername(person) {
  return `${fullName(person)} (@${person.username})`;
}

export function formatTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return date.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
}

export function formatDateTime(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  return date.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
}

// How long ago `iso` was, roughly: "under a minute", "4 min", "3 h", "12 days".
export function formatAge(iso, now = Date.now()) {
  const elapsed = now - new Date(iso).getTime();
  if (!Number.isFinite(elapsed)) return '';
  const minutes = Math.floor(elapsed / 60000);
  if (minutes < 1) return 'under a minute';
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.floor(hours / 24)} days`;
}

// Six decimals of a degree are about 10 cm: as fine as any phone's position.
const COORDINATE_DECIMALS = 6;
export function formatCoordinate(degrees) {
  return Number(degrees.toFixed(COORDINATE_DECIMALS)).toString();
}
