"""The Lua scripts a shared session runs in Redis: each one round trip, atomic.

Keys of one session share the hash tag `{sid}`: `s` (the record, a hash), `e` (its events, a list of
"seq NL stream NL flag NL data", oldest first), `u` (the URIs it subscribed to). Record fields: `v`
(the agreed version; empty until the initialize response), `caps`, `info` (the client's, JSON), `p`
(the principal it is bound to), `lvl`, `seq` (the last event's number), `first` (the oldest kept),
`gend` (the last standalone event a GET delivered), `bytes` (the size of the kept events), `rq:<id>`
(the worker serving a request), `inf` (how many requests are in flight), `st:<stream>` (the id of the
request whose stream is still open) and `as:<id>` (a request of ours to this session's client: the
worker awaiting its answer).
"""

from __future__ import annotations

__all__ = ["BEGIN", "CREATE", "END", "FINISH", "READ", "STORE", "TAKE_ASKED"]

# KEYS: s, sessions; ARGV: now_ms, idle_ms, max_sessions, sid, principal
CREATE = """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[2], ARGV[1] + ARGV[2], ARGV[4])
redis.call('HSET', KEYS[1], 'v', '', 'p', ARGV[5], 'seq', 0, 'first', 1, 'gend', 0)
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

# KEYS: s, e, u, sessions; ARGV: now_ms, idle_ms, sid, principal, request field ('' for none),
# worker, stream ('' for none), request id (JSON), max_in_flight
# -> nil (no such session, or not its principal's), 'dup', 'busy' (max_in_flight requests of the
# session in flight), or {v, caps, info, lvl}
BEGIN = """
local rec = redis.call('HMGET', KEYS[1], 'v', 'caps', 'info', 'p', 'lvl', 'inf')
if not rec[1] or rec[1] == '' or rec[4] ~= ARGV[4] then return nil end
if ARGV[5] ~= '' then
  if redis.call('HEXISTS', KEYS[1], ARGV[5]) == 1 then return 'dup' end
  if tonumber(rec[6] or '0') >= tonumber(ARGV[9]) then return 'busy' end
  redis.call('HSET', KEYS[1], ARGV[5], ARGV[6])
  redis.call('HINCRBY', KEYS[1], 'inf', 1)
  if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'st:' .. ARGV[7], ARGV[8]) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
if redis.call('EXISTS', KEYS[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
redis.call('ZADD', KEYS[4], ARGV[1] + ARGV[2], ARGV[3])
return {rec[1], rec[2] or '{}', rec[3] or '{}', rec[5] or ''}
"""

# KEYS: s, e, channel; ARGV: stream, data, flag ('f' final, 'm' message), ttl_ms, max_events, max_bytes
# -> the event's seq; 0 when the session is gone; -1 when the stream was already finished.
# The oldest events go first past either cap (the newest is always kept).
STORE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[3] == 'f' then
  local rid = redis.call('HGET', KEYS[1], 'st:' .. ARGV[1])
  if not rid then return -1 end
  redis.call('HDEL', KEYS[1], 'st:' .. ARGV[1])
  if redis.call('HDEL', KEYS[1], 'rq:' .. rid) == 1 then redis.call('HINCRBY', KEYS[1], 'inf', -1) end
end
local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
local entry = seq .. '\\n' .. ARGV[1] .. '\\n' .. ARGV[3] .. '\\n' .. ARGV[2]
local n = redis.call('RPUSH', KEYS[2], entry)
local size = redis.call('HINCRBY', KEYS[1], 'bytes', #entry)
local dropped = 0
while n > 1 and (n > tonumber(ARGV[5]) or size > tonumber(ARGV[6])) do
  size = size - #redis.call('LPOP', KEYS[2])
  n = n - 1
  dropped = dropped + 1
end
if dropped > 0 then
  redis.call('HINCRBY', KEYS[1], 'first', dropped)
  redis.call('HSET', KEYS[1], 'bytes', size)
end
redis.call('PEXPIRE', KEYS[2], ARGV[4])
redis.call('PUBLISH', KEYS[3], ARGV[1])
return seq
"""

# KEYS: s, e; ARGV: after (a seq) -> nil (no such session) or {seq, first, events after `after`...}
READ = """
local at = redis.call('HMGET', KEYS[1], 'seq', 'first')
if not at[1] then return nil end
local start = tonumber(ARGV[1]) - tonumber(at[2]) + 1
if start < 0 then start = 0 end
local events = redis.call('LRANGE', KEYS[2], start, -1)
table.insert(events, 1, at[2])
table.insert(events, 1, at[1])
return events
"""

# KEYS: s, e, u, sessions; ARGV: sid, subscription key prefix -> the workers serving its requests
END = """
local owners = {}
local fields = redis.call('HKEYS', KEYS[1])
for _, f in ipairs(fields) do
  if string.sub(f, 1, 3) == 'rq:' then table.insert(owners, redis.call('HGET', KEYS[1], f)) end
end
for _, uri in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  redis.call('SREM', ARGV[2] .. uri, ARGV[1])
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
return owners
"""

# KEYS: s; ARGV: the `as:<id>` field -> the worker awaiting that answer (nil: none), the field removed
TAKE_ASKED = """
local worker = redis.call('HGET', KEYS[1], ARGV[1])
if worker then redis.call('HDEL', KEYS[1], ARGV[1]) end
return worker
"""

# KEYS: s; ARGV: request field, stream field -> a request answered without a stored stream is no
# longer in flight
FINISH = """
redis.call('HDEL', KEYS[1], ARGV[2])
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then redis.call('HINCRBY', KEYS[1], 'inf', -1) end
"""
