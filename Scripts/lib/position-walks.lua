-- wrk script: PUT /v1/me/position, each request a different user of the SESSIONS file ("TOKEN LAT LON" lines
-- from vicinity-seed) moving to one of four spots around their line's position, 0 to 250 m north of it, in turn:
-- people who walk across the edges of the places they are watched at, so that alerts change state as well as
-- being read. Used by Scripts/bench/alerts.sh.
local lines = {}
for line in io.lines(os.getenv("SESSIONS")) do lines[#lines + 1] = line end
local counter = 0
-- Metres per degree of latitude on the mean sphere (6,371,008.8 m × π / 180).
local metresPerDegree = 111194.9
init = function(args) math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)); counter = math.random(#lines) end
request = function()
  counter = counter + 1
  local token, lat, lon = lines[(counter % #lines) + 1]:match("(%S+) (%S+) (%S+)")
  local step = math.floor(counter / #lines) % 4
  local latitude = tonumber(lat) + step * 83.3 / metresPerDegree
  return wrk.format("PUT", "/v1/me/position",
    { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" },
    string.format('{"lat":%.7f,"lon":%s,"status":"On my way"}', latitude, lon))
end
