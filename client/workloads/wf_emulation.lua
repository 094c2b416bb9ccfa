-- wf_emulation: a client-side EMULATION of Aurora local write forwarding and its read consistency
-- levels, for the local rehearsal on MariaDB (which has no write forwarding). Not Aurora: it shows
-- the study's method and what waiting for real GTID replication costs on this machine.
--
-- Each thread holds two connections: the reader the step targets, and the writer. sysbench 1.0.20
-- hands out connections round-robin over --mysql-port's list (src/drivers/mysql/drv_mysql.c,
-- mysql_drv_connect: "Pick the next port in args.ports"), so the runner is given both ports
-- (--extra-port) and each connection is told apart by SELECT @@port against --wf-writer-port.
-- The transaction of the base workload runs with its reads on the reader and its writes (with
-- BEGIN/COMMIT) on the writer. Before a transaction's reads (and before the read-back below):
--   EVENTUAL  reads at once (whatever the replica has applied);
--   SESSION   waits until the replica has applied this session's last write:
--             MASTER_GTID_WAIT(<the writer session's @@last_gtid>) on the reader;
--   GLOBAL    waits until the replica has applied everything the writer had committed:
--             MASTER_GTID_WAIT(<the writer's @@gtid_binlog_pos>) on the reader.
-- (MariaDB: @@last_gtid is the GTID of the session's last committed transaction, @@gtid_binlog_pos
-- the server's last written GTIDs, MASTER_GTID_WAIT(pos, timeout) returns 0 once the replica has
-- applied pos and -1 on timeout.)
--
--   --wf-base=oltp_read_write|oltp_write_only|rw_consistency   the workload being emulated
--   --wf-writer-port=P                                         the writer's port (the other one is the reader)
--   --consistency=EVENTUAL|SESSION|GLOBAL                      the level (empty: EVENTUAL)
--   --wf-wait-timeout=S                                        MASTER_GTID_WAIT timeout, seconds (counted, then read anyway)
--
-- With --wf-base=rw_consistency each transaction also writes a marker row on the writer and, after
-- the commit and the level's wait, reads it back on the reader (client/lua/aurora_bench_read_back.lua,
-- shared with workloads/rw_consistency.lua); each thread also prints {"aurora_bench_gtid_waits":{...}}
-- for the waits at its end (core/sysbench/parser.ts reads both).

require("oltp_common")
local ReadBack = require("aurora_bench_read_back")

sysbench.cmdline.options.wf_base = { "the workload emulated: oltp_read_write, oltp_write_only or rw_consistency", "oltp_read_write" }
sysbench.cmdline.options.wf_writer_port = { "the writer's port (connections to the other port are the reader's)", 0 }
sysbench.cmdline.options.consistency = { "EVENTUAL, SESSION or GLOBAL (empty: EVENTUAL)", "" }
sysbench.cmdline.options.wf_wait_timeout = { "MASTER_GTID_WAIT timeout in seconds", 10 }

local LEVELS = { EVENTUAL = true, SESSION = true, GLOBAL = true }
local level = "EVENTUAL"
local base = "oltp_read_write"
local rcon, wcon
local waits = { waits = 0, timeouts = 0 }
local marker = nil

local function port_of(c)
   return tonumber(c:query_row("SELECT @@port"))
end

-- Two connections, one to each server: round-robin may give a thread two of a kind when threads
-- connect at once, so reconnect until the pair is complete.
local function connect_pair()
   local writer_port = tonumber(sysbench.opt.wf_writer_port)
   if writer_port == nil or writer_port <= 0 then
      error("--wf-writer-port is required (the runner's --extra-port)")
   end
   local first = con
   local r, w
   if port_of(first) == writer_port then w = first else r = first end
   local spare = {}
   for _ = 1, 50 do
      if r ~= nil and w ~= nil then break end
      local c = drv:connect()
      if port_of(c) == writer_port then
         if w == nil then w = c else spare[#spare + 1] = c end
      else
         if r == nil then r = c else spare[#spare + 1] = c end
      end
   end
   for _, c in ipairs(spare) do c:disconnect() end
   if r == nil or w == nil then
      error("could not get one connection to the reader and one to the writer (ports: --mysql-port must list both)")
   end
   rcon, wcon = r, w
   -- Set-up, not measurement: the replica should have the data the step prepared on the writer (a
   -- fresh prepare drops and re-creates the tables) before statements are prepared against it. At
   -- most 20 s: sysbench 1.0.20 gives up on threads that take 30 s to initialize ("Worker threads
   -- failed to initialize within 30 seconds", src/sysbench.c); a replica still behind after that
   -- (a backlog from the writer steps before) is what EVENTUAL reads see, and the step goes on.
   local pos = wcon:query_row("SELECT @@gtid_binlog_pos")
   if pos ~= nil and pos ~= "" then
      rcon:query_row(string.format("SELECT MASTER_GTID_WAIT('%s', 20)", pos))
   end
end

-- Wait on the reader for a GTID position (SESSION: this session's last write; GLOBAL: the writer's).
local function wait_for(pos)
   if pos == nil or pos == "" then return end
   waits.waits = waits.waits + 1
   local rc = rcon:query_row(string.format("SELECT MASTER_GTID_WAIT('%s', %d)", pos, tonumber(sysbench.opt.wf_wait_timeout)))
   if tonumber(rc) ~= 0 then waits.timeouts = waits.timeouts + 1 end
end

local last_write_gtid = nil

local function before_reads()
   if level == "SESSION" then
      wait_for(last_write_gtid)
   elseif level == "GLOBAL" then
      wait_for(wcon:query_row("SELECT @@gtid_binlog_pos"))
   end
end

function prepare_statements()
   if rcon == nil then
      connect_pair()
      level = string.upper(sysbench.opt.consistency or "")
      if level == "" then level = "EVENTUAL" end
      if not LEVELS[level] then error("--consistency must be EVENTUAL, SESSION or GLOBAL, got '" .. sysbench.opt.consistency .. "'") end
      base = sysbench.opt.wf_base
      if base == "rw_consistency" then marker = ReadBack.new() end
   end
   -- oltp_common prepares every statement on the global con: point it at the server that runs them.
   con = wcon
   if not sysbench.opt.skip_trx then
      prepare_begin()
      prepare_commit()
   end
   prepare_index_updates()
   prepare_non_index_updates()
   prepare_delete_inserts()
   if base ~= "oltp_write_only" then
      con = rcon
      prepare_point_selects()
      if sysbench.opt.range_selects then
         prepare_simple_ranges()
         prepare_sum_ranges()
         prepare_order_ranges()
         prepare_distinct_ranges()
      end
   end
   con = rcon
end

local function read_back_marker()
   before_reads()
   marker:read_back(rcon)
end

function event()
   if base ~= "oltp_write_only" then
      before_reads()
   end
   if not sysbench.opt.skip_trx then begin() end
   if base ~= "oltp_write_only" then
      execute_point_selects()
      if sysbench.opt.range_selects then
         execute_simple_ranges()
         execute_sum_ranges()
         execute_order_ranges()
         execute_distinct_ranges()
      end
   end
   execute_index_updates()
   execute_non_index_updates()
   execute_delete_inserts()
   if marker ~= nil then marker:write(wcon) end
   if not sysbench.opt.skip_trx then commit() end
   if level == "SESSION" then last_write_gtid = wcon:query_row("SELECT @@last_gtid") end
   if marker ~= nil then read_back_marker() end
end

function thread_done()
   if marker ~= nil then
      marker:report()
   end
   print(string.format('{"aurora_bench_gtid_waits":{"level":"%s","waits":%d,"timeouts":%d}}', level, waits.waits, waits.timeouts))
   close_statements()
   rcon:disconnect()
   wcon:disconnect()
end
