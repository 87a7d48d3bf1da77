// Spherical geometry on the sphere the API measures on, for what the API says only as a distance and a
// bearing from a known position (a vote's listing).

// The IUGG mean radius, the API's sphere.
const EARTH_RADIUS_M = 6371008.8;
const RADIANS_PER_DEGREE = Math.PI / 180;

// A ten-millionth of a degree is about a centimetre: finer digits are rounding noise of the formulas.
const DECIMALS = 7;

// Where one arrives going distanceM metres from lat/lon along the initial bearing.
export function destination(lat, lon, bearingDeg, distanceM) {
  const angle = distanceM / EARTH_RADIUS_M;
  const bearing = bearingDeg * RADIANS_PER_DEGREE;
  const lat1 = lat * RADIANS_PER_DEGREE;
  const lon1 = lon * RADIANS_PER_DEGREE;
  const lat2 = Math.asin(Math.sin(lat1) * Math.cos(angle) + Math.cos(lat1) * Math.sin(angle) * Math.cos(bearing));
  const lon2 = lon1 + Math.atan2(
    Math.sin(bearing) * Math.sin(angle) * Math.cos(lat1),
    Math.cos(angle) - Math.sin(lat1) * Math.sin(lat2),
  );
  // Back into [-180, 180) after crossing the antimeridian.
  const lonDeg = ((lon2 / RADIANS_PER_DEGREE + 540) % 360) - 180;
  return { lat: Number((lat2 / RADIANS_PER_DEGREE).toFixed(DECIMALS)), lon: Number(lonDeg.toFixed(DECIMALS)) };
}
