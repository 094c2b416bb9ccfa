-- Read-after-write visibility of one session, shared by the workloads that measure it
-- (experiments/workloads/rw_consistency.lua, client/workloads/wf_emulation.lua). On their path through
-- client/lua/aurora_bench_hook.lua, which puts this directory on package.path.
--
-- Each transaction writes a marker row of its own session (a new token) and, once committed, reads it
-- back. A read that does not see the token is a stale read. sysbench runs one Lua state per thread, so
-- a marker is one thread's; its counts are printed when the thread ends, one line
-- `{"aurora_bench_read_back":{"checks":N,"stale":N,"foreign":N}}` that core/sysbench/parser.ts sums.
--
-- Marker rows live in sbtest1 above --table-size (ids the stock statements never pick), one per
-- thread, at an id mixed from the client's pid, the thread and a random draw. Should two sessions
-- (say two client hosts) ever land on the same id, the other's token is told apart by its owner
-- prefix and counted as "foreign", never as stale.

local ReadBack = {}
ReadBack.__index = ReadBack

local function client_pid()
   local f = io.open("/proc/self/stat", "r")
   if f == nil then
      return 0
   end
   local pid = tonumber(string.match(f:read("*l") or "", "^(%d+)")) or 0
   f:close()
   return pid
end

-- A marker for the calling sysbench thread.
function ReadBack.new()
   local slot = (client_pid() * 7919 + sysbench.tid * 104729 + sysbench.rand.uniform(0, 1000000)) % 1000000000
   local id = sysbench.opt.table_size + 1 + slot
   return setmetatable({
      id = id,
      owner = string.format("rb%d-", id) .. sysbench.rand.uniform(0, 1000000000),
      seq = 0,
      token = nil,
      checks = 0,
      stale = 0,
      foreign = 0,
   }, ReadBack)
end

-- Writes a new token on `con` (inside the caller's transaction, if any).
function ReadBack:write(con)
   self.seq = self.seq + 1
   self.token = self.owner .. ":" .. self.seq
   con:query(string.format("INSERT INTO sbtest1 (id, k, c, pad) VALUES (%d, 0, '%s', '') ON DUPLICATE KEY UPDATE c = VALUES(c)", self.id, self.token))
end

-- Reads the marker back on `con` and counts what it saw.
function ReadBack:read_back(con)
   local seen = con:query_row(string.format("SELECT c FROM sbtest1 WHERE id = %d", self.id))
   self.checks = self.checks + 1
   if seen == self.token then
      return
   end
   if seen == nil or string.sub(seen, 1, #self.owner + 1) == self.owner .. ":" then
      self.stale = self.stale + 1
   else
      self.foreign = self.foreign + 1
   end
end

function ReadBack:report()
   -- One write with its newline, as the report hook's lines: every thread reports when it ends, and
   -- print() writes the text and the newline separately, so two threads' lines could share one
   -- ({..}{..} then two newlines: seen on a loaded machine, three threads, two lines).
   io.stdout:write(string.format('{"aurora_bench_read_back":{"checks":%d,"stale":%d,"foreign":%d}}\n', self.checks, self.stale, self.foreign))
end

return ReadBack
