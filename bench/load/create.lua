-- wrk script: POST /v1/text_to_image with a fresh seed each time.
-- Environment: GENHOST_API_KEY. Optional RATE_PER_CONN (requests/s per connection) paces load.
local key = os.getenv("GENHOST_API_KEY")
local rate = tonumber(os.getenv("RATE_PER_CONN") or "0")
local n = 0
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer " .. key
wrk.headers["X-Service-Version"] = "2024-11-06"
wrk.headers["Content-Type"] = "application/json"

request = function()
  n = n + 1
  local body = '{"model":"gen4_image","promptText":"a lighthouse at dusk","ratio":"1280:720","seed":' .. n .. '}'
  return wrk.format(nil, "/v1/text_to_image", nil, body)
end

-- Only when pacing: with a delay function, wrk sends every request from a timer, even at 0 ms
-- (wrk's CPU per poll 14.8 -> 13.8 us on one machine: docs/performance.md). No `response`
-- callback either: it hands every response to Lua; wrk's summary counts statuses >= 400.
if rate > 0 then
  delay = function() return 1000 / rate end
end

done = function(summary, latency, requests)
  io.write(string.format("responses with status >= 400: %d\n", summary.errors.status))
  for _, p in ipairs({50, 90, 99, 99.9}) do
    io.write(string.format("latency p%s: %.2f ms\n", p, latency:percentile(p) / 1000))
  end
end
