"""Runs shared by several workers through Redis: each run's events in a Redis stream that
any worker can replay and follow, cancel requests on a channel, leases that tell a live
worker's runs from a dead one's, and the claim by which one live worker takes over each run
of a worker that died (see :mod:`agentstream.runs.takeover`)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping, Sequence
from typing import Any

import redis.asyncio as aioredis

from agentstream.errors import BrokerUnavailable, RunNotFound
from agentstream.events import (
    TERMINAL_EVENTS,
    RunEvent,
    RunFailed,
    event_from_json,
    event_to_json,
)
from agentstream.principal import Principal
from agentstream.runs.broker import (
    INTERRUPTED_KIND,
    WORKER_LOST_MESSAGE,
    CancelHandler,
    Claim,
    Handoff,
    LogEnd,
    OrphanHandler,
    TakeoverHandler,
    conversation_key,
)
from agentstream.runs.local_broker import LocalBroker

__all__ = ["RedisBroker"]

log = logging.getLogger("agentstream.broker")

_RECANCEL_SECONDS = 0.1
"""How long a cancelled background task has to end before it is cancelled again."""

_FREED_POLL_SECONDS = 0.05
"""How often a run waiting for a conversation held on another worker asks again (a worker
that lets go tells only its own waiters)."""

_HOLD = """
local holder = redis.call('GET', KEYS[1])
if holder and holder ~= ARGV[1] and redis.call('EXISTS', ARGV[4] .. holder .. ':alive') == 1 then
  return holder
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
redis.call('SET', KEYS[2], 1, 'EX', ARGV[3])
return false
"""
"""Take the conversation's ``active:`` key unless a run with a live lease holds it, and take
this run's lease with it (so no other worker sees the new holder without one)."""

_CLAIM = """
if redis.call('EXISTS', KEYS[1]) == 1 then
  return -1
end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
local claims = redis.call('INCR', KEYS[2])
redis.call('EXPIRE', KEYS[2], ARGV[3])
return claims
"""
"""Take the lease of a run that has none (its worker died, or handed it over as it stopped),
atomically, so that exactly one worker goes on with it; count the takeovers. -1: a worker
holds it."""

MAX_TAKEOVERS = 3
"""How many times one run is taken over: a run whose work kills every worker it lands on (a
tool that crashes the process) ends as interrupted instead of taking the workers down one
after the other."""

_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""
"""Drop the conversation's ``active:`` key if this run still holds it."""


