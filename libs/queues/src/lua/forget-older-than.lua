-- Removes from a sorted set of sequence numbers (microseconds of Redis time) those older than ARGV[1].
--
-- KEYS[1]  the sorted set (the span-write backlog)
-- ARGV[1]  the age in seconds
-- Returns how many it removed.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
return redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', string.format('%d', now - tonumber(ARGV[1]) * 1000000))
