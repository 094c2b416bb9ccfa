-- fullscan_1kb: study S4's network-throughput workload.
--
-- Data: --tables tables (S4 uses one) named fullscan1..N, each with --table_size rows of ~1 KB:
--   id INT PRIMARY KEY, user_id INT, text01..text25 TEXT holding 40 random letters each
--   (25 x 40 = 1,000 bytes of text + 8 bytes of integers per row), the shape the original study
--   created with mysql_random_data_load. 1,000,000 rows is ~1 GB.
--   Row size for the cost estimate (core/plan/cost.ts; text plus length bytes and row header):
-- aurora-bench: bytes-per-row 1040
-- Event: one full-table `SELECT *` of one table; every row is fetched into Lua and dropped,
--   like the original study's `mysql -e "SELECT * FROM test.test" > /dev/null` loop. The event is the
--   transaction, so tps = full scans per second; bytes/s are read from the server's network
--   metrics, not from sysbench.
-- Memory: sysbench 1.0.20's MySQL driver buffers the whole result set (mysql_store_result), so a
--   client needs about threads x table bytes of RAM (1 thread per c6i.large for 1 GB, as in S4).
-- Commands: prepare (parallel over --threads: each thread inserts its own id range of every
--   table, in multi-row INSERTs of ~512 KB through sysbench's bulk insert API), run, cleanup.
-- Runs directly (`sysbench fullscan_1kb.lua run`) or under client/lua/aurora_bench_hook.lua
-- (AURORA_BENCH_SCRIPT=/path/fullscan_1kb.lua), which adds the JSON report lines.

if sysbench.cmdline.command == nil then
   error("Command is required. Supported commands: prepare, run, cleanup, help")
end

sysbench.cmdline.options = {
   table_size = {"Rows per table (~1 KB each)", 1000000},
   tables = {"Number of tables", 1},
}

local TEXT_COLUMNS = 25
-- 40 random letters per column ('@' is a random letter in sysbench.rand.string templates).
local TEXT_TEMPLATE = string.rep("@", 40)

local function table_name(n)
   return "fullscan" .. n
end

local function create_table(con, n)
   local cols = {}
   for c = 1, TEXT_COLUMNS do
      cols[#cols + 1] = string.format("  text%02d TEXT", c)
   end
   -- IF NOT EXISTS: every prepare thread issues it and the first one creates the table; the
   -- others wait on the table's metadata lock and then go on to insert their own ranges.
   con:query(string.format([[
CREATE TABLE IF NOT EXISTS %s (
  id INT NOT NULL,
  user_id INT DEFAULT NULL,
%s,
  PRIMARY KEY (id)
) ENGINE=InnoDB]], table_name(n), table.concat(cols, ",\n")))
end

local function insert_rows(con, n, first, last)
   if last < first then
      return
   end
   local names = {}
   for c = 1, TEXT_COLUMNS do
      names[#names + 1] = string.format("text%02d", c)
   end
   con:bulk_insert_init(string.format("INSERT INTO %s (id, user_id, %s) VALUES",
                                      table_name(n), table.concat(names, ", ")))
   local values = {}
   for id = first, last do
      for c = 1, TEXT_COLUMNS do
         values[c] = "'" .. sysbench.rand.string(TEXT_TEMPLATE) .. "'"
      end
      con:bulk_insert_next(string.format("(%d, %d, %s)", id,
                                         sysbench.rand.uniform(1, 2147483647),
                                         table.concat(values, ", ")))
   end
   con:bulk_insert_done()
end

function cmd_prepare()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   local threads = sysbench.opt.threads
   local tid = sysbench.tid % threads
   local size = sysbench.opt.table_size
   -- Contiguous id slices per thread, so one big table still prepares in parallel.
   local first = math.floor(size * tid / threads) + 1
   local last = math.floor(size * (tid + 1) / threads)
   for n = 1, sysbench.opt.tables do
      create_table(con, n)
      if tid == 0 then
         print(string.format("Inserting %d rows of ~1 KB into '%s' with %d thread(s)",
                             size, table_name(n), threads))
      end
      insert_rows(con, n, first, last)
   end
   con:disconnect()
end

sysbench.cmdline.commands = {
   prepare = {cmd_prepare, sysbench.cmdline.PARALLEL_COMMAND},
}

function cleanup()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   for n = 1, sysbench.opt.tables do
      print(string.format("Dropping table '%s'...", table_name(n)))
      con:query("DROP TABLE IF EXISTS " .. table_name(n))
   end
   con:disconnect()
end

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
   -- Threads start on different tables when there are several.
   next_table = sysbench.tid % sysbench.opt.tables
end

function thread_done()
   con:disconnect()
end

function event()
   next_table = next_table % sysbench.opt.tables + 1
   local rs = con:query("SELECT * FROM " .. table_name(next_table))
   if rs ~= nil then
      -- Read every row into Lua strings and drop them: the client does the work a real reader does.
      local row = rs:fetch_row()
      while row ~= nil do
         row = rs:fetch_row()
      end
      rs:free()
   end
end
