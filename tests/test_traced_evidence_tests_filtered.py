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
# another module does (`pkg/api.py`, not test code)
OWN_JIT = "\nimport jax\n\nfast_forward = jax.jit(sample_forward)\n"
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


# mistry-lab/mjx_fitted_iteration@heldout13 pin, diff_sim/utils/mj_data_manager.py:34-37:
# `eqx.filter_jit(set_init)`, whose `batch_size` every caller passes as a Python int
# (`indices_to_reset.size`): filter_jit keeps it static, and nothing in `set_init` says whether a
# caller passes an array (path `filtered`); under `jax.jit` the same size is traced (the twin)
FILTERED = """
import equinox as eqx
import jax
import jax.numpy as jnp


def create_data_manager():
    def set_init(ctx, batch_size, key):
        xs = jnp.zeros((batch_size, 3))
        subkeys = jax.random.split(key, batch_size)
        return xs, subkeys

    return eqx.filter_jit(set_init)
"""


def jax3(source: str, preview: bool) -> list[tuple[int, str]]:
    import textwrap

    from jaxfix.engine import analyze
    from jaxfix.engine.config import Config

    result = analyze(textwrap.dedent(source), "t.py", Config(select=("JAX3",), preview=preview))
    assert result.error is None, result.error
    return [(f.line, f.code) for f in result.findings]


def test_an_unannotated_parameter_of_a_filter_jit_function_is_a_preview_finding():
    assert jax3(FILTERED, preview=False) == []
    assert jax3(FILTERED, preview=True) == [(9, "JAX307"), (10, "JAX307")]
    twin = FILTERED.replace("eqx.filter_jit(set_init)", "jax.jit(set_init)")
    assert jax3(twin, preview=False) == [(9, "JAX307"), (10, "JAX307")]
    annotated = FILTERED.replace("def set_init(ctx, batch_size, key)", "def set_init(ctx, batch_size: jax.Array, key)")
    assert jax3(annotated, preview=False) == [(9, "JAX307"), (10, "JAX307")]


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
