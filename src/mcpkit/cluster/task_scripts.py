"""The Lua scripts of the Redis task store: each one round trip, atomic.

Keys, under P (the store's prefix and `{t}:`, one hash tag, so one slot of a Redis Cluster):
`task-rec:<id>` (a hash: `rev`, the record's revision; `status`; `data`, the
record as JSON; it expires with the task's ttl), `tasks:exp` (every kept task by its expiry, ms),
`tasks:meta` (by id: "<bytes> <owner>"), `tasks:bytes` (the size of every kept record), `tasks:live`
and `tasks:live:<owner>` (the unfinished tasks), `tasks:own:<owner>` (an owner's tasks by creation
time) and `tasks:done` (the finished ones, by when they ended: the first to make room).

Every script starts by forgetting up to 64 tasks past their expiry, so the indexes and the byte count
follow Redis's own expiry of the records. KEYS[1] is the task's record, which routes the script to its
slot; the other keys are built inside the scripts from P, in the same slot.
"""

from __future__ import annotations

__all__ = ["CREATE", "UPDATE"]

# ARGV: P, now_ms, then the script's own.
_PRELUDE = """
local P, now = ARGV[1], tonumber(ARGV[2])
local function meta_of(id)
  local meta = redis.call('HGET', P .. 'tasks:meta', id)
  if not meta then return nil, nil end
  local at = string.find(meta, ' ', 1, true)
  return tonumber(string.sub(meta, 1, at - 1)), string.sub(meta, at + 1)
end
local function drop(id)
  local size, owner = meta_of(id)
  if size then
    redis.call('DECRBY', P .. 'tasks:bytes', size)
    redis.call('SREM', P .. 'tasks:live:' .. owner, id)
    redis.call('ZREM', P .. 'tasks:own:' .. owner, id)
    redis.call('HDEL', P .. 'tasks:meta', id)
  end
  redis.call('ZREM', P .. 'tasks:exp', id)
  redis.call('ZREM', P .. 'tasks:done', id)
  redis.call('SREM', P .. 'tasks:live', id)
  redis.call('DEL', P .. 'task-rec:' .. id)
end
local function room(grow, more, max_tasks, max_bytes)
  while redis.call('ZCARD', P .. 'tasks:exp') + more > max_tasks
      or tonumber(redis.call('GET', P .. 'tasks:bytes') or '0') + grow > max_bytes do
    local oldest = redis.call('ZRANGE', P .. 'tasks:done', 0, 0)[1]
    if not oldest then return false end
    drop(oldest)
  end
  return true
end
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P .. 'tasks:exp', '-inf', now, 'LIMIT', 0, 64)) do
  drop(id)
end
"""

# ARGV: P, now_ms, id, owner, data, expiry score ('+inf': none), ttl_ms (0: none), max per owner,
# max live, max tasks, max bytes, created score -> 1 kept, 0 refused (a cap, or no room)
CREATE = (
    _PRELUDE
    + """
local id, owner, data = ARGV[3], ARGV[4], ARGV[5]
if redis.call('SCARD', P .. 'tasks:live:' .. owner) >= tonumber(ARGV[8]) then return 0 end
if redis.call('SCARD', P .. 'tasks:live') >= tonumber(ARGV[9]) then return 0 end
if not room(#data, 1, tonumber(ARGV[10]), tonumber(ARGV[11])) then return 0 end
local key = P .. 'task-rec:' .. id
redis.call('HSET', key, 'rev', 1, 'status', 'working', 'data', data)
if tonumber(ARGV[7]) > 0 then redis.call('PEXPIRE', key, ARGV[7]) end
redis.call('ZADD', P .. 'tasks:exp', ARGV[6], id)
redis.call('HSET', P .. 'tasks:meta', id, #data .. ' ' .. owner)
redis.call('INCRBY', P .. 'tasks:bytes', #data)
redis.call('SADD', P .. 'tasks:live', id)
redis.call('SADD', P .. 'tasks:live:' .. owner, id)
redis.call('ZADD', P .. 'tasks:own:' .. owner, ARGV[12], id)
return 1
"""
)

# ARGV: P, now_ms, id, rev (the one the change was computed from), data, status, terminal ('1'/'0'),
# ended score, max tasks, max bytes
# -> 1 written; 0 stale (changed or ended meanwhile, or gone: read it again); -1 no room for it.
# A compare-and-set on the revision, and a finished task never changes again.
UPDATE = (
    _PRELUDE
    + """
local id, data = ARGV[3], ARGV[5]
local key = P .. 'task-rec:' .. id
local now_at = redis.call('HMGET', key, 'rev', 'status')
if now_at[1] ~= ARGV[4] then return 0 end
if now_at[2] == 'completed' or now_at[2] == 'failed' or now_at[2] == 'cancelled' then return 0 end
local old, owner = meta_of(id)
if not old then return 0 end
if #data > old and not room(#data - old, 0, tonumber(ARGV[9]), tonumber(ARGV[10])) then return -1 end
redis.call('HSET', key, 'rev', tonumber(now_at[1]) + 1, 'status', ARGV[6], 'data', data)
redis.call('HSET', P .. 'tasks:meta', id, #data .. ' ' .. owner)
redis.call('INCRBY', P .. 'tasks:bytes', #data - old)
if ARGV[7] == '1' then
  redis.call('SREM', P .. 'tasks:live', id)
  redis.call('SREM', P .. 'tasks:live:' .. owner, id)
  redis.call('ZADD', P .. 'tasks:done', ARGV[8], id)
end
return 1
"""
)
