-- wrk script: GET VICINITY_PATH (a format with two %f: latitude, then longitude) at centres uniform in
-- [33.7, 33.8) x [-118.2, -118.1), inside the benchmarks' 50 x 50 km square around CSULB; each thread seeded
-- (2026 + its number), so every run asks the same centres. Used by Scripts/bench/peers.sh, stores.sh, fronts.sh.
local counter = 0
setup = function(thread) counter = counter + 1; thread:set("seed", counter) end
init = function() math.randomseed(2026 + seed) end
request = function()
  local lat = 33.7 + math.random() * 0.1
  local lon = -118.2 + math.random() * 0.1
  return wrk.format("GET", string.format(os.getenv("VICINITY_PATH"), lat, lon))
end
