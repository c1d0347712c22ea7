-- Takes out of the span-write backlog the events accepted before a cutoff (their job is gone: see
-- backlog.ts), and, when it took any, records the cutoff, so that their pending marks are released next
-- (pending-marks.ts's releaseForgottenMarks).
--
-- KEYS[1]  the span-write backlog (sorted set of sequence numbers, which are microseconds of Redis time)
-- KEYS[2]  where the cutoff is recorded (string)
-- ARGV[1]  the age in seconds: events accepted longer ago are taken
-- Returns how many it took.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local cutoff = string.format('%d', now - tonumber(ARGV[1]) * 1000000)
local taken = redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
if taken > 0 then redis.call('SET', KEYS[2], cutoff) end
return taken
