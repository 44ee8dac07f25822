"""The Lua scripts a shared session runs in Redis: each one round trip, atomic.

Keys of one session share the hash tag `{sid}`, so each script runs in one slot of a Redis Cluster too: `s`
(the record, a hash), `e` (the index of its events, a list of "seq NL stream NL flag NL size NL epoch",
oldest first, seq contiguous from `first`; the epoch is the primary's clock in ms when the event was stored,
so an id issued again after a failover rewound `seq` differs from the one a client holds), `d:<stream>` (the
data of a stream's events, a hash seq -> data), `u` (the URIs it subscribed to). Record fields: `v` (the
agreed version; empty until the initialize response), `caps`, `info` (the client's, JSON), `p` (the
principal it is bound to), `lvl`, `seq` (the last event's number), `first` (the oldest kept), `gend` (the
last event a standalone GET took for delivery), `gown` (the token of the standalone GET that holds the
session's stream), `ur` (see `INDEX`), `g:<method>` and `w:<method>` (see CATCH_UP), `bytes` (the size
of the indexed events), `rq:<id>` (the worker serving a request), `inf` (how many requests are in
flight), `st:<stream>` (the id of the request whose stream is still open) and `as:<id>` (a request of ours
to this session's client: the worker awaiting its answer).

A stream's data is one key so that Redis itself drops it `ended_retention` after its final event, busy
session or idle; an index entry whose data is gone reads as dropped ('x', 'X' for a final), so a resumption
from before it is expired. The `d:` keys are named in the scripts from the session's key prefix (ARGV), not
passed as KEYS: they share the `{sid}` tag, so they are in the slot of the KEYS.

No script touches a key of another slot: the cluster-wide keys (`{g}:sessions`, `{g}:chg`, see `ADMIT`) and
a URI's subscribers (`sub:<uri>`, see `INDEX`) are written by their own commands, and a session's wake-ups
go out on its own shard channel (SPUBLISH, Redis 7).
"""

from __future__ import annotations

__all__ = [
    "ADMIT",
    "BEGIN",
    "CATCH_UP",
    "CLAIM",
    "CREATE",
    "END",
    "FINISH",
    "INDEX",
    "OPEN",
    "READ",
    "SHED",
    "STORE",
    "SUBSCRIBE",
    "SUBSCRIBERS",
    "TAKE_ASKED",
    "TOUCH",
]

# An index entry: seq, stream, flag, size of the data, epoch.
_ENTRY = (
    "local function entry(raw) return string.match(raw, '^(%d+)\\n([^\\n]*)\\n(%a)\\n(%d+)\\n?(%d*)$') end\n"
)

# The cluster-wide admission of a new session, one key slot of its own (`{g}`): KEYS: sessions, chg;
# ARGV: now_ms, idle_ms, max_sessions, sid -> 0 at max_sessions, else the list_changed counts (see
# CATCH_UP) as {method, count, ...}. `sessions` scores each session by when it expires; requests do not
# touch it (their scores are refreshed in batches off the request path, see state.SessionIndex).
ADMIT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[1] + ARGV[2], ARGV[4])
return redis.call('HGETALL', KEYS[2])
"""

# `sub:<uri>` (a sorted set, a key of its own) lists the sessions subscribed to the URI, each scored by
# a time its session cannot outlive: past it, the entry is dropped; the set expires with its last live
# entry. The record's `ur` is when the session's entries were last scored (each at `ur` + 1.5 idle_ms,
# at least): a request finding `ur` half an idle time old gets the session's URIs back to score again
# (state.py does, one command per URI), so a live session is never dropped.
# KEYS: sub:<uri>; ARGV: sid, score, now_ms
INDEX = """
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[3])
local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if top[2] then redis.call('PEXPIREAT', KEYS[1], math.ceil(tonumber(top[2]))) end
"""

# The session's idle time restarts (KEYS: s, e, u, d:<standalone>; ARGV: now_ms, idle_ms, ...) -> the
# URIs to score again (see INDEX), mostly none. Events waiting for the next GET live as long as the
# session; the index of ended streams does not.
_KEEP = """
local function keep(now, idle)
  redis.call('PEXPIRE', KEYS[1], idle)
  redis.call('PEXPIRE', KEYS[3], idle)
  if redis.call('PEXPIRE', KEYS[4], idle) == 1 then redis.call('PEXPIRE', KEYS[2], idle) end
  local ur = redis.call('HGET', KEYS[1], 'ur')
  if ur and tonumber(now) - tonumber(ur) >= tonumber(idle) / 2 then
    redis.call('HSET', KEYS[1], 'ur', now)
    return redis.call('SMEMBERS', KEYS[3])
  end
  return {}
