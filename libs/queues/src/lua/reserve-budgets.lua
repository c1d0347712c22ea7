-- Reserves a call's estimated cost against every budget that applies to it, or none: a blocking budget
-- whose spent + reserved + estimate would pass its limit refuses the call, and nothing is reserved.
-- Amounts are integers of nano-USD, so that sums never drift.
--
-- KEYS[i]          budget i's hash for its current period (fields `spent`, `reserved`)
-- ARGV[1]          the estimate
-- ARGV[1 + 3i - 2] budget i's limit
-- ARGV[1 + 3i - 1] 1 when budget i blocks, else 0
-- ARGV[1 + 3i]     when budget i's hash expires (unix seconds): after its period
-- Returns {0} when reserved, else {i, spent} of the first budget that refused.
local estimate = tonumber(ARGV[1])
for i = 1, #KEYS do
  if ARGV[1 + 3 * i - 1] == '1' then
    local v = redis.call('HMGET', KEYS[i], 'spent', 'reserved')
    local spent = tonumber(v[1] or '0')
    if spent + tonumber(v[2] or '0') + estimate > tonumber(ARGV[1 + 3 * i - 2]) then
      return { i, spent }
    end
  end
end
for i = 1, #KEYS do
  redis.call('HINCRBY', KEYS[i], 'reserved', estimate)
  redis.call('EXPIREAT', KEYS[i], ARGV[1 + 3 * i])
end
return { 0 }
