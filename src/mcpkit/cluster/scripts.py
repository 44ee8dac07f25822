"""The Lua scripts a shared session runs in Redis: each one round trip, atomic.

Keys of one session share the hash tag `{sid}`: `s` (the record, a hash), `e` (the index of its events,
a list of "seq NL stream NL flag NL size", oldest first, seq contiguous from `first`), `d:<stream>` (the
data of a stream's events, a hash seq -> data), `u` (the URIs it subscribed to). Record fields: `v`
(the agreed version; empty until the initialize response), `caps`, `info` (the client's, JSON), `p`
(the principal it is bound to), `lvl`, `seq` (the last event's number), `first` (the oldest kept),
`gend` (the last event a standalone GET took for delivery), `gown` (the token of the standalone GET
that holds the session's stream), `ur` (see `_INDEX`), `g:<method>` (see CATCH_UP), `bytes` (the size
of the indexed events), `rq:<id>` (the worker serving a request), `inf` (how many requests are in flight),
`st:<stream>` (the id of the request whose stream is still open) and `as:<id>` (a request of ours to this
session's client: the worker awaiting its answer).

A stream's data is one key so that Redis itself drops it `ended_retention` after its final event,
busy session or idle; an index entry whose data is gone reads as dropped ('x', 'X' for a final), so a
resumption from before it is expired. The `d:` keys are named in the scripts from the session's key
prefix (ARGV), not passed as KEYS: they share the `{sid}` tag, so they are in the slot of the KEYS.
"""

from __future__ import annotations

__all__ = [
    "BEGIN",
    "CATCH_UP",
    "CLAIM",
    "CREATE",
    "END",
    "FINISH",
    "READ",
    "SHED",
    "STORE",
    "SUBSCRIBE",
    "SUBSCRIBERS",
    "TAKE_ASKED",
    "TOUCH",
]

# An index entry: seq, stream, flag, size of the data.
_ENTRY = "local function entry(raw) return string.match(raw, '^(%d+)\\n([^\\n]*)\\n(%a)\\n(%d+)$') end\n"

# KEYS: s, sessions, chg; ARGV: now_ms, idle_ms, max_sessions, sid, principal
# (a new session has heard every list_changed sent before it: CATCH_UP)
CREATE = """
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[2], ARGV[1] + ARGV[2], ARGV[4])
redis.call('HSET', KEYS[1], 'v', '', 'p', ARGV[5], 'seq', 0, 'first', 1, 'gend', 0)
local counts = redis.call('HGETALL', KEYS[3])
for i = 1, #counts, 2 do redis.call('HSET', KEYS[1], 'g:' .. counts[i], counts[i + 1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""

# `sub:<uri>` (a sorted set) lists the sessions subscribed to the URI, each scored by a time its session
# cannot outlive: past it, the entry is dropped; the set expires with its last live entry. The
# record's `ur` is when the session's entries were last scored (each at `ur` + 1.5 idle_ms, at least):
# they are scored again once `ur` is half an idle time old, so a live session is never dropped.
_INDEX = """
local function index(key, sid, score, now)
  redis.call('ZADD', key, score, sid)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  local top = redis.call('ZRANGE', key, -1, -1, 'WITHSCORES')
  if top[2] then redis.call('PEXPIREAT', key, math.ceil(tonumber(top[2]))) end