end
"""

# KEYS: s, e, u, d:<standalone>; ARGV: now_ms, idle_ms -> 0 when there is no such session, else the URIs
# to score again
TOUCH = (
    _KEEP
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return keep(ARGV[1], ARGV[2])
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
local function append(stream, data, flag, lim, channel)
  local max_events, max_bytes, kp = tonumber(lim[2]), tonumber(lim[3]), lim[5]
  local seq = redis.call('HINCRBY', KEYS[1], 'seq', 1)
  local clock = redis.call('TIME')
  local epoch = string.format('%.0f', tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000))
  if redis.call('EXISTS', KEYS[2]) == 0 then redis.call('HSET', KEYS[1], 'first', seq, 'bytes', 0) end
  local line = seq .. '\\n' .. stream .. '\\n' .. flag .. '\\n' .. #data .. '\\n' .. epoch
  local n = redis.call('RPUSH', KEYS[2], line)
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
  redis.call('SPUBLISH', channel or KEYS[3], stream)
  return {seq, epoch}
end
"""
)

# A new session's record, its initialize in flight (and that request's stream primed, when asked):
# KEYS[1..3] s, e, channel; `a`: idle_ms, principal, request field ('' for none), worker, stream, request
# id (JSON), 'p' to prime, then append's max_events, max_bytes, ended_ms, key prefix, standalone;
# `heard`: field, value pairs of what it has heard (see CATCH_UP): `g:<method>` counts (a new session
# has heard every list_changed sent before it) and, with a visibility hook, `w:<method>` views
# -> {the priming event's seq (0: none), its epoch}
_OPENED = """
local function opened(a, heard)
  redis.call('HSET', KEYS[1], 'v', '', 'p', a[2], 'seq', 0, 'first', 1, 'gend', 0)
  for i = 1, #heard, 2 do redis.call('HSET', KEYS[1], heard[i], heard[i + 1]) end
  if a[3] ~= '' then
    redis.call('HSET', KEYS[1], a[3], a[4], 'inf', 1)
    if a[5] ~= '' then redis.call('HSET', KEYS[1], 'st:' .. a[5], a[6]) end
  end
  redis.call('PEXPIRE', KEYS[1], a[1])
  if a[7] == 'p' and a[5] ~= '' then return append(a[5], '', 'm', {a[1], a[8], a[9], a[10], a[11], a[12]}) end
  return {0, ''}
end
"""

# KEYS: s, e, channel; ARGV: the 12 of `opened`, then its `heard` pairs (the counts from ADMIT) -> as
# `opened`. On a Redis Cluster, after ADMIT in its own slot.
CREATE = (
    _APPEND
    + _OPENED
    + """
local a, heard = {}, {}
for i = 1, 12 do a[i] = ARGV[i] end
for i = 13, #ARGV do heard[#heard + 1] = ARGV[i] end
return opened(a, heard)
"""
)

# ADMIT and CREATE in one round trip, on one Redis (whose scripts may touch keys of any slot): KEYS: s, e,
# channel, sessions, chg; ARGV: the 12 of `opened`, now_ms, max_sessions, sid, then the views as `w:`
# field, value pairs -> 0 at max_sessions, else as `opened`.
OPEN = (
    _APPEND
    + _OPENED
    + """
redis.call('ZREMRANGEBYSCORE', KEYS[4], '-inf', ARGV[13])
if redis.call('ZCARD', KEYS[4]) >= tonumber(ARGV[14]) then return 0 end
redis.call('ZADD', KEYS[4], ARGV[13] + ARGV[1], ARGV[15])
local a, heard = {}, {}
for i = 1, 12 do a[i] = ARGV[i] end
local counts = redis.call('HGETALL', KEYS[5])
for i = 1, #counts, 2 do heard[#heard + 1] = 'g:' .. counts[i]; heard[#heard + 1] = counts[i + 1] end
for i = 16, #ARGV do heard[#heard + 1] = ARGV[i] end
return opened(a, heard)
"""
)

# KEYS: s, e, u, d:<standalone>, channel; ARGV: now_ms, idle_ms, principal, request field ('' for none),
# worker, stream ('' for none), request id (JSON), max_in_flight, 'p' to store the stream's priming event
# (an empty one, see `append`) or '', then append's max_events, max_bytes, ended_ms, key prefix, standalone
# -> nil (no such session, or not its principal's), 'dup', 'busy' (max_in_flight requests of the
# session in flight), or {v, caps, info, lvl, the priming event's seq (0: none) and epoch, URIs to score
# again...}
BEGIN = (
    _KEEP
    + _APPEND
    + """
local rec = redis.call('HMGET', KEYS[1], 'v', 'caps', 'info', 'p', 'lvl', 'inf')
if not rec[1] or rec[1] == '' or rec[4] ~= ARGV[3] then return nil end
if ARGV[4] ~= '' then
  if redis.call('HEXISTS', KEYS[1], ARGV[4]) == 1 then return 'dup' end
  if tonumber(rec[6] or '0') >= tonumber(ARGV[8]) then return 'busy' end
  redis.call('HSET', KEYS[1], ARGV[4], ARGV[5])
  redis.call('HINCRBY', KEYS[1], 'inf', 1)
  if ARGV[6] ~= '' then redis.call('HSET', KEYS[1], 'st:' .. ARGV[6], ARGV[7]) end
end
local found = {rec[1], rec[2] or '{}', rec[3] or '{}', rec[5] or '', 0, ''}
if ARGV[9] == 'p' and ARGV[6] ~= '' then
  local lim = {ARGV[2], ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14]}
  local primed = append(ARGV[6], '', 'm', lim, KEYS[5])
  found[5], found[6] = primed[1], primed[2]
end
for _, uri in ipairs(keep(ARGV[1], ARGV[2])) do table.insert(found, uri) end
return found
"""
)


