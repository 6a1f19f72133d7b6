"""Django's Redis cache, keeping one redis-py client per connection pool.

Django's ``RedisCacheClient`` builds a new ``redis.Redis`` for every operation, and
redis-py's constructor fills a table of some 170 response callbacks each time: that cost
more CPU than the ``GET`` it was for. Every request reads its session from this cache
(``cached_db``) and a queue poll reads the searcher count as well. A client only holds
its pool and those callbacks, and is safe to share between threads, so one per pool is
kept.
"""

from __future__ import annotations

from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient as DjangoRedisCacheClient


class RedisCacheClient(DjangoRedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = super().get_client(key, write=write)
        return client


class RedisCache(DjangoRedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = RedisCacheClient
