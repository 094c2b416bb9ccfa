-- aurora-bench report hook for sysbench 1.0.20.
--
-- Run as the sysbench script: `sysbench aurora_bench_hook.lua run ...` with exactly one of
--   AURORA_BENCH_TEST=oltp_read_write        a stock test, loaded with require() from sysbench's
--                                           own Lua path (/usr/share/sysbench on Debian)
--   AURORA_BENCH_SCRIPT=/path/custom.lua     a custom workload, loaded with dofile()
-- It loads the workload, then replaces the intermediate report with ONE JSON line per
-- --report-interval, so the parser never has to scrape the human-readable line:
--   {"aurora_bench":1,"t":3,"interval_s":1.000,"threads":4,"events":812,"tps":812.000,
--    "qps":...,"reads_ps":...,"writes_ps":...,"other_ps":...,"pct":95,"lat_ms":...,
--    "errors_ps":...,"reconnects_ps":...[,"queue_length":n,"concurrency":n]}
-- Units follow sysbench.report_default in 1.0.20's internal sysbench.lua: stat.time_interval and
-- stat.latency_pct are seconds, the counters are totals over the interval.
-- queue_length/concurrency are set by sb_lua_report_intermediate() only in rate mode (--rate > 0),
-- so they are printed only then.
-- report_cumulative is deliberately left alone: sysbench keeps printing its text summary (and the
-- checkpoint reports that implement warmup), which the parser reads.

-- The modules workloads share (aurora_bench_read_back.lua) sit next to this file.
local here = debug.getinfo(1, "S").source:match("^@(.*/)")
if here ~= nil then
   package.path = here .. "?.lua;" .. package.path
end

local script = os.getenv("AURORA_BENCH_SCRIPT")
local test = os.getenv("AURORA_BENCH_TEST")

if script ~= nil and script ~= "" then
   dofile(script)
elseif test ~= nil and test ~= "" then
   if not test:match("^[%w_]+$") then
      error("aurora_bench_hook: AURORA_BENCH_TEST must be a stock test name such as oltp_read_write, got '" .. test .. "'")
   end
   require(test)
else
   error("aurora_bench_hook: set AURORA_BENCH_TEST (stock test name) or AURORA_BENCH_SCRIPT (custom Lua file)")
end

-- A JSON number: JSON has no NaN/Infinity, which a zero-length interval could produce.
local function num(fmt, x)
   if x ~= x or x == math.huge or x == -math.huge then
      return "0"
   end
   return string.format(fmt, x)
end

function sysbench.hooks.report_intermediate(stat)
   local seconds = stat.time_interval
   local function per_s(n)
      if seconds <= 0 then return 0 end
      return n / seconds
   end
   local parts = {
      '{"aurora_bench":1',
      '"t":' .. num("%.0f", stat.time_total),
      '"interval_s":' .. num("%.3f", seconds),
      '"threads":' .. num("%d", stat.threads_running),
      '"events":' .. num("%d", stat.events),
      '"tps":' .. num("%.3f", per_s(stat.events)),
      '"qps":' .. num("%.3f", per_s(stat.reads + stat.writes + stat.other)),
      '"reads_ps":' .. num("%.3f", per_s(stat.reads)),
      '"writes_ps":' .. num("%.3f", per_s(stat.writes)),
      '"other_ps":' .. num("%.3f", per_s(stat.other)),
      '"pct":' .. num("%d", sysbench.opt.percentile or 0),
      '"lat_ms":' .. num("%.3f", stat.latency_pct * 1000),
      '"errors_ps":' .. num("%.3f", per_s(stat.errors)),
      '"reconnects_ps":' .. num("%.3f", per_s(stat.reconnects)),
   }
   if (tonumber(sysbench.opt.rate) or 0) > 0 then
      parts[#parts + 1] = '"queue_length":' .. num("%d", stat.queue_length or 0)
      parts[#parts + 1] = '"concurrency":' .. num("%d", stat.concurrency or 0)
   end
   -- One write per line so concurrent output cannot split it.
   io.stdout:write(table.concat(parts, ",") .. "}\n")
   io.stdout:flush()
end
