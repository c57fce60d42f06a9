-- bench.lua - a deterministic, CPU-bound Lua script for the interpreter
-- (lua.c and the standard libraries): each round runs table, string,
-- closure, coroutine and arithmetic work from a seeded generator of its
-- own and prints one line of checksums, flushed.
--
-- usage: lua bench.lua ROUNDS [SIZE]   ROUNDS 0: run until killed

local rounds = tonumber(arg[1] or "20")
local size = tonumber(arg[2] or "2000")

local seed = 0
local function rand(n)
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed % n
end

local function checksum(s)
  local h = 5381
  for i = 1, #s do
    h = (h * 33 + s:byte(i)) % 4294967296
  end
  return h
end

local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end

local function round(r)
  seed = r
  -- tables: fill, sort, count
  local t = {}
  for i = 1, size do t[i] = rand(100000) end
  table.sort(t)
  local sum = 0
  for i = 1, #t, 7 do sum = (sum + t[i] * i) % 1000000007 end
  -- strings: build, gsub, find, format
  local parts = {}
  for i = 1, size // 4 do
    parts[#parts + 1] = string.format("%d:%s", rand(1000), string.rep(string.char(97 + rand(26)), 1 + rand(5)))
  end
  local text = table.concat(parts, ",")
  local replaced, n = text:gsub("(%d+):(%a+)", function(d, w) return w:upper() .. d end)
  local words = 0
  for _ in replaced:gmatch("%u+") do words = words + 1 end
  -- closures and a coroutine generator
  local acc = 0
  local gen = coroutine.wrap(function()
    for i = 1, size do coroutine.yield(i * i % 97) end
  end)
  for _ = 1, size do acc = acc + gen() end
  local adders = {}
  for i = 1, 50 do adders[i] = function(x) return x + i end end
  local v = 0
  for i = 1, size do v = adders[i % 50 + 1](v) % 65536 end
  -- associative tables
  local counts = {}
  for i = 1, size do
    local k = "k" .. rand(200)
    counts[k] = (counts[k] or 0) + 1
  end
  local keys = {}
  for k in pairs(counts) do keys[#keys + 1] = k end
  table.sort(keys)
  local ksum = 0
  for i, k in ipairs(keys) do ksum = (ksum + i * counts[k]) % 1000003 end
  -- floating point
  local x = 0.0
  for i = 1, size do x = x + math.sin(i) * math.sqrt(i) end
  io.write(string.format("round %d: sum %d text %d %08x n %d words %d acc %d v %d keys %d %d fib %d x %.6f\n",
    r, sum, #text, checksum(replaced), n, words, acc, v, #keys, ksum, fib(18), x))
  io.stdout:flush()
end

local r = 1
while rounds == 0 or r <= rounds do
  round(r)
  r = r + 1
end
