-- wrk script: POST /owntracks as the OwnTracks app sends a location in HTTP mode, each request a different
-- user's phone of the DEVICES file ("BASIC LAT LON" lines from vicinity-seed: the Basic credentials and a fix),
-- starting at a random line per thread; each fix is stamped with the time it is sent. Used by
-- Scripts/bench/phones.sh.
local lines = {}
for line in io.lines(os.getenv("DEVICES")) do lines[#lines + 1] = line end
local counter = 0
init = function(args) math.randomseed(os.time() + tonumber(tostring({}):sub(8), 16)); counter = math.random(#lines) end
request = function()
  counter = counter + 1
  local basic, lat, lon = lines[(counter % #lines) + 1]:match("(%S+) (%S+) (%S+)")
  return wrk.format("POST", "/owntracks",
    { ["Authorization"] = "Basic " .. basic, ["Content-Type"] = "application/json" },
    '{"_type":"location","lat":' .. lat .. ',"lon":' .. lon .. ',"acc":12,"batt":81,"bs":1,"conn":"w","tid":"PH","tst":'
      .. os.time() .. ',"created_at":' .. os.time() .. '}')
end
