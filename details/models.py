"""A ladder's match fields (map, tribe, ...), their values, statistics and head-to-head records."""

from __future__ import annotations
