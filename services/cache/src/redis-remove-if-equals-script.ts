/**
 * RemoveIfEquals for the Redis backend: the read, the comparison and the DEL run as one script,
 * which Redis runs alone, so no write can land between them. One round trip (EVALSHA through
 * ioredis' defineCommand). An entry is the 8-byte expiry header followed by the value
 * (entry-codec); Lua strings compare bytes. The DEL raises the keyspace notification that
 * Subscribe announces as REMOVED.
 *
 * KEYS[1] the entry's key; ARGV[1] the value expected. Returns 1 when it removed the entry, else 0.
 */
export const REMOVE_IF_EQUALS_SCRIPT = `
local stored = redis.call('GET', KEYS[1])
if stored and #stored >= 8 and string.sub(stored, 9) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
`;
