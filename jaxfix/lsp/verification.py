"""`jaxfix.verifyFix`: differential verification of one fix, from the editor.

The fix is applied to the editor's text (with the imports it needs) and the
original and rewritten modules are run side by side by `jaxfix.verify`
(`verify_change`), in fresh subprocesses, exactly as `jaxfix verify` does. When
that engine is not part of this installation, the command answers that
verification is not available, rather than pretending to have checked anything.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
from collections.abc import Callable
from typing import Any

from jaxfix.edits import apply_edits
from jaxfix.model import Finding

UNAVAILABLE = (
    "jaxfix: fix verification is not available yet in this version of jaxfix "
    "(the differential verification engine, jaxfix.verify, is not installed); "
    "the fix has NOT been verified"
)


def _entry_point() -> Callable[..., Any] | None:
    try:
        module = importlib.import_module("jaxfix.verify.api")
    except ImportError:
        return None
    return getattr(module, "verify_change", None)


def available() -> bool:
    """Whether the engine is installed; cheap (finds the module without importing it)."""
    try:
        return importlib.util.find_spec("jaxfix.verify.api") is not None
    except (ImportError, ValueError):
        return False


def _plain(value: Any) -> Any:
    """JSON-safe copy of evidence data (numbers, strings, lists, dicts)."""
    return json.loads(json.dumps(value, default=str))


def verify_one(source: str, path: str, finding: Finding, fixed: str, report: Callable[[str], None]) -> dict[str, Any]:
    """Verify that `fixed` (the source with `finding`'s fix applied) behaves like `source`."""
    verify_change = _entry_point()
    if verify_change is None:
        return {"verdict": "unavailable", "detail": UNAVAILABLE}
    report(f"running the original and the fixed {finding.code} side by side")
    outcome = verify_change(source, fixed, path, findings=[finding])
    evidence = outcome.evidence
    own = next((f.fix.evidence for f in getattr(outcome, "findings", []) if f.fix is not None and f.fix.evidence), None)
    if own is not None and own.verdict == "ineffective":
        evidence = own  # the fix's own verdict: it behaves alike but removes no compile
    return {
        "verdict": evidence.verdict,
        "detail": evidence.detail,
        "data": _plain(evidence.data),
        "device": getattr(outcome, "device", ""),
    }


def fixed_text(source: str, edits) -> str:
    return apply_edits(source, edits)
