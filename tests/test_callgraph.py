"""The project call graph (`jaxfix.analysis.callgraph` through `ProjectIndex.cross_entries`): a
function that traced code of another module calls with traced arguments is analysed as traced,
on real multi-module projects in temporary folders, with the same answer from a lazy and a
complete index, and nothing claimed where an argument is static. Its conditions are reported
where that module shows them traced (an array operation: `jnp.sum(x) > limit`); a bare
parameter that only another module makes traced is not (`proven_traced`: on code nobody tuned
on, such findings were all wrong)."""

from __future__ import annotations

from pathlib import Path

import pytest
from fixture_cases import analyze_in_project

from jaxfix.batch import BatchOptions, run_paths
from jaxfix.engine import analyze
from jaxfix.engine.config import Config, ConfigResolver
from jaxfix.engine.project import build_project_index

HELPER = """import jax.numpy as jnp


def clip(x, limit):
    if jnp.sum(x) > limit:
        return x / limit
    return x


def count(T, dt):
    return int(jnp.ceil(T / dt))
"""


def project(tmp_path: Path, files: dict[str, str]) -> list[str]:
    out = []
    for name, text in {"pkg/__init__.py": "", **files}.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        out.append(str(path))
    return out


def findings(paths: list[str], name: str, *, lazy: bool = True) -> list:
    index = build_project_index(paths, lazy=lazy)
    path = next(p for p in paths if p.endswith(name))
    return analyze(Path(path).read_text(), path, Config(), project=index).findings


def codes(paths, name, **kw) -> list[str]:
    return sorted(f.code for f in findings(paths, name, **kw))


@pytest.mark.parametrize("lazy", [True, False])
def test_helper_called_from_jit_in_another_module(tmp_path, lazy):
    paths = project(
        tmp_path,
        {
            "pkg/helpers.py": HELPER,
            "pkg/model.py": "import jax\nfrom pkg.helpers import clip, count\n\n\n@jax.jit\ndef step(x, T):\n"
            "    return clip(x, 2.0) * count(T, 0.1)\n",
        },
    )
    found = findings(paths, "helpers.py", lazy=lazy)
    assert sorted(f.code for f in found) == ["JAX301", "JAX304"]
    message = next(f.message for f in found if f.code == "JAX304")
    assert "`step` (jitted, " in message and "model.py:6" in message and "calls `count` with `T` traced" in message
    # without the index the helper module is just functions
    helpers = next(p for p in paths if p.endswith("helpers.py"))
    assert analyze(HELPER, helpers, Config()).findings == []


def test_static_arguments_are_not_traced(tmp_path):
    caller = """import jax
from functools import partial
from pkg.helpers import clip, count


@partial(jax.jit, static_argnames=("T",))
def step(x, T):
    n = x.shape[0]
    return clip(3.0, n) * count(T, 0.1) + count(len(x), x.ndim)
"""
    paths = project(tmp_path, {"pkg/helpers.py": HELPER, "pkg/model.py": caller})
    assert codes(paths, "helpers.py") == []


def test_through_several_levels_and_modules(tmp_path):
    paths = project(
        tmp_path,
        {
            "pkg/helpers.py": HELPER,
            "pkg/middle.py": "from pkg import helpers\n\n\ndef scale(v, T):\n    w = v * 2\n    return helpers.count(w, T)\n",
            "pkg/model.py": "import jax\nfrom pkg.middle import scale\n\n\ndef body(c, t):\n    return c + scale(t, 0.1), None\n\n\n"
            "def run(xs):\n    return jax.lax.scan(body, 0.0, xs)\n",
        },
    )
    found = findings(paths, "helpers.py")
    assert [f.code for f in found] == ["JAX304"]
    assert "`scale` (traced, " in found[0].message  # the caller that is itself only traced


def test_methods_of_known_classes_and_construction(tmp_path):
    shapes = """import jax.numpy as jnp


class Grid:
    def __init__(self, thickness, check=True):
        self.thickness = thickness
        if check and jnp.any(thickness < 0):
            raise ValueError("negative")

    def place(self, resolution):
        self.sigma = float(-jnp.log(1e-8) / (2 * self.thickness * resolution))
        return self
"""
    caller = """import jax
from pkg.shapes import Grid


@jax.jit
def simulate(resolution, field):
    grid = Grid(10)
    return field * grid.place(resolution).sigma + Grid(field).thickness
"""
    paths = project(tmp_path, {"pkg/shapes.py": shapes, "pkg/model.py": caller})
    found = findings(paths, "shapes.py")
    # `place` gets a traced resolution (`self` stays a Python object: not a pytree); `__init__`
    # a traced thickness from `Grid(field)` (`Grid(10)` alone would give it nothing)
    assert sorted((f.code, f.line) for f in found) == [("JAX301", 7), ("JAX304", 11)]
    alone = project(tmp_path / "alone", {"pkg/shapes.py": shapes, "pkg/model.py": caller.replace(" + Grid(field).thickness", "")})
    assert sorted((f.code, f.line) for f in findings(alone, "shapes.py")) == [("JAX304", 11)]