# KEYS: s, e, channel; ARGV: stream, data, flag ('f' final, 'm' message), idle_ms, max_events, max_bytes,
# ended_ms, the session's key prefix, the standalone stream, and for an initialize response the session's
# agreement (v, caps, info: `agreed` in the same round trip)
# -> {the event's seq, its epoch}; 0 when the session is gone; -1 when the stream was already finished.
STORE = (
    _APPEND
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[10] then redis.call('HSET', KEYS[1], 'v', ARGV[10], 'caps', ARGV[11], 'info', ARGV[12]) end
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
# is the count it has heard. With a visibility hook, `w:<method>` is the digest of the list as its
# principal saw it when last told (or when the session began): a count it has not heard tells it only
# if the view the worker passes differs. KEYS: s, e, channel; ARGV: idle_ms, max_events, max_bytes,
# ended_ms, the session's key prefix, the standalone stream, then the counts (read from `chg` just
# before) as method, count, view ('' without a hook), ...
# -> the notifications stored on the session's standalone stream (one per method it has not heard yet).
CATCH_UP = (
    _APPEND
    + """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local stored = 0
for i = 7, #ARGV, 3 do
  local method, count, view = ARGV[i], tonumber(ARGV[i + 1]), ARGV[i + 2]
  if (tonumber(redis.call('HGET', KEYS[1], 'g:' .. method)) or 0) < count then
    redis.call('HSET', KEYS[1], 'g:' .. method, count)
    if view == '' or redis.call('HGET', KEYS[1], 'w:' .. method) ~= view then
      if view ~= '' then redis.call('HSET', KEYS[1], 'w:' .. method, view) end
      append(ARGV[6], '{"jsonrpc":"2.0","method":"' .. method .. '"}', 'm', ARGV)
      stored = stored + 1
    end
  end
end
return stored
"""
)

# KEYS: s, e; ARGV: after (a seq), token ('' for none), the session's key prefix
# -> nil (no such session), 'over' (another standalone GET holds the stream), or {seq, first, events
# after `after`...}, each "seq NL stream NL flag NL epoch NL data" (an event whose data is gone has flag
# 'x', 'X' if it was its stream's last, and no data). With a token, what is returned is taken for
# delivery: a later GET starts after it.
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
  local seq, stream, flag, _, epoch = entry(raw)
  local data = redis.call('HGET', ARGV[3] .. 'd:' .. stream, seq)
  if not data then
    data = ''
    flag = flag == 'f' and 'X' or 'x'
  end
  table.insert(events, seq .. '\\n' .. stream .. '\\n' .. flag .. '\\n' .. epoch .. '\\n' .. data)
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

# KEYS: s, e, u; ARGV: the session's key prefix, the standalone stream -> {the workers serving its
# requests, the URIs it subscribed to} (state.py takes it off their `sub:<uri>` and `sessions`)
END = (
    _ENTRY
    + """
local owners = {}
local streams = {[ARGV[2]] = true}
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  local kind = string.sub(f, 1, 3)
  if kind == 'rq:' then table.insert(owners, redis.call('HGET', KEYS[1], f)) end
  if kind == 'st:' then streams[string.sub(f, 4)] = true end
end
for _, raw in ipairs(redis.call('LRANGE', KEYS[2], 0, -1)) do
  local _, stream = entry(raw)
  streams[stream] = true
end
for stream in pairs(streams) do redis.call('DEL', ARGV[1] .. 'd:' .. stream) end
local uris = redis.call('SMEMBERS', KEYS[3])
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
return {owners, uris}
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

# KEYS: s, u; ARGV: now_ms, idle_ms, uri, limit ('' for none)
# -> -1 when there is no such session, 0 when it already has `limit` other subscriptions, else `ur`
# (its entry in `sub:<uri>` is scored from it: INDEX)
SUBSCRIBE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local limit = tonumber(ARGV[4])
if limit and redis.call('SISMEMBER', KEYS[2], ARGV[3]) == 0 and redis.call('SCARD', KEYS[2]) >= limit then
  return 0
end
redis.call('SADD', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
redis.call('HSETNX', KEYS[1], 'ur', ARGV[1])
return tonumber(redis.call('HGET', KEYS[1], 'ur'))
"""

# KEYS: sub:<uri>; ARGV: now_ms -> the sessions subscribed to the URI that may still live
SUBSCRIBERS = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
return redis.call('ZRANGE', KEYS[1], 0, -1)
"""
