-- rw_consistency: oltp_read_write with Aurora's read consistency set per session (S3).
--
-- The original study measured what each aurora_replica_read_consistency level (EVENTUAL, SESSION, GLOBAL)
-- costs a session that reads and writes through a reader with local write forwarding. Aurora lets
-- each session choose its level (`SET aurora_replica_read_consistency = ...`), so one cluster can
-- measure all three, and this script is the stock oltp_read_write transaction with that SET run
-- once per connection. Every oltp_read_write option still applies (point_selects, range_selects...).
--
--   --consistency=EVENTUAL|SESSION|GLOBAL   the level; empty leaves the server's setting alone
--
-- Read-after-write visibility, the other half of what a level buys: each transaction also writes a
-- marker row of its own session and, once committed, reads it back in the same session; a read that
-- does not see it is stale (client/lua/aurora_bench_read_back.lua, on the runner's Lua path; run by
-- hand: LUA_PATH='client/lua/?.lua;;' sysbench rw_consistency.lua ...). The
-- marker costs every transaction one more write and one more read.
--
-- Data: the stock sbtest tables (prepare/cleanup come from oltp_common, as for oltp_read_write).

require("oltp_common")
local ReadBack = require("aurora_bench_read_back")

sysbench.cmdline.options.consistency =
   {"aurora_replica_read_consistency for each session: EVENTUAL, SESSION or GLOBAL (empty: server default)", ""}

local LEVELS = { EVENTUAL = true, SESSION = true, GLOBAL = true }

local function set_consistency()
   local level = string.upper(sysbench.opt.consistency or "")
   if level == "" then
      return
   end
   if not LEVELS[level] then
      error("--consistency must be EVENTUAL, SESSION or GLOBAL, got '" .. sysbench.opt.consistency .. "'")
   end
   con:query("SET SESSION aurora_replica_read_consistency = '" .. level .. "'")
end

-- This thread's read-after-write marker (sysbench runs one Lua state per thread).
local marker = nil

function prepare_statements()
   if not sysbench.opt.skip_trx then
      prepare_begin()
      prepare_commit()
   end

   prepare_point_selects()

   if sysbench.opt.range_selects then
      prepare_simple_ranges()
      prepare_sum_ranges()
      prepare_order_ranges()
      prepare_distinct_ranges()
   end

   prepare_index_updates()
   prepare_non_index_updates()
   prepare_delete_inserts()

   -- prepare_statements runs once per connection, right after it is made (oltp_common's
   -- thread_init): the place for a per-session setting.
   set_consistency()
   marker = ReadBack.new()
end

function event()
   if not sysbench.opt.skip_trx then
      begin()
   end

   execute_point_selects()

   if sysbench.opt.range_selects then
      execute_simple_ranges()
      execute_sum_ranges()
      execute_order_ranges()
      execute_distinct_ranges()
   end

   execute_index_updates()
   execute_non_index_updates()
   execute_delete_inserts()
   marker:write(con)

   if not sysbench.opt.skip_trx then
      commit()
   end

   -- After the commit, as the next statement of a session would see it.
   marker:read_back(con)
end

local oltp_thread_done = thread_done

function thread_done()
   if marker ~= nil then
      marker:report()
   end
   oltp_thread_done()
end
