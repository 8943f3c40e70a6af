"""The engine: one file's text in, findings and fixes out, for every front end.

`pipeline.analyze(source, path, config) -> FileResult` is the heart. Around it: the rule
`registry`, `config` (pyproject tables), `fixing` (the scan-and-fix loop), `noqa`/`suppression`,
`incremental` and `chunkparse` (re-analysing only what an edit changed, for the editor),
`discovery`, `source` (decoding), `runner` (the process pool, in two passes when a project index
is in use), `cache` and `session` (what a run reuses from the last: results, module records, the
call graph's answer), `project` (the project index), `writer` (atomic writes) and `gitutil`.

`analyze` and `selected_rules` are importable from here; they load lazily so that importing a
small engine module (a writer, the decoder) does not import every rule.
"""

from __future__ import annotations

from typing import Any

__all__ = ["analyze", "selected_rules"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from jaxfix.engine import pipeline

        return getattr(pipeline, name)
    raise AttributeError(name)
