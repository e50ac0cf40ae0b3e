-- wrk script: GET /v1/tasks/{id} over ids read from IDS_FILE (one per line).
-- Environment: GENHOST_API_KEY, IDS_FILE. Optional RATE_PER_CONN paces load.
local key = os.getenv("GENHOST_API_KEY")
local rate = tonumber(os.getenv("RATE_PER_CONN") or "0")
local ids = {}
for line in io.lines(os.getenv("IDS_FILE")) do ids[#ids + 1] = line end
local i = 0
wrk.headers["Authorization"] = "Bearer " .. key
wrk.headers["X-Service-Version"] = "2024-11-06"

setup = function(thread)
  thread:set("offset", math.random(#ids))
end

request = function()
  i = i + 1
  local id = ids[((i + (offset or 0)) % #ids) + 1]
  return wrk.format("GET", "/v1/tasks/" .. id)
end

-- Only when pacing: with a delay function, wrk sends every request from a timer, even at 0 ms
-- (wrk's CPU per poll 14.8 -> 13.8 us on one machine: docs/performance.md).
if rate > 0 then
  delay = function() return 1000 / rate end
end

done = function(summary, latency, requests)
  io.write(string.format("responses with status >= 400: %d\n", summary.errors.status))
  for _, p in ipairs({50, 90, 99, 99.9}) do
    io.write(string.format("latency p%s: %.2f ms\n", p, latency:percentile(p) / 1000))
  end
end
