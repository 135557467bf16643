-- stop_after.lua: a wrk script for tests/bench/proxy.sh's counting runs: the thread stops after
-- $PROXYBENCH_STOP_AFTER responses (0 or unset: run for the whole -d duration). The benchmark
-- counts the requests exactly at the upstream (stub_status), so the requests still in flight
-- when the thread stops are accounted for.
local limit = tonumber(os.getenv("PROXYBENCH_STOP_AFTER") or "0") or 0
local seen = 0

function response(status, headers, body)
  seen = seen + 1
  if limit > 0 and seen >= limit then
    wrk.thread:stop()
  end
end
