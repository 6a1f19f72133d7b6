"""Match fields (a game's details: map, tribe, length): checking a report's values and
reading them back for pages and the API (docs/match-fields.md).
"""
