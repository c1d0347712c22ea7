-- Accepts n span events: checks the backlog bound, numbers the events, marks each pending and records
-- the reservation in the journal, atomically. Sequence numbers are microseconds of Redis time (never
-- below the last one handed out), so marks older than the TTL can be told apart and dropped.
--
-- KEYS[1]          the sequence counter (string)
-- KEYS[2]          the span-write backlog (sorted set of accepted, unwritten sequence numbers)
-- KEYS[3i..3i+2]   for event i of n: its span's pending set, its trace root's pending set (the span's
--                  again for none; '' from older releases), and its organization's pending sorted set
-- KEYS[3n+3]       the reservation journal's index (sorted set of each reservation's first number)
-- KEYS[3n+4]       the reservation journal's events (hash: first number -> the events' pending keys)
-- ARGV[1]          n, the number of events
-- ARGV[2]          the backlog limit; 0 for none
-- ARGV[3]          the backlog horizon in seconds: older entries are dropped from the backlog
-- ARGV[4]          the pending marks' TTL in seconds
-- ARGV[5], ARGV[6] optional: a channel and a message published once the events are accepted (a completion's
--                  answer, which must not reach its caller before its log is marked pending); '' for none
-- ARGV[7]          optional: the events themselves (a JSON array, without their numbers), kept in the
--                  journal under '<first number>:log' until they are written (reservations.ts)
-- Returns the events' sequence numbers, as strings; or the error 'SPAN_BACKLOG_FULL <waiting>', having
-- changed nothing, when the backlog holds the limit or more.
--
-- Entries past the backlog's horizon and marks past their TTL are trimmed when a reservation's numbers cross a
-- multiple of TRIM_EVERY (every call of a large batch, about one in 64 calls of one event): readers leave such
-- marks out by their numbers (waitUntilApplied), so trimming on every call only cost a command or two each
-- time. The organization's set has no TTL of its own for the same reason: refreshing it was one more.
local n = tonumber(ARGV[1])
local limit = tonumber(ARGV[2])
local horizon = tonumber(ARGV[3])
local ttl = tonumber(ARGV[4])
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local backlog = KEYS[2]
local TRIM_EVERY = 64
local last = tonumber(redis.call('GET', KEYS[1]) or '0')
-- Never below the clock: a Redis that lost the counter still hands out increasing numbers.
local seq = math.max(now, last + 1)
local trim = math.floor((seq + n - 1) / TRIM_EVERY) ~= math.floor((seq - 1) / TRIM_EVERY)
if trim then redis.call('ZREMRANGEBYSCORE', backlog, '-inf', string.format('%d', now - horizon * 1000000)) end
if limit > 0 then
  -- Refused before anything is numbered or marked: a refused request leaves no trace.
  local waiting = redis.call('ZCARD', backlog)
  if waiting >= limit then return redis.error_reply('SPAN_BACKLOG_FULL ' .. waiting) end
end
redis.call('SET', KEYS[1], string.format('%d', seq + n - 1))
local out = {}
local orgs = {}
for i = 1, n do
  local s = string.format('%d', seq + i - 1)
  out[i] = s
  -- A span with no root of its own names its set twice: marked once.
  for j, k in ipairs({KEYS[3 * i], KEYS[3 * i + 1]}) do
    if k ~= '' and (j == 1 or k ~= KEYS[3 * i]) then
      redis.call('SADD', k, s)
      redis.call('EXPIRE', k, ttl)
    end
  end
  local org = KEYS[3 * i + 2]
  redis.call('ZADD', org, s, s)
  redis.call('ZADD', backlog, s, s)
  orgs[org] = true
end
if trim then
  for org in pairs(orgs) do redis.call('ZREMRANGEBYSCORE', org, '-inf', string.format('%d', now - ttl * 1000000)) end
end
-- The reservation's journal entry: its first number, and its events' pending keys in order (and the
-- events, when kept).
local first = string.format('%d', seq)
redis.call('ZADD', KEYS[3 * n + 3], seq, first)
if ARGV[7] then
  redis.call('HSET', KEYS[3 * n + 4], first, table.concat(KEYS, '\n', 3, 3 * n + 2), first .. ':log', ARGV[7])
else
  redis.call('HSET', KEYS[3 * n + 4], first, table.concat(KEYS, '\n', 3, 3 * n + 2))
end
if ARGV[5] and ARGV[5] ~= '' then redis.call('PUBLISH', ARGV[5], ARGV[6]) end
return out
