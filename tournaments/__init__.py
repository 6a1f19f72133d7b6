"""A ladder's tournaments: Swiss, round robin, elimination and groups then playoffs, for players or teams.

``formats`` holds the pure rules (pairings, brackets, standings, tie-breaks, competition
points; no Django); the rest is the Django app whose games are the ladder's matches.
"""
