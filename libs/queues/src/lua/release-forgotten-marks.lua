-- Releases the marks of one pending set (a span's or a trace root's set, or an organization's sorted set)
-- at or below the cutoff of events forgotten as lost (backlog.ts): when they were forgotten, no job was
-- left to write them, and every event accepted since is numbered above the cutoff. Marks that are not
-- sequence numbers (an evaluation held pending) are left.
--
-- KEYS[1]  the pending set
-- ARGV[1]  the cutoff
-- ARGV[2]  for a sorted set, the score after which to read (exclusive), '-inf' at first
-- ARGV[3]  for a sorted set, how many marks to read in this call
-- Returns {marks released, marks read, the last score read}: a sorted set read in full when read < ARGV[3].
local kind = redis.call('TYPE', KEYS[1])['ok']
local cutoff = tonumber(ARGV[1])
local marks, last
if kind == 'set' then
  marks = redis.call('SMEMBERS', KEYS[1])
elseif kind == 'zset' then
  local from = ARGV[2] == '-inf' and '-inf' or '(' .. ARGV[2]
  marks = redis.call('ZRANGEBYSCORE', KEYS[1], from, ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
  if #marks > 0 then last = redis.call('ZSCORE', KEYS[1], marks[#marks]) end
else
  return {0, 0, ''}
end
local released = 0
for _, mark in ipairs(marks) do
  if string.match(mark, '^%d+$') and tonumber(mark) <= cutoff then
    if kind == 'set' then redis.call('SREM', KEYS[1], mark) else redis.call('ZREM', KEYS[1], mark) end
    released = released + 1
  end
end
return {released, kind == 'zset' and #marks or 0, last or ''}