def test_uncalled_and_eager_callers_give_nothing(tmp_path):
    caller = "import jax.numpy as jnp\nfrom pkg.helpers import clip\n\n\ndef eager(x):\n    return clip(x, 2.0)\n"
    paths = project(tmp_path, {"pkg/helpers.py": HELPER, "pkg/model.py": caller})
    assert codes(paths, "helpers.py") == []
    assert build_project_index(paths).cross_entries("pkg.helpers") == {}


def test_cached_check_sees_an_edit_of_the_caller(tmp_path, monkeypatch):
    """The helper's cached result is keyed on what other modules make traced in it: removing the
    caller's `jax.jit` must not replay the cached finding."""
    caller = "import jax\nfrom pkg.helpers import count\n\n\n@jax.jit\ndef step(T):\n    return count(T, 0.1)\n"
    paths = project(tmp_path, {"pkg/helpers.py": HELPER, "pkg/model.py": caller})
    monkeypatch.chdir(tmp_path)
    options = BatchOptions(cache_dir=str(tmp_path / "cache"), workers=1)

    def run() -> list[str]:
        return sorted(f.code for f in run_paths([str(tmp_path / "pkg")], ConfigResolver(), options).findings)

    assert run() == ["JAX304"]
    (tmp_path / "pkg" / "model.py").write_text(caller.replace("@jax.jit\n", ""))
    assert run() == []
    assert Path(paths[1]).read_text() == HELPER


def test_the_projects_own_functions_are_not_staged_jax_operations(tmp_path):
    """jax's pallas `ragged_paged_attention` (checked as part of jax): a static helper of the
    package computes block sizes from shapes and passes them to another module's helper; that the
    package is named `jax` does not make its own functions staged jax operations."""
    paths = project(
        tmp_path,
        {
            "jax/__init__.py": "",
            "jax/ops/__init__.py": "",
            "jax/ops/sizes.py": "def tuned(n_heads, pages):\n    if n_heads > 4:\n        return min(pages, 8)\n    return pages\n",
            "jax/ops/kernel.py": "import jax\nfrom jax.ops.sizes import tuned\n\n\ndef heads_per_block(n):\n    return n // 2\n\n\n"
            "@jax.jit\ndef attention(q, pages):\n    n = heads_per_block(q.shape[1])\n    return q * tuned(n, pages.shape[0])\n",
        },
    )
    paths = [p for p in paths if not p.endswith("pkg/__init__.py")]
    assert codes(paths, "sizes.py") == []


LOSS = """import jax.numpy as jnp


def check_finite(x):
    if not jnp.all(jnp.isfinite(x)):
        raise ValueError("non-finite")
    return x


def loss_fn(cfg, params, x, mode="mse"):
    if cfg.activation == "tanh":
        params = jnp.tanh(params)
    if mode == "mse":
        return jnp.mean(check_finite(params * x) ** 2)
    return jnp.mean(jnp.abs(params * x))
"""


@pytest.mark.parametrize(
    "wrapper",
    [
        "jax.jit(partial(loss_fn, cfg))",
        "jax.jit(jax.value_and_grad(partial(loss_fn, cfg), argnums=0))",
        "jax.jit(partial(loss_fn, cfg=cfg), static_argnames=('mode',))",
    ],
)
def test_an_imported_function_jitted_here_is_entered_with_what_a_partial_binds_left_static(tmp_path, wrapper):
    """A training loop jits a partial of a loss defined in another module: the loss's arrays are
    traced (so the helper it calls raises on `if`), the config the partial binds is not (its
    `if cfg.activation == ...` is fine), nor a static argument or a literal default."""
    train = f"""from functools import partial

import jax

from pkg.losses import loss_fn


def train(params, batches, cfg):
    for x in batches:
        loss = {wrapper}(params, x)
    return loss
"""
    paths = project(tmp_path, {"pkg/losses.py": LOSS, "pkg/train.py": train})
    found = findings(paths, "losses.py")
    assert [(f.code, f.line) for f in found] == [("JAX301", 5)]
    assert findings(paths, "losses.py", lazy=False) == found
    entered = build_project_index(paths).cross_entries("pkg.losses")
    assert set(entered) == {"loss_fn"}
    # `mode` keeps its literal default unless a call passes it, which is not known here
    assert entered["loss_fn"].traced == {"params", "x"}
    assert "`loss_fn` is jitted at " in entered["loss_fn"].reason


