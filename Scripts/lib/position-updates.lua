-- wrk script: PUT /v1/me/position, each request a different user of the SESSIONS file ("TOKEN LAT LON" lines
-- from vicinity-seed) moving to a new spot, starting at a random line per thread. Used by
-- Scripts/bench/friends.sh and Scripts/bench/storage.sh.
local lines = {}
for line in io.lines(os.getenv("SESSIONS")) do lines[#lines + 1] = line end
local counter = 0
init = function(args) math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)); counter = math.random(#lines) end
request = function()
  counter = counter + 1
  local token, lat, lon = lines[(counter % #lines) + 1]:match("(%S+) (%S+) (%S+)")
  return wrk.format("PUT", "/v1/me/position",
    { ["Authorization"] = "Bearer " .. token, ["Content-Type"] = "application/json" },
    '{"lat":' .. lat .. ',"lon":' .. lon .. ',"status":"On my way"}')
end
