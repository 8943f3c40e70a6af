"""A function only another module's test code traces is a preview finding's home (issue #29).

eightmm/FoldJAX@heldout13 pin, `src/foldjax/models/boltz2/models/trunk_blocks/trunk.py:569-636`:
`boltz2_sample_forward` is jitted only by `tests/models/boltz2/scripts/profile_warm_stages.py:90`,
which passes no `steering_args`; the FK-steering block under `if steering_on:` converts array
results (`bool(noise_var > 0)`) and never runs there (the project runs it eagerly, `api.py`).
sgl-project/sglang-jax@heldout12 pin `python/sgl_jax/srt/layers/sampler.py:245,278` is the same
path (`test_sampler_deterministic_cond.py:89` is the only jit of the sampler). Each is still
reported with `--preview`, and by default where a transform of the function's own module, or the
project's own code of another module, traces it (the buggy twins).
"""

from __future__ import annotations

from pathlib import Path

from jaxfix.batch import BatchOptions, run_paths
from jaxfix.engine.config import ConfigResolver

TRUNK = """
import jax.numpy as jnp

_COLLECTED = {}


def capture(name, value):
    _COLLECTED[name] = value
    return value


def sample_forward(params, feats, steering_args=None):
    noise_var = jnp.mean(feats) * 0.0
    if steering_args is not None:
        noise_positive = bool(noise_var > 0)
        feats = feats + noise_positive
    return capture("out", feats * params)
"""

SCRIPT = """
import jax

from pkg.trunk import sample_forward

profile = jax.jit(sample_forward)
"""

# the buggy twins: the library module jits the function itself, or the project's own code of
# another module does (`pkg/api.py`, not test code); the module's own jit is used (a jit alias
# nothing uses traces nothing: `project_lookups.name_used`, heldout26's sfincs_jax driver)
OWN_JIT = (
    "\nimport jax\n\nfast_forward = jax.jit(sample_forward)\n\n\n"
    "def run(params, feats):\n    return fast_forward(params, feats)\n"
)
API = "import jax\n\nfrom pkg.trunk import sample_forward\n\nrun = jax.jit(sample_forward)\n"


def findings(tmp_path: Path, trunk: str, preview: bool, api: str | None = None) -> list[tuple[str, int, str]]:
    root = tmp_path / ("preview" if preview else "default")
    (root / "pkg").mkdir(parents=True)
    (root / "tests" / "scripts").mkdir(parents=True)
    (root / "pyproject.toml").write_text(f"[tool.jaxfix]\npreview = {'true' if preview else 'false'}\n")
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "trunk.py").write_text(trunk)
    (root / "tests" / "scripts" / "profile_stages.py").write_text(SCRIPT)
    if api is not None:
        (root / "pkg" / "api.py").write_text(api)
    outcome = run_paths([str(root)], ConfigResolver(), BatchOptions(workers=1))
    return sorted((Path(f.path).name, f.line, f.code) for f in outcome.findings if f.code[:4] == "JAX3")


def test_a_function_only_a_test_script_jits_is_reported_only_in_preview(tmp_path):
    assert findings(tmp_path, TRUNK, preview=False) == []
    assert findings(tmp_path, TRUNK, preview=True) == [("trunk.py", 15, "JAX304")]


def test_the_same_function_jitted_by_its_own_module_is_reported_by_default(tmp_path):
    expected = [("trunk.py", 15, "JAX304")]
    assert findings(tmp_path, TRUNK + OWN_JIT, preview=False) == expected


def test_the_same_function_jitted_by_the_projects_own_code_elsewhere_is_reported_by_default(tmp_path):
    expected = [("trunk.py", 15, "JAX304")]
    assert findings(tmp_path, TRUNK, preview=False, api=API) == expected


# imewei/rheojax@b79e79e rheojax/utils/mittag_leffler.py:119: `jax, jnp = safe_import_jax()` (a
# project helper), so `jnp.isrealobj(z_arr)` reads as what a helper returns (path `helper`,
# preview); the dtype test is a Python bool, and the `lax.cond` rewrite raised TypeError (branches
# of different dtypes): the fix is unsafe. A condition on the parameter itself keeps its safe fix.
HELPER_DTYPE_TEST = """
import jax
from rheo.core.jax_config import safe_import_jax

jax, jnp = safe_import_jax()


@jax.jit
def ml(z_arr):
    return z_arr.astype(float) if jnp.isrealobj(z_arr) else z_arr.astype(complex)
"""


def test_a_safe_fix_of_a_helper_condition_is_unsafe():
    import textwrap

    from jaxfix.engine import analyze
    from jaxfix.engine.config import Config
    from jaxfix.model import Safety

    def fixes(source: str) -> list[tuple[int, Safety]]:
        result = analyze(textwrap.dedent(source), "t.py", Config(select=("JAX3",), preview=True))
        assert result.error is None, result.error
        return [(f.line, f.fix.safety) for f in result.findings]

    assert fixes(HELPER_DTYPE_TEST) == [(10, Safety.UNSAFE)]
    twin = HELPER_DTYPE_TEST.replace("jnp.isrealobj(z_arr)", "z_arr > 0")
    assert fixes(twin) == [(10, Safety.SAFE)]
