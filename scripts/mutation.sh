#!/usr/bin/env bash
# Mutation check of codemods/pytree_cache/ against its fast unit/fixture tests
# (configuration: [tool.mutmut] in pyproject.toml; mutmut is a dev tool, install it with
# `pip install mutmut`). mutmut 3 copies the project into mutants/ (git-ignored).
# Usage: scripts/mutation.sh [-j N]     then: mutmut results / mutmut show <name>
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
MUTMUT=${MUTMUT:-$(dirname "$(command -v "$PY")")/mutmut}
JOBS=2
if [[ "${1:-}" == "-j" ]]; then JOBS=$2; fi
"$MUTMUT" run --max-children "$JOBS"
"$MUTMUT" results --all true | sed 's/.*: //' | sort | uniq -c
