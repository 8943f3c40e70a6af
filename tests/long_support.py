"""Sweeps over many cases: a few stay in the quick set, the rest are marked `long` (see conftest.py).

`quick_and_long(cases, group=..., keep=1)` gives pytest params: the first `keep` cases of each
group (a fixture family, say) run in the quick set, every other case carries the `long` mark and
runs with `--long` (.ci/run). `eligible` narrows which cases may be quick (one that rewrites
something, say). The cases are taken in the order given, so a case added to a sorted list is long
unless it sorts first in its family; nothing lists cases by name.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

import pytest

T = TypeVar("T")
LONG = pytest.mark.long


def quick_and_long(
    cases: Iterable[T],
    *,
    group: Callable[[T], Any] = lambda case: None,
    keep: int = 1,
    eligible: Callable[[T], bool] = lambda case: True,
) -> list[Any]:
    """`cases` as pytest params: the first `keep` eligible cases of each `group(case)` quick, the others long."""
    quick: dict[Any, int] = {}
    params = []
    for case in cases:
        key = group(case)
        if quick.get(key, 0) < keep and eligible(case):
            quick[key] = quick.get(key, 0) + 1
            params.append(pytest.param(case))
        else:
            params.append(pytest.param(case, marks=LONG))
    return params
