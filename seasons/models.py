"""A ladder's seasons: archived standings, peak ranks, badges and the soft reset."""

from __future__ import annotations
