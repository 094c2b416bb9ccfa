-- rw_consistency: oltp_read_write with Aurora's read consistency set per session (S3, seeds/002).
--
-- The seed measured what each aurora_replica_read_consistency level (EVENTUAL, SESSION, GLOBAL)
-- costs a session that reads and writes through a reader with local write forwarding. Aurora lets
-- each session choose its level (`SET aurora_replica_read_consistency = ...`), so one cluster can
-- measure all three, and this script is the stock oltp_read_write transaction with that SET run
-- once per connection. Every oltp_read_write option still applies (point_selects, range_selects...).
--
--   --consistency=EVENTUAL|SESSION|GLOBAL   the level; empty leaves the server's setting alone
--
-- Data: the stock sbtest tables (prepare/cleanup come from oltp_common, as for oltp_read_write).

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

   if not sysbench.opt.skip_trx then
      commit()
   end
end
