"""The pytest plugin of ``make mutate``: engine tests run without Django, the suite's conftest or luck.

``setup.cfg``'s ``[mutmut]`` loads it with ``-p``. Hypothesis draws the same examples on every
run (``derandomize``) and keeps no database of failures, so whether a mutant is killed does
not depend on the mutants tried before it; no deadline, since a mutant may be slow without
being wrong; no shrinking, since the first failing example already kills the mutant.
``@settings`` on a test (``max_examples=300``) still applies.
"""

from __future__ import annotations

from hypothesis import Phase, settings

settings.register_profile(
    "mutation",
    derandomize=True,
    database=None,
    deadline=None,
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)
settings.load_profile("mutation")
