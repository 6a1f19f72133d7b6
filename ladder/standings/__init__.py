"""Where players stand: ranking (in Python and in SQL), the leaderboard and its cache,
snapshots, the nightly job, the rating-settings changes and the charts; ``store`` chooses
between each ranking's SQL and its Python twin.

It reads matches only through the models: it imports neither ``ladder.matches`` nor
``ladder.pages``.
"""