end
"""

# The session's idle time restarts (KEYS: s, e, u, sessions, d:<standalone>; ARGV: now_ms, idle_ms, sid,
# ..., subscription key prefix as the last). Events waiting for the next GET live as long as the
# session; the index of ended streams does not.
_KEEP = (
    _INDEX
    + """
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[3], ARGV[2])
if redis.call('PEXPIRE', KEYS[5], ARGV[2]) == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[2]) end
redis.call('ZADD', KEYS[4], ARGV[1] + ARGV[2], ARGV[3])
local ur = redis.call('HGET', KEYS[1], 'ur')
if ur and tonumber(ARGV[1]) - tonumber(ur) >= tonumber(ARGV[2]) / 2 then
  local score = tonumber(ARGV[1]) + math.floor(tonumber(ARGV[2]) * 3 / 2)
  for _, uri in ipairs(redis.call('SMEMBERS', KEYS[3])) do
    index(ARGV[#ARGV] .. uri, ARGV[3], score, ARGV[1])
  end
  redis.call('HSET', KEYS[1], 'ur', ARGV[1])
end
"""
)

# KEYS: s, e, u, sessions, d:<standalone>; ARGV: now_ms, idle_ms, sid, principal, request field ('' for none),
# worker, stream ('' for none), request id (JSON), max_in_flight, subscription key prefix
# -> nil (no such session, or not its principal's), 'dup', 'busy' (max_in_flight requests of the
# session in flight), or {v, caps, info, lvl}
BEGIN = (
    """
local rec = redis.call('HMGET', KEYS[1], 'v', 'caps', 'info', 'p', 'lvl', 'inf')
if not rec[1] or rec[1] == '' or rec[4] ~= ARGV[4] then return nil end
if ARGV[5] ~= '' then
  if redis.call('HEXISTS', KEYS[1], ARGV[5]) == 1 then return 'dup' end
  if tonumber(rec[6] or '0') >= tonumber(ARGV[9]) then return 'busy' end
  redis.call('HSET', KEYS[1], ARGV[5], ARGV[6])
  redis.call('HINCRBY', KEYS[1], 'inf', 1)
  if ARGV[7] ~= '' then redis.call('HSET', KEYS[1], 'st:' .. ARGV[7], ARGV[8]) end
end
"""
    + _KEEP
    + """
return {rec[1], rec[2] or '{}', rec[3] or '{}', rec[5] or ''}
"""
)

# KEYS: s, e, u, sessions, d:<standalone>; ARGV: now_ms, idle_ms, sid, subscription key prefix -> 1, or 0
# when there is no such session
TOUCH = (
    """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
"""
    + _KEEP
    + """
return 1
"""
)

_OPEN = """
local function open_streams(record)
  local open = {}
  for _, f in ipairs(redis.call('HKEYS', record)) do
    if string.sub(f, 1, 3) == 'st:' then open[string.sub(f, 4)] = true end
  end
  return open
end
"""

# The size of the indexed events whose data is still kept.
_KEPT = """
local function kept(index, kp)
  local size = 0
  for _, raw in ipairs(redis.call('LRANGE', index, 0, -1)) do
    local seq, stream, _, len = entry(raw)
    if redis.call('HEXISTS', kp .. 'd:' .. stream, seq) == 1 then size = size + tonumber(len) end
  end
  return size
end
"""

# Appends one event to the log (KEYS: s, e, channel; `lim`: idle_ms, max_events, max_bytes, ended_ms, the
# session's key prefix, the standalone stream), and the channel hears which stream it is on. A final
# event gives its stream's data `ended_ms` to live; the index then too once nothing else of the session
# is kept for later (no open stream, no standalone event). The oldest go first: those whose data is
# gone, then any past either cap (the newest is always kept).
_APPEND = (
    _ENTRY
    + _OPEN
    + _KEPT
    + """
local function append(stream, data, flag, lim)
  local max_events, max_bytes, kp = tonumber(lim[2]), tonumber(lim[3]), lim[5]
  local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
  if redis.call('EXISTS', KEYS[2]) == 0 then redis.call('HSET', KEYS[1], 'first', seq, 'bytes', 0) end
  local n = redis.call('RPUSH', KEYS[2], seq .. '\\n' .. stream .. '\\n' .. flag .. '\\n' .. #data)
  local held = kp .. 'd:' .. stream
  redis.call('HSET', held, seq, data)
  redis.call('PEXPIRE', held, flag == 'f' and lim[4] or lim[1])
  local size = redis.call('HINCRBY', KEYS[1], 'bytes', #data)
  local live = size
  if size > max_bytes then live = kept(KEYS[2], kp) end
  local dropped = 0
  while n > 1 do
    local at, on, _, len = entry(redis.call('LINDEX', KEYS[2], 0))
    local here = redis.call('HEXISTS', kp .. 'd:' .. on, at) == 1
    if here and n <= max_events and live <= max_bytes then break end
    redis.call('LPOP', KEYS[2])
    size = size - tonumber(len)
    if here then
      redis.call('HDEL', kp .. 'd:' .. on, at)
      live = live - tonumber(len)
    end
    n = n - 1
    dropped = dropped + 1
  end
  if dropped > 0 then
    redis.call('HINCRBY', KEYS[1], 'first', dropped)
    redis.call('HSET', KEYS[1], 'bytes', size)
  end
  local ttl = lim[1]
  if flag == 'f' and redis.call('EXISTS', kp .. 'd:' .. lim[6]) == 0 then
    if next(open_streams(KEYS[1])) == nil then ttl = lim[4] end
  end
  redis.call('PEXPIRE', KEYS[2], ttl)
  redis.call('PUBLISH', KEYS[3], stream)
  return seq
end
"""
)

# KEYS: s, e, channel; ARGV: stream, data, flag ('f' final, 'm' message), idle_ms, max_events, max_bytes,
# ended_ms, the session's key prefix, the standalone stream
# -> the event's seq; 0 when the session is gone; -1 when the stream was already finished.
STORE = (
    _APPEND
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[3] == 'f' then
  local rid = redis.call('HGET', KEYS[1], 'st:' .. ARGV[1])
  if not rid then return -1 end
  redis.call('HDEL', KEYS[1], 'st:' .. ARGV[1])
  if redis.call('HDEL', KEYS[1], 'rq:' .. rid) == 1 then redis.call('HINCRBY', KEYS[1], 'inf', -1) end
end
return append(ARGV[1], ARGV[2], ARGV[3], {ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8], ARGV[9]})
"""
)

# `chg` counts each list_changed method's notifications, for the whole cluster; a session's `g:<method>`
# is the count it has heard. KEYS: s, e, channel, chg; ARGV: idle_ms, max_events, max_bytes, ended_ms, the
# session's key prefix, the standalone stream
# -> the notifications stored on the session's standalone stream (one per method it has not heard yet).
CATCH_UP = (
    _APPEND
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local counts = redis.call('HGETALL', KEYS[4])
local stored = 0
for i = 1, #counts, 2 do
  local method, count = counts[i], tonumber(counts[i + 1])
  if (tonumber(redis.call('HGET', KEYS[1], 'g:' .. method)) or 0) < count then
    redis.call('HSET', KEYS[1], 'g:' .. method, count)
    append(ARGV[6], '{"jsonrpc":"2.0","method":"' .. method .. '"}', 'm', ARGV)
    stored = stored + 1
  end
end
return stored
"""
)

# KEYS: s, e; ARGV: after (a seq), token ('' for none), the session's key prefix
# -> nil (no such session), 'over' (another standalone GET holds the stream), or {seq, first, events after
# `after`...}, each "seq NL stream NL flag NL data" (an event whose data is gone has flag 'x', 'X' if it
# was its stream's last, and no data). With a token, what is returned is taken for delivery: a later GET
# starts after it.
READ = (
    _ENTRY
    + """
local at = redis.call('HMGET', KEYS[1], 'seq', 'first', 'gown')
if not at[1] then return nil end
if ARGV[2] ~= '' then
  if at[3] ~= ARGV[2] then return 'over' end
  redis.call('HSET', KEYS[1], 'gend', at[1])
end
local first = tonumber(at[2])
if redis.call('EXISTS', KEYS[2]) == 0 then first = tonumber(at[1]) + 1 end
local start = tonumber(ARGV[1]) - first + 1
if start < 0 then start = 0 end
local events = {at[1], tostring(first)}
for _, raw in ipairs(redis.call('LRANGE', KEYS[2], start, -1)) do
  local seq, stream, flag = entry(raw)
  local data = redis.call('HGET', ARGV[3] .. 'd:' .. stream, seq)
  if not data then
    data = ''
    flag = flag == 'f' and 'X' or 'x'
  end
  table.insert(events, seq .. '\\n' .. stream .. '\\n' .. flag .. '\\n' .. data)
end
return events
"""
)

# KEYS: s; ARGV: token -> nil (no such session) or the last event a standalone GET took; from now on
# the GET with `token` holds the session's standalone stream (an older one's READ gets 'over').
CLAIM = """
local gend = redis.call('HGET', KEYS[1], 'gend')
if not gend then return nil end
redis.call('HSET', KEYS[1], 'gown', ARGV[1])
return tonumber(gend)
"""

# KEYS: s, e, u, sessions; ARGV: sid, subscription key prefix, the session's key prefix, the standalone
# stream -> the workers serving its requests
END = (
    _ENTRY
    + """
local owners = {}
local streams = {[ARGV[4]] = true}
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  local kind = string.sub(f, 1, 3)
  if kind == 'rq:' then table.insert(owners, redis.call('HGET', KEYS[1], f)) end
  if kind == 'st:' then streams[string.sub(f, 4)] = true end
end
for _, raw in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local _, stream = entry(raw)
  streams[stream] = true
end
for stream in pairs(streams) do redis.call('DEL', ARGV[3] .. 'd:' .. stream) end
for _, uri in ipairs(redis.call('SMEMBERS', KEYS[3])) do
  redis.call('ZREM', ARGV[2] .. uri, ARGV[1])
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
return owners
"""
)

# KEYS: s, e; ARGV: the session's key prefix, the standalone stream, 'count' or 'shed'
# -> the size of the session's events whose data is kept; with 'shed', the data of its ended streams
# (neither open nor the standalone one) goes first, before their retention is up.
SHED = (
    _ENTRY
    + _OPEN
    + _KEPT
    + """
if ARGV[3] == 'shed' then
  local open = open_streams(KEYS[1])
  open[ARGV[2]] = true
  for _, raw in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
    local _, stream = entry(raw)
    if not open[stream] then
      redis.call('DEL', ARGV[1] .. 'd:' .. stream)
      open[stream] = true
    end
  end
end
if redis.call('EXISTS', KEYS[2]) == 0 and redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'bytes', 0)
end
return kept(KEYS[2], ARGV[1])
"""
)

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

# KEYS: s, u, sub:<uri>; ARGV: now_ms, idle_ms, sid, uri, limit ('' for none)
# -> 0 when the session already has `limit` other subscriptions, else 1
SUBSCRIBE = (
    _INDEX
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 1 end
local limit = tonumber(ARGV[5])
if limit and redis.call('SISMEMBER', KEYS[2], ARGV[4]) == 0 and redis.call('SCARD', KEYS[2]) >= limit then
  return 0
end
redis.call('SADD', KEYS[2], ARGV[4])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('HSETNX', KEYS[1], 'ur', ARGV[1])
local ur = tonumber(redis.call('HGET', KEYS[1], 'ur'))
index(KEYS[3], ARGV[3], ur + math.floor(tonumber(ARGV[2]) * 3 / 2), ARGV[1])
return 1
"""
)

# KEYS: sub:<uri>; ARGV: now_ms -> the sessions subscribed to the URI that may still live
SUBSCRIBERS = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
return redis.call('ZRANGE', KEYS[1], 0, -1)
"""
