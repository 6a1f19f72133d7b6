"""The ladder's admin, one module per admin page: ladders and matches (``ladders``), match
fields, comments and evidence, periodic tasks, suspensions, marks, reports about players, queue formats,
rating settings and prediction quality, and the account page with the accounts sharing a sign-in print
(``players``). Django's autodiscovery imports this package; importing the modules
registers them.
"""

from ladder.admin import (  # noqa: F401 (each module registers its admin)
    conversation,
    fields,
    ladders,
    marks,
    periodic,
    players,
    prediction,
    queue_formats,
    rating_settings,
    reports,
    suspensions,
)
