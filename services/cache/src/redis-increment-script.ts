/**
 * Increment for the Redis backend, atomic because Redis runs a script alone, and one round trip
 * (EVALSHA through ioredis' defineCommand). An entry is the 8-byte expiry header followed by the
 * value (entry-codec); a counter's value is its decimal digits, at most 16 of them, within
 * ±(2^53 - 1) (the same rule as counter.ts). Lua numbers are doubles, exact in that range.
 *
 * KEYS[1] the entry's key; ARGV[1] delta; ARGV[2] ttl in ms ('0': none); ARGV[3] the header of a
 * counter this call creates. Returns { new value as decimal text, the entry's header }, or the
 * error NOTCOUNTER / OUTOFRANGE with the entry unchanged.
 */
export const INCREMENT_SCRIPT = `
local limit = 9007199254740991
local delta = tonumber(ARGV[1])
local stored = redis.call('GET', KEYS[1])
local header = ARGV[3]
local current = 0
if stored then
  header = string.sub(stored, 1, 8)
  local digits = string.sub(stored, 9)
  local unsigned = string.gsub(digits, '^%-', '')
  if #stored < 8 or #unsigned == 0 or #unsigned > 16 or not string.match(unsigned, '^%d+$') then
    return redis.error_reply('NOTCOUNTER the value is not a counter')
  end
  current = tonumber(digits)
  if math.abs(current) > limit then return redis.error_reply('NOTCOUNTER the value is not a counter') end
end
local value = current + delta
if math.abs(value) > limit then return redis.error_reply('OUTOFRANGE the counter would leave the safe range') end
local text = string.format('%d', value)
if stored then
  redis.call('SET', KEYS[1], header .. text, 'KEEPTTL')
elseif ARGV[2] == '0' then
  redis.call('SET', KEYS[1], header .. text)
else
  redis.call('SET', KEYS[1], header .. text, 'PX', ARGV[2])
end
return { text, header }
`;
