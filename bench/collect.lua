-- wrk script of make bench: POST one telemetry event per request, as the
-- deployed editor library sends it, with a documentId no other request of
-- the run uses (argument: a prefix unique to the run), and a summary line
-- that bench/wrk.go reads. With the arguments "2x" and a license key, the
-- payload is the 2.x library's (a UUID per open, currentUrl the origin)
-- under that key, from its host docs.acme.example, but every 8th open has
-- no id (null) and every 8th other comes from another host.
local threads, counter, prefix, v2 = 0, 0, "", false

function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

function init(args)
  prefix = "HASH-" .. (args[1] or "RUN") .. "-" .. id .. "-"
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  if args[2] == "2x" then
    v2 = true
    wrk.headers["X-License-Key"] = args[3]
  end
end

local function request2x()
  local doc, origin, host = string.format('"%08x-0000-4000-8000-%012x"', id, counter), "https://docs.acme.example", "docs.acme.example"
  if counter % 8 == 0 then
    doc = "null"
  elseif counter % 8 == 4 then
    origin, host = "https://elsewhere.example", "elsewhere.example"
  end
  return wrk.format(nil, nil, nil,
    '{"superdocVersion":"2.11.0","browserInfo":{"userAgent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36",' ..
    '"currentUrl":"' .. origin .. '","hostname":"' .. host .. '","screenSize":{"width":1280,"height":720}},' ..
    '"events":[{"timestamp":"2026-11-27T08:00:01.250Z","documentId":' .. doc .. ',"documentCreatedAt":null}]}')
end

function request()
  counter = counter + 1
  if v2 then
    return request2x()
  end
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
