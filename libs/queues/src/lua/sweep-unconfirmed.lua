-- Releases the pending marks of reservations left in the journal longer than the grace (their job never
-- reached the queue), at most ARGV[2] reservations per call. The pending keys come out of the journal
-- rather than KEYS: on a Redis Cluster they share the slot of KEYS, as every key under the prefix's hash tag does.
--
-- KEYS[1]  the reservation journal's index (sorted set of each reservation's first number)
-- KEYS[2]  the reservation journal's events (hash: first number -> the events' pending keys, 3 per event)
-- KEYS[3]  the span-write backlog (sorted set)
-- ARGV[1]  the grace in seconds
-- ARGV[2]  the most reservations to release in this call
-- A reservation that keeps its events ('<first>:log', a completion's log) is left alone: they are queued
-- rather than released (reservations.ts, recoverKeptLogs).
-- Returns {reservations looked at, events released, reservations left for keeping their events}.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local stale = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - tonumber(ARGV[1]) * 1000000), 'LIMIT', 0, tonumber(ARGV[2]))
local cleared = 0
local kept = 0
for _, first in ipairs(stale) do
  local packed = redis.call('HGET', KEYS[2], first)
  if redis.call('HEXISTS', KEYS[2], first .. ':log') == 1 then
    kept = kept + 1
  elseif packed then
    local k = {}
    for key in string.gmatch(packed .. '\n', '([^\n]*)\n') do k[#k + 1] = key end
    for e = 0, #k / 3 - 1 do
      local s = string.format('%d', tonumber(first) + e)
      for _, set in ipairs({k[3 * e + 1], k[3 * e + 2]}) do
        if set ~= '' then redis.call('SREM', set, s) end
      end
      redis.call('ZREM', k[3 * e + 3], s)
      redis.call('ZREM', KEYS[3], s)
      cleared = cleared + 1
    end
    redis.call('ZREM', KEYS[1], first)
    redis.call('HDEL', KEYS[2], first)
  else
    redis.call('ZREM', KEYS[1], first)
  end
end
return {#stale, cleared, kept}
