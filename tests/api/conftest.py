"""Helpers of the API tests; the cast and its API clients are in tests/conftest.py."""

from __future__ import annotations


def report_body(ladder, a="alice", b="bob", **extra):
    """A 1 v 1 report body: ``a`` beat ``b``."""
    return {
        "ladder": ladder.slug,
        "sides": [{"players": [a], "placement": 1}, {"players": [b], "placement": 2}],
        **extra,
    }


def error_of(response) -> dict:
    body = response.json()
    assert set(body) == {"error"}, body
    assert set(body["error"]) == {"code", "message", "fields"}, body
    return body["error"]
