"""Django's Redis cache, keeping one redis-py client per pool and working on without Redis.

One client per pool: Django's ``RedisCacheClient`` builds a new ``redis.Redis`` for every
operation, and redis-py's constructor fills a table of some 170 response callbacks each
time: that cost more CPU than the ``GET`` it was for. Every request reads its session from
this cache (``cached_db``) and a queue poll reads the searcher count as well. A client only
holds its pool and those callbacks, and is safe to share between threads, so one per pool
is kept.

Working on without Redis: the cache only ever saves work, so when Redis is down or stalled
every operation answers as Django's dummy cache would (a read is a miss, a write stores
nothing, ``add`` succeeds) instead of raising. Sessions then come from the database, rate
limits let requests through and rankings are computed anew. The connect and read timeouts
are short (``CACHE_CONNECT_TIMEOUT``, ``CACHE_TIMEOUT``), and after a failure the process
leaves Redis alone for ``CACHE_RETRY_SECONDS``, so a stalled Redis costs one timeout per
process every few seconds rather than one per cache call. The outage is logged once a
minute at most, and its end once.

A write or delete that could not reach Redis leaves whatever Redis held under that key: a
session deleted at logout would come back with Redis. So the keys of dropped writes are
remembered (up to ``DROPPED_KEYS_LIMIT``; beyond it, every cached session is deleted
instead) and deleted as soon as Redis answers again, before anything else is read.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar, cast

from django.core.cache import BaseCache
from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient as DjangoRedisCacheClient
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

Result = TypeVar("Result")
Fallback = TypeVar("Fallback")

LOG_EVERY_SECONDS = 60.0  # an outage is logged at most this often per process
DROPPED_KEYS_LIMIT = 10_000  # dropped writes remembered per process; past it, all sessions go on recovery
SESSION_KEYS = "*django.contrib.sessions.cached_db*"  # cached_db's KEY_PREFIX, after Django's key prefix


class RedisCacheClient(DjangoRedisCacheClient):
    _get_connection_pool_index: Callable[[bool], int]  # Django's, left out of django-stubs

    def __init__(self, *args: Any, retry_seconds: float = 5.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}
        self._retry_seconds = retry_seconds
        self._down_until = 0.0  # time.monotonic() before which Redis is not tried
        self._failing = False  # the last call failed; the next success ends the outage
        self._logged_at = -LOG_EVERY_SECONDS
        self._dropped: set[str] = set()
        self._forget_sessions = False
        self._lock = threading.Lock()

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = super().get_client(key, write=write)
        return client

    def available(self) -> bool:
        """Whether Redis is tried at all (``False`` for a few seconds after a failure)."""
        return time.monotonic() >= self._down_until

    def _run(
        self, operation: str, call: Callable[[], Result], fallback: Fallback, dropped: list[str] | None = None
    ) -> Result | Fallback:
        """``call()``, or ``fallback`` when Redis fails or is being left alone; ``dropped``
        names the keys a failed write leaves stale."""
        if not self.available():
            self._drop(dropped)
            return fallback
        try:
            if self._failing:
                self._recover()
            result = call()
        except RedisError as exc:
            self._fail(operation, exc)
            self._drop(dropped)
            return fallback
        if self._failing:
            self._failing = False
            logger.warning("Redis cache reachable again")
        return result

    def _fail(self, operation: str, exc: RedisError) -> None:
        if isinstance(exc, RedisConnectionError | RedisTimeoutError):
            self._down_until = time.monotonic() + self._retry_seconds
        self._failing = True
        now = time.monotonic()
        if now - self._logged_at >= LOG_EVERY_SECONDS:
            self._logged_at = now
            logger.warning(
                "Redis cache unavailable (%s on %s: %s): working without it, trying again every %s s",
                type(exc).__name__,
                operation,
                exc,
                self._retry_seconds,
            )

    def _drop(self, keys: list[str] | None) -> None:
        if not keys:
            return
        with self._lock:
            if len(self._dropped) + len(keys) > DROPPED_KEYS_LIMIT:
                self._forget_sessions = True  # the other keys expire soon on their own
                self._dropped.clear()
            elif not self._forget_sessions:
                self._dropped.update(keys)

    def _recover(self) -> None:
        """Forget in Redis what changed while it was unreachable (raises if it still is)."""
        with self._lock:
            keys, sessions = list(self._dropped), self._forget_sessions
        client = self.get_client(None, write=True)
        if sessions:
            logger.warning("Redis cache: more writes were dropped than remembered; deleting every cached session")
            batch: list[bytes] = []
            for key in client.scan_iter(match=SESSION_KEYS, count=1000):
                batch.append(key)
                if len(batch) == 1000:
                    client.delete(*batch)
                    batch.clear()
            if batch:
                client.delete(*batch)
        elif keys:
            client.delete(*keys)
        with self._lock:
            self._dropped.difference_update(keys)
            self._forget_sessions = self._forget_sessions and not sessions

    def add(self, key: Any, value: Any, timeout: Any) -> bool:
        return self._run("add", lambda: super(RedisCacheClient, self).add(key, value, timeout), True, [key])

    def get(self, key: Any, default: Any) -> Any:
        return self._run("get", lambda: super(RedisCacheClient, self).get(key, default), default)

    def set(self, key: Any, value: Any, timeout: Any) -> None:
        self._run("set", lambda: super(RedisCacheClient, self).set(key, value, timeout), None, [key])

    def touch(self, key: Any, timeout: Any) -> bool:
        return self._run("touch", lambda: super(RedisCacheClient, self).touch(key, timeout), False, [key])

    def delete(self, key: Any) -> bool:
        return self._run("delete", lambda: super(RedisCacheClient, self).delete(key), False, [key])

    def get_many(self, keys: Any) -> dict[Any, Any]:
        return self._run("get_many", lambda: super(RedisCacheClient, self).get_many(keys), {})

    def has_key(self, key: Any) -> bool:
        return self._run("has_key", lambda: super(RedisCacheClient, self).has_key(key), False)

    def incr(self, key: Any, delta: int) -> int:
        missing = object()
        result = self._run("incr", lambda: super(RedisCacheClient, self).incr(key, delta), missing, [key])
        if result is missing:
            raise ValueError(f"Key '{key}' not found (Redis is unavailable).")
        return cast(int, result)

    def set_many(self, data: Mapping[Any, Any], timeout: Any) -> None:
        self._run("set_many", lambda: super(RedisCacheClient, self).set_many(data, timeout), None, list(data))

    def delete_many(self, keys: Any) -> None:
        keys = list(keys)
        self._run("delete_many", lambda: super(RedisCacheClient, self).delete_many(keys), None, keys)

    def clear(self) -> bool:
        return self._run("clear", lambda: super(RedisCacheClient, self).clear(), False)

    def count_in_window(self, key: str, seconds: int) -> tuple[int, int] | None:
        """Counts one more event in a window of ``seconds`` that starts with its first event.

        Returns the count so far, this one included, and the seconds left in the window;
        ``None`` when Redis is unavailable. ``SET NX EX`` opens the window and ``INCR``
        counts, both in one ``MULTI``, so concurrent processes never lose a count and a
        window never outlives its expiry.
        """

        def count() -> tuple[int, int]:
            pipeline = self.get_client(key, write=True).pipeline(transaction=True)
            pipeline.set(key, 0, ex=seconds, nx=True)
            pipeline.incr(key)
            pipeline.ttl(key)
            _, counted, ttl = pipeline.execute()
            return int(counted), int(ttl) if ttl > 0 else seconds

        return self._run("count_in_window", count, None)


class RedisCache(DjangoRedisCache):
    _cache: RedisCacheClient  # Django's cached property building ``_class``, left out of django-stubs

    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = RedisCacheClient

    def available(self) -> bool:
        return self._cache.available()

    def count_in_window(self, key: str, seconds: int, version: int | None = None) -> tuple[int, int] | None:
        return self._cache.count_in_window(self.make_and_validate_key(key, version=version), seconds)


def count_in_window(cache: BaseCache, key: str, seconds: int) -> tuple[int, int] | None:
    """One more event under ``key`` in a window of ``seconds`` opened by its first event:
    ``(count so far, seconds left)``, or ``None`` when the cache cannot count.

    Atomic across processes on Redis (``RedisCache.count_in_window``). Other backends (the
    in-memory cache of the embedded default, one process) use ``add`` and ``incr``.
    """
    if hasattr(cache, "count_in_window"):  # through django.core.cache.cache, a proxy, too
        return cast("tuple[int, int] | None", cache.count_in_window(key, seconds))
    now = time.time()
    for _ in range(3):
        cache.add(f"{key}:opened", now, seconds)
        cache.add(key, 0, seconds)
        try:
            counted = cache.incr(key)
        except ValueError:  # expired between add and incr: open a new window
            continue
        opened = cache.get(f"{key}:opened", now)
        return counted, max(1, round(opened + seconds - now))
    return None
