"""Hypothesis profiles for the fuzz tests.

Default (`fast`): the whole fuzz part runs in well under a minute on 2 cores as part of the
normal suite. `JAXFIX_FUZZ=long` multiplies every test's example count (see `examples()`),
for at least 10,000 generated programs in total; run it before closing hardening work:

    JAXFIX_FUZZ=long python -m pytest -q -p no:randomly tests/fuzz
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

LONG = os.environ.get("JAXFIX_FUZZ", "").lower() == "long"
_COMMON = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=not LONG, print_blob=True)
settings.register_profile("jaxfix-fuzz-fast", max_examples=10, database=None, **_COMMON)
settings.register_profile("jaxfix-fuzz-long", max_examples=1000, **_COMMON)
PROFILE = settings.get_profile("jaxfix-fuzz-long" if LONG else "jaxfix-fuzz-fast")


def examples(fast: int, long: int) -> settings:
    """The settings of one fuzz test: `fast` examples normally, `long` under JAXFIX_FUZZ=long."""
    return settings(PROFILE, max_examples=long if LONG else fast)
