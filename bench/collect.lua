-- wrk script of make bench: POST one telemetry event per request, as the
-- deployed editor library sends it, with a documentId no other request of
-- the run uses (argument: a prefix unique to the run), and a summary line
-- that bench/wrk.go reads. With the arguments "2x" and a license key, the
-- payload is the 2.x library's (a UUID per open, currentUrl the origin)
-- under that key, from its host docs.acme.example, but every 8th open has
-- no id (null) and every 8th other comes from another host.
--
-- wrk shares the machine's cores with the server, so each request costs
-- it the same, and little, whatever the payload: the request line and
-- headers are formatted once, and a request is one concatenation of
-- constant parts with the counter (wrk.format and string.format for
-- every request cost about a fifth more for the 2.x payload than for the
-- 1.x one, counted with callgrind).
local threads, counter, v2 = 0, 0, false
local head, before, after = "", "", ""
local own, other, anonymous = "", "", ""

function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

function init(args)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/json"
  if args[2] == "2x" then
    v2 = true
    wrk.headers["X-License-Key"] = args[3]
  end
  -- The request line and headers, without Content-Length and the blank line.
  head = string.sub(wrk.format(), 1, -3) .. "Content-Length: "
  if not v2 then
    before = '{"superdocVersion":"1.46.3","browserInfo":{"userAgent":"","currentUrl":"","hostname":"","screenSize":{"width":0,"height":0}},' ..
      '"events":[{"timestamp":"2026-11-22T09:34:00.123Z","documentId":"HASH-' .. (args[1] or "RUN") .. "-" .. id .. "-"
    after = '","documentCreatedAt":null}]}'
    return
  end
  local function from(origin, host, id)
    return '{"superdocVersion":"2.11.0","browserInfo":{"userAgent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36",' ..
      '"currentUrl":"' .. origin .. '","hostname":"' .. host .. '","screenSize":{"width":1280,"height":720}},' ..
      '"events":[{"timestamp":"2026-11-27T08:00:01.250Z","documentId":' .. id
  end
  -- A UUID: the thread in the first group, the counter in the last (its
  -- decimal digits are hex digits, 12 of them below 9e11 requests).
  local uuid = string.format('"%08x-0000-4000-8000-', id)
  own, other = from("https://docs.acme.example", "docs.acme.example", uuid), from("https://elsewhere.example", "elsewhere.example", uuid)
  anonymous = from("https://docs.acme.example", "docs.acme.example", "null") .. ',"documentCreatedAt":null}]}'
  after = '","documentCreatedAt":null}]}'
end

local function send(body)
  return head .. #body .. "\r\n\r\n" .. body
end

function request()
  counter = counter + 1
  if not v2 then
    return send(before .. counter .. after)
  end
  local kind = counter % 8
  if kind == 0 then
    return send(anonymous)
  elseif kind == 4 then
    return send(other .. (100000000000 + counter) .. after)
  end
  return send(own .. (100000000000 + counter) .. after)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("wrk-summary requests=%d duration_us=%d failures=%d p50_us=%d p99_us=%d\n",
    summary.requests, summary.duration, e.connect + e.read + e.write + e.timeout + e.status,
    latency:percentile(50), latency:percentile(99)))
end