class RedisBroker:
    """Runs in Redis streams (``{prefix}run:{id}``, expiring ``ttl`` seconds after the last
    event) and cancel requests on the ``{prefix}cancel`` channel.

    Every run of this worker is also kept by an in-process :class:`LocalBroker`, so it is
    replayed from memory here and keeps streaming while Redis is down: an outage is logged
    once, every request still tries Redis, and the first that finds it answering brings the
    cancel listener back at once (its backoff only paces retries while nothing else talks
    to Redis); only what needs another worker (following or stopping its runs) fails, as
    :class:`BrokerUnavailable`. A worker renews a short lease (``{id}:alive``) on each of its
    runs; a reader that finds the lease gone before the run's last event knows the worker
    died. Every worker looks for such runs (``{prefix}runs`` lists the runs whose worker has
    not closed them; a look costs one set read and one lease read per listed run, every
    :attr:`scan_seconds`, nothing per event) and claims each one it finds with one atomic
    script: the one worker whose claim wins takes the lease and goes on with the run
    (``on_takeover``), and a follower waits through the lapse (up to a lease more) instead
    of failing. A run nobody can go on with (``takeover=False``, or too many takeovers)
    ends for its followers with ``run_failed`` and is reported (``on_orphan``) so the
    store records it as interrupted. A worker that stops before its runs
    end gives them up (:meth:`hand_over`): their leases go at once, for another worker to
    take them over.
    """

    def __init__(
        self,
        url: str = "redis://127.0.0.1:6379/0",
        *,
        prefix: str = "agentstream:",
        ttl: int = 3600,
        lease: float = 15.0,
        max_events: int = 100_000,
        block_ms: int = 5_000,
        takeover: bool = True,
    ) -> None:
        # A blocking XREAD holds the socket silent for ``block_ms``: the socket timeout must
        # be longer, or a quiet run (a slow tool, a thinking model) breaks its followers.
        self._redis: aioredis.Redis = aioredis.Redis.from_url(
            url, socket_timeout=block_ms / 1000 + 10, socket_connect_timeout=5
        )
        self._prefix = prefix
        self._ttl = ttl
        self._lease = lease
        self._max_events = max_events
        self._block_ms = block_ms
        self._takeover = takeover
        self.scan_seconds = min(1.0, lease / 3)
        """How often this worker looks for runs whose worker died."""
        self._local = LocalBroker()
        self._mine: set[str] = set()
        """Runs of this worker that have not ended: their leases are renewed."""
        self._outbox: list[RunEvent] = []
        self._flushing: asyncio.Task[None] | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._down: bool | None = None
        """Whether Redis was found down (``None``: not asked yet)."""
        self.on_availability: Callable[[bool], None] | None = None
        """Told whether Redis answers each time that changes (the server's metrics)."""
        self._redis_back = asyncio.Event()
        """Set when a request finds Redis answering after an outage: the cancel listener
        resubscribes at once instead of waiting out its backoff."""
        self._worker = uuid.uuid4().hex
        """This worker's mark on the leases it takes."""
        self._active_keys: dict[str, str] = {}
        """The ``active:`` key of each run of this worker that holds a conversation."""
        self._hold_script = self._redis.register_script(_HOLD)
        self._release_script = self._redis.register_script(_RELEASE)
        self._claim_script = self._redis.register_script(_CLAIM)
        self._on_orphan: OrphanHandler | None = None
        self._renewing = asyncio.Lock()
        """Held while leases are renewed: a lease given up (:meth:`hand_over`) is deleted
        after a renewal in flight, never before it (which would bring it back)."""
        self._on_takeover: TakeoverHandler | None = None
        self._claimed: dict[str, Sequence[RunEvent]] = {}
        """The log of each run claimed here and not yet opened again (:meth:`open_run`)."""
        self._taking: set[asyncio.Task[None]] = set()

    def _key(self, run_id: str) -> str:
        return f"{self._prefix}run:{run_id}"

    @property
    def _runs_key(self) -> str:
        return f"{self._prefix}runs"

    @property
    def _channel(self) -> str:
        return f"{self._prefix}cancel"

    def _unavailable(self, exc: BaseException) -> None:
        if self._down is not True:
            self._down = True
            log.warning("Redis is unavailable (%s): runs stream from this worker only", exc)
            if self.on_availability is not None:
                self.on_availability(False)

    def _available(self) -> None:
        if self._down is not False:
            if self._down:
                self._redis_back.set()
                log.warning("Redis is back: runs are shared between workers again")
            self._down = False
            if self.on_availability is not None:
                self.on_availability(True)

    async def start(
        self,
        on_cancel: CancelHandler,
        on_orphan: OrphanHandler | None = None,
        on_takeover: TakeoverHandler | None = None,
    ) -> None:
        await self._local.start(on_cancel)
        self._on_orphan = on_orphan
        self._on_takeover = on_takeover if self._takeover else None
        self._tasks = [
            asyncio.create_task(self._listen(on_cancel)),
            asyncio.create_task(self._renew_leases()),
        ]
        if self._on_takeover is not None:
            self._tasks.append(asyncio.create_task(self._look_for_lost_runs()))

    async def _listen(self, on_cancel: CancelHandler) -> None:
        """Stop requests from other workers, resubscribing with backoff after an outage, and
        at once when any request of this worker finds Redis answering again (a run that
        starts here, its events, its lease): whatever the backoff had reached, stops from
        other workers reach this one's runs again as soon as Redis does."""
        delay = 0.5
        while True:
            self._redis_back.clear()
            pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self._channel)
                self._available()
                delay = 0.5
                while True:
                    message = await pubsub.get_message(timeout=None)
                    if message is not None:
                        _dispatch(message, on_cancel)
            except (aioredis.RedisError, OSError) as exc:
                self._unavailable(exc)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._redis_back.wait(), delay)
            delay = min(delay * 2, 10.0)

    async def _renew_leases(self) -> None:
        while True:
            await asyncio.sleep(self._lease / 3)
            if not self._mine:
                continue
            async with self._renewing:
                pipe = self._redis.pipeline(transaction=False)
                for run_id in self._mine:
                    pipe.set(self._key(run_id) + ":alive", 1, ex=_seconds(self._lease))
                for active in self._active_keys.values():
                    pipe.expire(active, self._ttl)  # a run longer than the key's time keeps it
                try:
                    await pipe.execute()
                    self._available()
                except (aioredis.RedisError, OSError) as exc:
                    self._unavailable(exc)

    async def hand_over(self, run_ids: Sequence[str]) -> None:
        """Flush what the runs published, stop renewing their leases and delete them. Their
        conversations stay held by them (the ``active:`` keys are left to their time to
        live): a reload still finds the run in progress, and a new message waits for it or
        takes the conversation once its lease has lapsed, as after a dead worker's. Redis
        unreachable: the leases lapse by themselves within their time to live."""
        for run_id in run_ids:
            self._mine.discard(run_id)  # nothing more of theirs is published or renewed
            self._local.let_go(run_id)
            self._active_keys.pop(run_id, None)
        if self._flushing is not None:
            await asyncio.shield(self._flushing)
        await self._flush()
        async with self._renewing:  # after a renewal in flight, which may hold their leases
            try:
                if run_ids:
                    await self._redis.delete(*(self._key(r) + ":alive" for r in run_ids))
                self._available()
            except (aioredis.RedisError, OSError) as exc:
                self._unavailable(exc)

    async def _look_for_lost_runs(self) -> None:
        """Every :attr:`scan_seconds`, claim the listed runs that have no lease and have not
        ended (a lease lapsed, or deleted by a worker that handed its runs over)."""
        while True:
            await asyncio.sleep(self.scan_seconds)
            try:
                await self._claim_lost_runs()
            except (aioredis.RedisError, OSError) as exc:
                self._unavailable(exc)
            except Exception:
                log.exception("could not look for runs of workers that died")

    async def _claim_lost_runs(self) -> None:
        listed = [_text(r) or "" for r in await self._redis.smembers(self._runs_key)]
        others = [r for r in listed if r not in self._mine and not self._local.has(r)]
        if not others:
            return
        leases = await self._redis.mget([self._key(r) + ":alive" for r in others])
        for run_id, lease in zip(others, leases, strict=True):
            if lease is not None:
                continue
            key = self._key(run_id)
            if not await self._redis.exists(key + ":owner") or await self._ended(key):
                await self._redis.srem(self._runs_key, run_id)  # ended, or expired
                continue
            claims = await self._claim_script(
                keys=[key + ":alive", key + ":claims"],
                args=[self._worker, _seconds(self._lease), self._ttl],
            )
            if int(claims) < 0:
                continue  # another worker was quicker
            self._mine.add(run_id)  # its lease is renewed here from now
            task = asyncio.create_task(self._take_over(run_id, int(claims)))
            self._taking.add(task)
            task.add_done_callback(self._taking.discard)

    async def _take_over(self, run_id: str, claims: int) -> None:
        """Hand a run this worker claimed to the runner, with its request and its log."""
        key = self._key(run_id)
        try:
            request, reader, cancel = await self._redis.mget(
                key + ":request", key + ":reader", key + ":cancel"
            )
            entries: Any = await self._redis.xrange(key)
        except (aioredis.RedisError, OSError) as exc:
            self._unavailable(exc)
            self._mine.discard(run_id)  # its lease lapses again: another worker may try
            return
        events = [event_from_json(fields[b"e"]) for _, fields in entries]
        self._claimed[run_id] = events
        found = json.loads(reader) if reader is not None else None
        claim = Claim(
            run_id=run_id,
            request=_text(request),
            reader=found if isinstance(found, dict) else None,
            events=events,
            takeovers=claims,
            give_up=claims > MAX_TAKEOVERS,
            cancel=_text(cancel),
        )
        log.warning("took over run %s from a worker that stopped (takeover %d)", run_id, claims)
        assert self._on_takeover is not None
        try:
            await self._on_takeover(claim)
        except Exception:
            log.exception("could not take over run %s", run_id)
        finally:
            if not self._local.has(run_id):  # never opened again: let another worker try
                self._claimed.pop(run_id, None)
                self._mine.discard(run_id)

    async def aclose(self) -> None:
        await _cancel_until_done([*self._tasks, *self._taking])
        await self._flush()
        await self._local.aclose()
        await self._redis.aclose()

    def _active_key(self, principal: Principal, conversation_id: str) -> str:
        return f"{self._prefix}active:{conversation_key(principal, conversation_id)}"

    async def open_run(
        self,
        run_id: str,
        owner: Principal,
        reader: Mapping[str, Any] | None = None,
        *,
        request: str | None = None,
    ) -> None:
        await self._local.open_run(run_id, owner, reader)
        for event in self._claimed.pop(run_id, ()):
            self._local.publish(event)  # a run taken over: readers here replay it whole
        self._mine.add(run_id)
        key = self._key(run_id)
        pipe = self._redis.pipeline(transaction=False)
        pipe.set(key + ":owner", owner.owner, ex=self._ttl)
        pipe.set(key + ":reader", json.dumps(reader), ex=self._ttl)
        pipe.set(key + ":alive", self._worker, ex=_seconds(self._lease))
        if request is not None:
            pipe.set(key + ":request", request, ex=self._ttl)
            pipe.sadd(self._runs_key, run_id)
        try:
            await pipe.execute()
            self._available()
        except (aioredis.RedisError, OSError) as exc:
            self._unavailable(exc)

    async def hold(self, run_id: str, owner: Principal, conversation_id: str) -> str | None:
        """One script on the conversation's ``active:`` key, which takes the run's lease with
        it. The key outlives a dead holder (its followers find the run through it), but not
        its lease: once the lease has lapsed, the next run takes the key over. Redis
        unreachable: this worker's own hold is all there is (its runs still take turns)."""
        key = conversation_key(owner, conversation_id)
        active = self._active_key(owner, conversation_id)
        try:
            holder = await self._hold_script(
                keys=[active, self._key(run_id) + ":alive"],
                args=[run_id, self._ttl, _seconds(self._lease), f"{self._prefix}run:"],
            )
            self._available()
        except (aioredis.RedisError, OSError) as exc:
            self._unavailable(exc)
            return self._local.hold_now(run_id, key)
        if holder is not None:
            return _text(holder)
        self._local.held_now(run_id, key)  # its waiters here are woken when it lets go
        self._mine.add(run_id)  # its lease is renewed from now, before its log opens
        self._active_keys[run_id] = active
        return None

    async def release(self, run_id: str) -> None:
        if not self._local.has(run_id):
            self._mine.discard(run_id)  # held, but its run never opened: no lease to renew
        active = self._active_keys.pop(run_id, None)
        if active is not None:
            try:
                await self._release_script(keys=[active], args=[run_id])
                self._available()
            except (aioredis.RedisError, OSError) as exc:
                self._unavailable(exc)  # the key goes with the run's lease
        self._local.release_now(run_id)  # then its waiters here wake to a free conversation

    async def alive(self, run_ids: Sequence[str]) -> Sequence[str]:
        others = [r for r in run_ids if not self._local.has(r)]
        mine = set(await self._local.alive(run_ids))
        if others:
            try:
                leases = await self._redis.mget([self._key(r) + ":alive" for r in others])
                self._available()
            except (aioredis.RedisError, OSError) as exc:
                self._unavailable(exc)
                leases = [None] * len(others)
            mine |= {r for r, lease in zip(others, leases, strict=True) if lease is not None}
        return [r for r in run_ids if r in mine]

    async def freed(self, owner: Principal, conversation_id: str, within: float) -> None:
        await self._local.freed(owner, conversation_id, min(within, _FREED_POLL_SECONDS))

    def publish(self, event: RunEvent) -> None:
        self._local.publish(event)
        if event.run_id not in self._mine:
            return  # handed over: nothing more of it goes to its shared log
        self._outbox.append(event)
        if self._flushing is None or self._flushing.done():
            self._flushing = asyncio.create_task(self._flush())

    async def _flush(self) -> None:
        while self._outbox:
            batch, self._outbox = self._outbox, []
            pipe = self._redis.pipeline(transaction=False)
            for event in batch:
                key = self._key(event.run_id)
                # Stream ids are the event's seq, so a reader resumes with XREAD after "seq-0".
                pipe.xadd(
                    key,
                    {"e": event_to_json(event)},
                    id=f"{event.seq + 1}-0",
                    maxlen=self._max_events,
                    approximate=True,
                )
                pipe.expire(key, self._ttl)
                pipe.expire(key + ":owner", self._ttl)  # a long run stays reachable
                pipe.expire(key + ":reader", self._ttl)
            try:
                await pipe.execute()
                self._available()
            except (aioredis.RedisError, OSError) as exc:
                # The events are still served from this worker; other workers miss them.
                self._unavailable(exc)

    async def reach(self) -> None:
        """Raise unless Redis answers now (a readiness probe,
        :mod:`agentstream.server.health`)."""
        try:
            await self._redis.ping()
        except (aioredis.RedisError, OSError) as exc:
            self._unavailable(exc)
            raise
        self._available()

    async def flushed(self) -> None:
        """Until the flush under way has written what was published so far (it goes on
        until nothing is left; none under way: nothing is left)."""
        flushing = self._flushing
        if flushing is not None and not flushing.done():
            await asyncio.shield(flushing)

    def has_after(self, run_id: str, seq: int) -> bool:
        return self._local.has_after(run_id, seq)

    def reading(self) -> int:
        return self._local.reading()

    async def close_run(self, run_id: str) -> None:
        await self._local.close_run(run_id)
        self._mine.discard(run_id)
        if self._flushing is not None:
            await asyncio.shield(self._flushing)
        await self._flush()
        await self.release(run_id)
        key = self._key(run_id)
        with contextlib.suppress(aioredis.RedisError, OSError):
            pipe = self._redis.pipeline(transaction=False)
            pipe.srem(self._runs_key, run_id)
            pipe.delete(key + ":alive", key + ":request", key + ":cancel")
            await pipe.execute()

    async def active_run(self, conversation_id: str, requester: Principal) -> str | None:
        found = await self._local.active_run(conversation_id, requester)
        if found is not None:
            return found
        try:
            run_id = _text(await self._redis.get(self._active_key(requester, conversation_id)))
        except (aioredis.RedisError, OSError) as exc:
            self._unavailable(exc)
            raise BrokerUnavailable("runs of other workers cannot be reached") from exc
        self._available()
        if run_id is not None and self._local.has(run_id):
            return None  # this worker's run, ended (its key goes a moment after its last event)
        return run_id

    async def replay(
        self,
        run_id: str,
        requester: Principal,
        after: int = -1,
        *,
        handoff: Handoff | None = None,
    ) -> AsyncGenerator[RunEvent, None]:
        if self._local.has(run_id):
            async for event in self._local.replay(run_id, requester, after, handoff=handoff):
                yield event
            return
        try:
            async for event in self._replay_shared(run_id, requester, after):
                yield event
        except (aioredis.RedisError, OSError) as exc:
            self._unavailable(exc)
            raise BrokerUnavailable("runs of other workers cannot be reached") from exc

    async def _replay_shared(
        self, run_id: str, requester: Principal, after: int
    ) -> AsyncGenerator[RunEvent, None]:
        key = self._key(run_id)
        owner = _text(await self._redis.get(key + ":owner"))
        self._available()
        if owner != requester.owner:
            raise RunNotFound(run_id)
        last, seq = (f"{after + 1}-0" if after >= 0 else "0-0"), after
        while True:
            _raise_if_cancelled()
            found = await self._redis.xread({key: last}, block=self._block_ms, count=500)
            if not found:
                if not await self._redis.exists(key + ":owner"):
                    return  # expired while waiting
                if not await self._redis.exists(key + ":alive"):
                    # One more read: the last events may have landed just before the lease
                    # was dropped.
                    if await self._redis.xread({key: last}, count=1):
                        continue
                    if await self._taken_over(run_id):
                        continue  # another worker goes on with it: its events follow
                    self._orphaned(run_id)
                    yield RunFailed(
                        run_id=run_id,
                        seq=seq + 1,
                        kind=INTERRUPTED_KIND,
                        message=WORKER_LOST_MESSAGE,
                    )
                    return
                continue
            for entry_id, body in _entries(found):
                last = entry_id
                event = event_from_json(body)
                seq = event.seq
                yield event
                if isinstance(event, TERMINAL_EVENTS):
                    return

    async def reader_of(self, run_id: str, requester: Principal) -> Mapping[str, Any] | None:
        if self._local.has(run_id):
            return await self._local.reader_of(run_id, requester)
        key = self._key(run_id)
        try:
            owner, reader = await self._redis.mget(key + ":owner", key + ":reader")
        except (aioredis.RedisError, OSError) as exc:
            self._unavailable(exc)
            raise BrokerUnavailable("runs of other workers cannot be reached") from exc
        self._available()
        if _text(owner) != requester.owner:
            raise RunNotFound(run_id)
        found = json.loads(reader) if reader is not None else None
        return found if isinstance(found, dict) else None

    async def request_cancel(self, run_id: str, requester: Principal, reason: str) -> bool:
        if self._local.has(run_id):
            return await self._local.request_cancel(run_id, requester, reason)
        key = self._key(run_id)
        try:
            owner, alive = await self._redis.mget(key + ":owner", key + ":alive")
            if _text(owner) != requester.owner:
                return False  # someone else's, or unknown
            if alive is None:
                # No worker is running it any more: nothing to stop, but if it never ended,
                # its worker died. The worker that takes it over stops it at once.
                if await self._ended(key):
                    return False
                if await self._resumable(run_id):
                    await self._redis.set(key + ":cancel", reason, ex=self._ttl)
                    return True
                self._orphaned(run_id)
                return False
            body = {
                "run_id": run_id,
                "user_id": requester.user_id,
                "tenant_id": requester.tenant_id,
                "reason": reason,
            }
            await self._redis.publish(self._channel, json.dumps(body))
        except (aioredis.RedisError, OSError) as exc:
            self._unavailable(exc)
            raise BrokerUnavailable("runs of other workers cannot be reached") from exc
        self._available()
        return True

    async def _resumable(self, run_id: str) -> bool:
        """Whether a worker may take the run over (takeover on, its request kept)."""
        return self._takeover and bool(await self._redis.sismember(self._runs_key, run_id))

    async def _taken_over(self, run_id: str) -> bool:
        """Whether a worker takes the run over within a lease (and a look) of its lapse:
        the time every live worker has to find and claim it. A run that cannot be taken
        over (not listed: its request was not kept) is not waited for."""
        if not await self._resumable(run_id):
            return False
        key = self._key(run_id)
        deadline = asyncio.get_running_loop().time() + self._lease + 2 * self.scan_seconds
        while asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(min(0.2, self.scan_seconds))
            if await self._redis.exists(key + ":alive"):
                return True
        return False

    def _orphaned(self, run_id: str) -> None:
        if self._on_orphan is not None:
            self._on_orphan(run_id)

    async def _last_event(self, key: str) -> RunEvent | None:
        """The last event of the run's log in Redis (None: empty, or expired)."""
        last: Any = await self._redis.xrevrange(key, count=1)
        return event_from_json(last[0][1][b"e"]) if last else None

    async def _ended(self, key: str) -> bool:
        """Whether the run's log in Redis ends with its terminal event."""
        return isinstance(await self._last_event(key), TERMINAL_EVENTS)

    async def end_of(self, run_id: str, requester: Principal) -> LogEnd:
        if self._local.has(run_id):
            return await self._local.end_of(run_id, requester)
        key = self._key(run_id)
        try:
            owner, alive = await self._redis.mget(key + ":owner", key + ":alive")
            if _text(owner) != requester.owner:
                raise RunNotFound(run_id)
            event = await self._last_event(key)
            going = alive is not None or await self._resumable(run_id)
        except (aioredis.RedisError, OSError) as exc:
            self._unavailable(exc)
            raise BrokerUnavailable("runs of other workers cannot be reached") from exc
        self._available()
        if isinstance(event, TERMINAL_EVENTS):
            return LogEnd(event.seq, True)
        seq = -1 if event is None else event.seq
        # No lease: the worker died. Another takes the run over (it goes on), or
        # :meth:`replay` ends the run with a failure of its own at ``seq + 1``; a client
        # that has that one has everything.
        return LogEnd(seq, False) if going else LogEnd(seq + 1, True)

    async def abandoned(self, running: Callable[[], Awaitable[Sequence[str]]]) -> Sequence[str]:
        """The runs listed now (other than this worker's) without a lease one lease period
        later. Not at once: a worker that died a moment ago still has leases that have not
        lapsed (a restarted worker comes back within seconds), and a run is committed to the
        store a moment before its worker takes the lease. Redis unreachable: none (nothing
        can be proved)."""
        run_ids = await running()
        if not [run_id for run_id in run_ids if run_id not in self._mine]:
            return ()
        # A lease taken just before ``run_ids`` were listed lapses within its time to live.
        await asyncio.sleep(_seconds(self._lease) + 0.25)
        candidates = [run_id for run_id in run_ids if run_id not in self._mine]
        try:
            if self._on_takeover is not None:  # those a worker will take over are not lost
                listed = await self._redis.smismember(self._runs_key, candidates)
                candidates = [r for r, kept in zip(candidates, listed, strict=True) if not kept]
                if not candidates:
                    return ()
            leases = await self._redis.mget([self._key(r) + ":alive" for r in candidates])
        except (aioredis.RedisError, OSError) as exc:
            self._unavailable(exc)
            return ()
        return [
            run_id
            for run_id, lease in zip(candidates, leases, strict=True)
            if lease is None and run_id not in self._mine
        ]


