"""A match's life: reporting, answers (confirm, dispute, no-show claims), series, comments,
moderators' decisions, what players are told, and the reads the match pages build on.

``reporting`` writes a report in one transaction with the rows locked; ``answers`` takes
the confirmations, disputes and no-show claims; ``decisions`` holds the moderator's
confirm, void and correct; ``notices`` tells people and webhooks; ``sql`` and
``answers_sql`` are the PostgreSQL single round trips of the report and the answers, and
``store`` chooses between them and their ORM twins.
"""
