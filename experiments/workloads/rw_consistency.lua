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
-- marker row of its own session (a new token) and, once committed, reads it back in the same session.
-- A read that does not see the token is a stale read. Each thread prints its counts when it ends, one
-- line `{"aurora_bench_read_back":{"checks":N,"stale":N,"foreign":N}}` that core/sysbench/parser.ts
-- sums (warmup included). The marker costs every transaction one more write and one more read.
--
-- Data: the stock sbtest tables (prepare/cleanup come from oltp_common, as for oltp_read_write).
-- Marker rows live in sbtest1 above --table-size (ids the stock statements never pick), one per
-- thread, at an id mixed from the client's pid, the thread and a random draw. Should two sessions
-- (say two client hosts) ever land on the same id, the other's token is told apart by its owner
-- prefix and counted as "foreign", never as stale.

require("oltp_common")

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

-- Read-after-write checks of this thread (sysbench runs one Lua state per thread).
local read_back = { checks = 0, stale = 0, foreign = 0 }
local marker = nil

local function client_pid()
   local f = io.open("/proc/self/stat", "r")
   if f == nil then
      return 0
   end
   local pid = tonumber(string.match(f:read("*l") or "", "^(%d+)")) or 0
   f:close()
   return pid
end

local function init_marker()
   local slot = (client_pid() * 7919 + sysbench.tid * 104729 + sysbench.rand.uniform(0, 1000000)) % 1000000000
   local id = sysbench.opt.table_size + 1 + slot
   marker = { id = id, owner = string.format("rb%d-", id) .. sysbench.rand.uniform(0, 1000000000), seq = 0 }
end

local function write_marker()
   marker.seq = marker.seq + 1
   marker.token = marker.owner .. ":" .. marker.seq
   con:query(string.format("INSERT INTO sbtest1 (id, k, c, pad) VALUES (%d, 0, '%s', '') ON DUPLICATE KEY UPDATE c = VALUES(c)", marker.id, marker.token))
end

local function read_back_marker()
   local seen = con:query_row(string.format("SELECT c FROM sbtest1 WHERE id = %d", marker.id))
   read_back.checks = read_back.checks + 1
   if seen == marker.token then
      return
   end
   if seen == nil or string.sub(seen, 1, #marker.owner + 1) == marker.owner .. ":" then
      read_back.stale = read_back.stale + 1
   else
      read_back.foreign = read_back.foreign + 1
   end
end

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
   init_marker()
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
   write_marker()

   if not sysbench.opt.skip_trx then
      commit()
   end

   -- After the commit, as the next statement of a session would see it.
   read_back_marker()
end

local oltp_thread_done = thread_done

function thread_done()
   if marker ~= nil then
      print(string.format('{"aurora_bench_read_back":{"checks":%d,"stale":%d,"foreign":%d}}', read_back.checks, read_back.stale, read_back.foreign))
   end
   oltp_thread_done()
end
