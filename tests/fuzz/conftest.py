"""Hypothesis profiles for the fuzz tests, which are all in the long set (see tests/conftest.py).

Every test under this folder is marked `long`: the quick default run leaves the fuzz part out,
`--long` and .ci/run run it (well under a minute of it on 2 cores). `JAXFIX_FUZZ=long`
multiplies every test's example count (see `examples()`), for at least 10,000 generated
programs in total; run it before closing hardening work:

    JAXFIX_FUZZ=long python -m pytest -q -p no:randomly tests/fuzz --long
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

LONG = os.environ.get("JAXFIX_FUZZ", "").lower() == "long"
_COMMON = dict(deadline=None, suppress_health_check=list(HealthCheck), derandomize=not LONG, print_blob=True)
settings.register_profile("jaxfix-fuzz-fast", max_examples=10, database=None, **_COMMON)
settings.register_profile("jaxfix-fuzz-long", max_examples=1000, **_COMMON)
PROFILE = settings.get_profile("jaxfix-fuzz-long" if LONG else "jaxfix-fuzz-fast")


def examples(fast: int, long: int) -> settings:
    """The settings of one fuzz test: `fast` examples normally, `long` under JAXFIX_FUZZ=long."""
    return settings(PROFILE, max_examples=long if LONG else fast)


HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.long)
