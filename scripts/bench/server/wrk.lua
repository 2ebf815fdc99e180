-- wrk script of the server benchmarks: one request per line of a request file ("<api key>\t<path>\t
-- <JSON body>"), taken round-robin, so the load spreads over every enrolled device. Arguments after
-- `--`: <request file> <transport> (server/transport.ts) [<pace ms>: each connection waits that long
-- after an answer before its next request]. Prints one JSON line with the run's figures.
local requests = {}
local next_index = 0

function init(args)
  local file, transport = args[1], args[2]
  local pace_ms = tonumber(args[3] or "0")
  -- wrk looks for delay() after init(): unpaced runs stay closed-loop, without a timer per request.
  if pace_ms > 0 then
    delay = function() return pace_ms end
  end
  for line in io.lines(file) do
    local key, path, body = line:match("^(%x+)\t([^\t]+)\t(.*)$")
    local headers = { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. key }
    if transport == "close" then headers["Connection"] = "close" end
    requests[#requests + 1] = wrk.format("POST", path, headers, body)
  end
end

function request()
  next_index = next_index % #requests + 1
  return requests[next_index]
end

function done(summary, latency, _)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"duration_us":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\n',
    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
