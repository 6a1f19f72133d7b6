"""The gates a report passes before it counts: fair play's limits and suspensions; and the
moderation desk's reads. It imports nothing of ``ladder.matches``: the match services call it.
"""
