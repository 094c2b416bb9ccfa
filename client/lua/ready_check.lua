-- aurora-bench client readiness check: a sysbench workload that needs no database.
--
-- client/client-ready.sh runs it through the report hook, the way every benchmark runs:
--   AURORA_BENCH_SCRIPT=.../ready_check.lua sysbench .../aurora_bench_hook.lua run --threads=2 --time=2 --report-interval=1
-- and calls the client ready only when the hook printed its JSON interval lines and sysbench's
-- summary counted events. It proves what a benchmark step needs besides the network:
-- - sysbench's own Lua library path holds the stock OLTP tests (oltp_common is what every stock
--   OLTP test requires; loading it connects to nothing: only its thread_init does, replaced here);
-- - the LuaJIT sysbench was built with runs Lua and FFI code in several threads (each sysbench
--   thread has its own Lua state), JIT-compiled loops included. sysbench 1.0.20's bundled LuaJIT
--   2.1.0-beta2 crashes on aarch64 kernels with 48-bit user address spaces (sysbench issue #384,
--   https://github.com/akopytov/sysbench/issues/384; fixed in LuaJIT by "Add support for
--   full-range 64 bit lightuserdata", LuaJIT commit e9af1abec542e6f9851ff2368e7f196b6382a44c):
--   such a build fails here instead of in a benchmark step.
-- Each event then sleeps 5 ms (libc's usleep through FFI): the check proves that these work, not how
-- fast, so its 2 s take about 0.05 s of CPU instead of both threads' full 2 s. A client boots with it,
-- and so does each of the AWS rehearsal's emulated clients, which share this machine's cores.

require("oltp_common")

local ffi = require("ffi")
-- pcall: a second declaration of the same function is an error, should the sysbench build have one.
pcall(ffi.cdef, "int usleep(unsigned int usec);")

function thread_init()
end

function thread_done()
end

function event()
   -- sysbench's own C functions through FFI, and a copy into FFI-allocated memory.
   local s = sysbench.rand.string(string.rep("#", 64))
   local buf = ffi.new("char[?]", #s + 1)
   ffi.copy(buf, s, #s)
   local sum = 0
   for i = 0, #s - 1 do
      sum = sum + buf[i]
   end
   -- Every '#' became a digit: '0'..'9' are 48..57.
   if sum < 48 * #s or sum > 57 * #s then
      error("ready_check: FFI copy of a sysbench random string came back wrong")
   end
   ffi.C.usleep(5000)
end
