"""Aggregates kept as matches are rated: win rates per match-field value and head-to-head records."""

from __future__ import annotations
