-- Replaces a call's reservation with its real cost (0 when the call failed or was not made) in each
-- budget's hash. Amounts are integers of nano-USD.
--
-- KEYS[i]          budget i's hash for the period the reservation was made in
-- ARGV[1]          the reservation (the estimate)
-- ARGV[2]          the real cost
-- Returns each budget's spent after the call.
local estimate = tonumber(ARGV[1])
local cost = tonumber(ARGV[2])
local out = {}
for i = 1, #KEYS do
  local reserved = redis.call('HINCRBY', KEYS[i], 'reserved', -estimate)
  -- A reservation from before the hash expired (a call across its period's end) is not owed any more.
  if reserved < 0 then redis.call('HSET', KEYS[i], 'reserved', 0) end
  out[i] = redis.call('HINCRBY', KEYS[i], 'spent', cost)
  if redis.call('TTL', KEYS[i]) < 0 then redis.call('EXPIRE', KEYS[i], 86400 * 32) end
end
return out
