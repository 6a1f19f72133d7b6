"""Infrastructure every app may use and that imports no app of the project.

The database-vendor switch and prepared statements (``core.db``), the fail-open Redis
cache (``core.cache``), the Celery retry policy (``core.tasks``), the JSON error body
(``core.errors``), the site-wide middleware and the template context processor.
"""
