"""`jaxfix.verifyFix`: differential verification of one fix, from the editor.

The verification engine (`jaxfix.verify`) is built separately. Until it is part
of this installation, the command answers that verification is not available
yet, rather than pretending to have checked anything.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from typing import Any

from jaxfix.model import Finding

UNAVAILABLE = (
    "jaxfix: fix verification is not available yet in this version of jaxfix "
    "(the differential verification engine, jaxfix.verify, is not installed); "
    "the fix has NOT been verified"
)


def available() -> bool:
    try:
        return importlib.util.find_spec("jaxfix.verify") is not None and _entry_point() is not None
    except (ImportError, ValueError):
        return False


def _entry_point() -> Callable[..., Any] | None:
    return None  # no verification API exists yet to call


def verify_one(source: str, path: str, finding: Finding, report: Callable[[str], None]) -> dict[str, Any]:
    entry = _entry_point()
    if entry is None:
        return {"verdict": "unavailable", "detail": UNAVAILABLE}
    report(f"verifying {finding.code} at line {finding.line}")
    return entry(source, path, finding)
