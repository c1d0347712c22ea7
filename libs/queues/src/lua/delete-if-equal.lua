-- Deletes a key only if it still holds the value read earlier: a newer value, written meanwhile by another
-- process, stays for the next reader.
--
-- KEYS[1]  the key
-- ARGV[1]  the value read
-- Returns 1 if it deleted the key, 0 if not.
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
