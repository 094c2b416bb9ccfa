-- aurora-bench: the configuration the database server really runs with.
--
--   sysbench server_config.lua dump --mysql-host=... --mysql-port=... --mysql-user=...
--
-- Prints one JSON line per global variable (SHOW GLOBAL VARIABLES, which on Aurora MySQL includes
-- aurora_version; on PostgreSQL pg_settings, below), as {"aurora_bench_variable":{"name":"...","value":"..."}}
-- (PostgreSQL: and "unit"); client/runner.sh runs
-- it after a successful prepare and keeps the lines in server_variables.jsonl, which the workflow
-- compares with the values the experiment asked for (core/workflow/effective-config.ts).
-- A command of its own (sysbench.cmdline.commands, src/lua/internal/sysbench.cmdline.lua in
-- sysbench 1.0.20): not parallel, so it runs once, in the main thread, without worker threads.

local function json_string(s)
   s = tostring(s)
   s = s:gsub('\\', '\\\\'):gsub('"', '\\"'):gsub('\n', '\\n'):gsub('\r', '\\r'):gsub('\t', '\\t')
   s = s:gsub('[%z\1-\31]', function(c) return string.format('\\u%04x', c:byte()) end)
   return '"' .. s .. '"'
end

-- PostgreSQL (the pgsql driver): every setting from pg_settings, in its base unit (`setting`, with
-- `unit` such as 8kB, kB, ms, s: PostgreSQL documentation, "pg_settings"), the units parameter groups
-- write their values in; server_version is one of them.
local function dump()
   local drv = sysbench.sql.driver()
   local con = drv:connect()
   local pgsql = drv:name() == 'pgsql'
   local rs = con:query(pgsql and "SELECT name, setting, COALESCE(unit, '') FROM pg_settings" or "SHOW GLOBAL VARIABLES")
   for _ = 1, rs.nrows do
      local row = rs:fetch_row()
      local unit = ''
      if pgsql and row[3] ~= nil and row[3] ~= '' then unit = ',"unit":' .. json_string(row[3]) end
      print('{"aurora_bench_variable":{"name":' .. json_string(row[1]) .. ',"value":' .. json_string(row[2] or '') .. unit .. '}}')
   end
   con:disconnect()
end

sysbench.cmdline.commands = {
   dump = { dump }
}
