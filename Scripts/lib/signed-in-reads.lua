-- wrk script: GET $READ_PATH signed in, each request as a different user of the SESSIONS file ("TOKEN LAT LON"
-- lines from vicinity-seed), starting at a random line per thread; "{lat}" and "{lon}" in the path become the
-- line's position. Used by Scripts/bench/stores.sh for the reads every signed-in page makes.
local lines = {}
for line in io.lines(os.getenv("SESSIONS")) do lines[#lines + 1] = line end
local path = os.getenv("READ_PATH")
local counter = 0
init = function(args) math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)); counter = math.random(#lines) end
request = function()
  counter = counter + 1
  local token, lat, lon = lines[(counter % #lines) + 1]:match("(%S+) (%S+) (%S+)")
  local target = path:gsub("{lat}", lat):gsub("{lon}", lon)
  return wrk.format("GET", target, { ["Authorization"] = "Bearer " .. token })
end
