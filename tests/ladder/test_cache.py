"""The shared cache: Django's Redis backend, with one redis-py client per connection pool."""

from __future__ import annotations

from django.core.cache import caches

from core.cache import RedisCache


def test_the_cache_is_redis_and_reuses_its_client():
    cache = caches["default"]
    assert isinstance(cache, RedisCache)
    cache.set("greeting", {"hello": "world"}, timeout=10)

    assert cache.get("greeting") == {"hello": "world"}
    assert cache._cache.get_client() is cache._cache.get_client(write=True)
    assert cache.delete("greeting") and cache.get("greeting") is None