def test_a_folder_without_init_is_a_namespace_package(tmp_path):
    """`mypkg/` has no `__init__.py`; `from mypkg.losses import loss_fn` still names
    `mypkg/losses.py` (run from the folder above it), which the index calls `losses`."""
    files = {
        "mypkg/losses.py": LOSS,
        "mypkg/train.py": "import jax\n\nfrom mypkg.losses import check_finite\n\nstep = jax.jit(check_finite)\n",
        "other/losses.py": LOSS,
    }
    paths = []
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        paths.append(str(path))
    assert [(f.code, f.line) for f in findings(paths[:2], "losses.py")] == [("JAX301", 5)]
    # two files named `losses`: which one `mypkg.losses` is follows from the path, not the name
    index = build_project_index(paths, lazy=True)
    assert index.call_summary("mypkg.losses") is None  # both are indexed as `losses`: ambiguous
    assert index.call_summary("elsewhere.losses") is None


def test_a_lazy_call_summary_answers_and_pickles_as_the_eager_one():
    """The propagation's summaries find a function's calls when it is looked up
    (`summarize_calls(lazy=True)`): each lookup, the entries, and the pickled form (what a summary
    store keeps: a plain dict in the eager order, the last def of a name winning) are the eager ones."""
    import ast
    import pickle

    from jaxfix.analysis.callgraph import summarize_calls

    source = (
        "import jax\nfrom pkg import helpers\n\n\ndef f(x):\n    return helpers.g(x)\n\n\n"
        "class C:\n    def m(self, x):\n        return f(x)\n\n\ndef f(x):\n    return helpers.h(x)\n\n\n"
        "step = jax.jit(f)\n"
    )
    tree = ast.parse(source)
    eager = summarize_calls(tree, "pkg.mod", "pkg/mod.py")
    lazy = summarize_calls(tree, "pkg.mod", "pkg/mod.py", lazy=True)
    assert lazy.entries == eager.entries and lazy.entries
    assert all(lazy.functions.get(name) == info for name, info in eager.functions.items())
    assert lazy.functions.get("missing") is None and "missing" not in lazy.functions
    back = pickle.loads(pickle.dumps(lazy))
    assert type(back.functions) is dict and list(back.functions.items()) == list(eager.functions.items())
    assert back == eager
    # the project's store record takes the entries of the entries-only summary (`module_facts`)
    light = summarize_calls(tree, "pkg.mod", "pkg/mod.py", calls=False)
    assert summarize_calls(tree, "pkg.mod", "pkg/mod.py", entries_of=light) == eager


SAMPLER = """import jax


class Sampler:
    def __init__(self, params):
        self.params = params
        self._compiled_sample_fn = jax.jit(self._sample_fn)

    def _sample_fn(self, params, state):
        i = 0
        while i < 3:
            print(state)
            state = state + params
            i += 1
        return state

    def __call__(self, state):
        return self._sample_fn(self.params, state)
"""


def test_a_jitted_function_stored_where_nothing_reads_it_traces_nothing(tmp_path):
    """demon2036/MLLM-JAX@8b19c02 deprecated/MLLM_JAX/language/gemma/sampler.py:127 (heldout12,
    JAX302/JAX401 wrong): `self._compiled_sample_fn = jax.jit(self._sample_fn)`, its calls commented
    out, `__call__` runs `_sample_fn` eagerly; the print shows concrete values. The twin calls the
    stored jit: the print runs at trace time. A list of files is not the whole tree: any module
    not shown may read the attribute."""
    run = "from pkg.sampler import Sampler\n\nSampler(1.0)(2.0)\n"

    def codes_of(text: str, whole_tree: bool = True) -> list[str]:
        files = {"pkg/__init__.py": "", "pkg/sampler.py": text, "pkg/run.py": run}
        result = analyze_in_project(tmp_path, files, "pkg/sampler.py", "ALL", whole_tree)
        return sorted(f.code for f in result.findings)

    assert codes_of(SAMPLER) == []
    assert "JAX401" in codes_of(SAMPLER, whole_tree=False)
    called = SAMPLER.replace("return self._sample_fn(self.params", "return self._compiled_sample_fn(self.params")
    assert "JAX401" in codes_of(called)
    # read by name through `getattr`/`hasattr`: read too (the module's reads are listed once per file)
    plain = "return self._sample_fn(self.params"
    by_name = SAMPLER.replace(plain, 'return getattr(self, "_compiled_sample_fn")(self.params')
    assert "JAX401" in codes_of(by_name)
    asked = SAMPLER.replace(plain, 'return hasattr(self, "_compiled_sample_fn") and self._sample_fn(self.params')
    assert "JAX401" in codes_of(asked)
