-- Replaces a call's reservation with its real cost (0 when the call failed or was not made) in each
-- budget's hash, and claims the alert shares the new spend reached and no call has claimed this period.
-- Amounts are integers of nano-USD.
--
-- KEYS[i]          budget i's hash for the period the reservation was made in
-- ARGV[1]          the reservation (the estimate)
-- ARGV[2]          the real cost
-- ARGV[2 + i]      budget i's alert shares as `share=threshold` pairs separated by commas ('' for none)
-- Returns, for each budget, its spent after the call and the shares newly claimed: {spent, 'share,share'}.
local estimate = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local out = {}
for i = 1, #KEYS do
  local reserved = redis.call('HINCRBY', KEYS[i], 'reserved', -estimate)
  -- A reservation from before the hash expired (a call across its period's end) is not owed any more.
  if reserved < 0 then redis.call('HSET', KEYS[i], 'reserved', 0) end
  local spent = redis.call('HINCRBY', KEYS[i], 'spent', cost)
  if redis.call('TTL', KEYS[i]) < 0 then redis.call('EXPIRE', KEYS[i], 86400 * 32) end
  local claimed = {}
  for share, threshold in string.gmatch(ARGV[2 + i], '([^=,]+)=([^,]+)') do
    if cost > 0 and spent >= tonumber(threshold) and redis.call('HSETNX', KEYS[i], 'alert:' .. share, 1) == 1 then
      claimed[#claimed + 1] = share
    end
  end
  out[i] = { spent, table.concat(claimed, ',') }
end
return out