def _dispatch(message: Any, on_cancel: CancelHandler) -> None:
    try:
        body = json.loads(message["data"])
        requester = Principal(user_id=body["user_id"], tenant_id=body["tenant_id"])
        on_cancel(body["run_id"], requester, body["reason"])
    except (ValueError, KeyError, TypeError):
        log.warning("ignored a malformed cancel request")


def _seconds(value: float) -> int:
    return max(1, round(value))


def _text(value: Any) -> str | None:
    return value.decode() if isinstance(value, bytes) else value


def _entries(found: Any) -> list[tuple[str, bytes]]:
    """``XREAD`` of one stream as (entry id, event JSON) pairs. redis-py answers a list of
    ``[key, entries]`` pairs over RESP2 and a dict over RESP3."""
    streams = found.values() if isinstance(found, dict) else (entries for _, entries in found)
    return [
        (_text(entry_id) or "", fields[b"e"]) for entries in streams for entry_id, fields in entries
    ]


def _raise_if_cancelled() -> None:
    """Raise the cancellation of the calling task if a Redis call swallowed it (see
    :func:`_cancel_until_done`): a follower cancelled while its connection was being made
    would otherwise go on reading, a reader nobody waits for, until the run ends."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


async def _cancel_until_done(tasks: Sequence[asyncio.Task[None]]) -> None:
    """Cancel ``tasks`` and wait until every one has ended, cancelling again any that goes
    on. redis-py can swallow a cancellation: a ``subscribe`` cancelled while it connects
    returns as if nothing happened, and the listener then waits in its next read for good,
    which would hang the broker's ``aclose`` (and a server's shutdown) with it."""
    for task in tasks:
        task.cancel()
    while pending := [task for task in tasks if not task.done()]:
        await asyncio.wait(pending, timeout=_RECANCEL_SECONDS)
        for task in pending:
            task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)  # their errors, read and dropped
