-- wrk script of make bench: POST one telemetry event per request, as the
-- deployed editor library sends it, with a documentId no other request of
-- the run uses (argument: a prefix unique to the run), and a summary line
-- that bench/wrk.go reads.
local threads, counter, prefix = 0, 0, ""

function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

function init(args)
  prefix = "HASH-" .. (args[1] or "RUN") .. "-" .. id .. "-"
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
end

function request()
  counter = counter + 1
  return wrk.format(nil, nil, nil,
    '{"superdocVersion":"1.46.3","browserInfo":{"userAgent":"","currentUrl":"","hostname":"","screenSize":{"width":0,"height":0}},' ..
    '"events":[{"timestamp":"2026-11-22T09:34:00.123Z","documentId":"' .. prefix .. counter .. '","documentCreatedAt":null}]}')
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("wrk-summary requests=%d duration_us=%d failures=%d p50_us=%d p99_us=%d\n",
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout + e.status,
    latency:percentile(50), latency:percentile(99)))
end
