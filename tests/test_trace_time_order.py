"""JAX404 reads of module globals decided by order (issue #29): a rebinding is reported only when it
can run after a trace and before a later call of the compiled function. Each silent shape comes
from real code (cited) or from the shapes the blind measurement of issue #29 listed, and the buggy
variant beside it, with a real after-trace rebinding, is still reported."""

from __future__ import annotations

import importlib.util
import textwrap

import jax
import jax.numpy as jnp

from jaxfix.engine import analyze
from jaxfix.engine.config import Config
from jaxfix.engine.project import build_project_index


def findings(source: str, path: str = "case.py"):
    result = analyze(textwrap.dedent(source), path, Config(preview=True, select=("JAX404",)))
    assert result.error is None, result.error
    return [(f.line, f.message) for f in result.findings]


def names(source: str) -> list[str]:
    """The globals of the reported reads (`module-level `X``)."""
    out = []
    for _, message in findings(source):
        assert message.startswith("module-level `"), message
        out.append(message.split("`")[1])
    return out


# google/evojax@acf5252475e4fbf47e0e3f7994c03de11dd3c4ca:evojax/task/slimevolley.py: colour globals
# set by `setNightColors()` / `setPixelObsMode()` called once at import; `setDayColors` is never
# called in the module; `Game.setGameState` reads them (traced through the env's jitted step)
EVOJAX_COLOURS = """
import jax
import jax.numpy as jnp

BALL_COLOR = (0, 0, 0)
AGENT_LEFT_COLOR = (0, 0, 0)
PIXEL_AGENT_LEFT_COLOR = (1, 1, 1)


def setNightColors():
    global BALL_COLOR, AGENT_LEFT_COLOR
    BALL_COLOR = (217, 79, 0)
    AGENT_LEFT_COLOR = (35, 93, 188)


def setDayColors():
    global BALL_COLOR, AGENT_LEFT_COLOR
    BALL_COLOR = (255, 200, 20)
    AGENT_LEFT_COLOR = (240, 75, 0)


setNightColors()


def setPixelObsMode():
    global AGENT_LEFT_COLOR
    AGENT_LEFT_COLOR = PIXEL_AGENT_LEFT_COLOR


setPixelObsMode()


@jax.jit
def step(x):
    return x + jnp.asarray(BALL_COLOR)[0] + jnp.asarray(AGENT_LEFT_COLOR)[0]
"""


def test_setters_run_at_import_are_silent():
    assert findings(EVOJAX_COLOURS) == []


def test_setter_called_between_calls_is_reported():
    buggy = EVOJAX_COLOURS + textwrap.dedent(
        """

        def render_day_and_night(x):
            night = step(x)
            setDayColors()  # after `step` was traced: the compiled step keeps the night colours
            return night, step(x)
        """
    )
    assert sorted(names(buggy)) == ["AGENT_LEFT_COLOR", "BALL_COLOR"]


# vwxyzjn/cleanrl@fe8d8a03c41a7ef5b523e2e354bd01c363e786bb:cleanrl/qdagger_dqn_atari_jax_impalacnn.py:
# a script whose `__main__` block rebinds `teacher_params` (init, then loaded from bytes) before it
# defines the jitted `update` that reads it, then calls `update` in the training loop
CLEANRL_SCRIPT = """
import jax
import jax.numpy as jnp

if __name__ == "__main__":
    teacher_params = jnp.zeros(3)
    teacher_params = teacher_params + 1.0  # `flax.serialization.from_bytes(...)`

    @jax.jit
    def update(q, obs):
        return q + obs @ teacher_params

    q = 0.0
    for global_step in range(10):
        q = update(q, jnp.ones(3))
"""


def test_script_rebinding_before_the_traced_function_is_silent():
    assert findings(CLEANRL_SCRIPT) == []


def test_script_rebinding_inside_the_training_loop_is_reported():
    buggy = CLEANRL_SCRIPT + "        teacher_params = teacher_params * 0.5  # after the trace of `update`\n"
    assert names(buggy) == ["teacher_params"]


# issue #29, shapes 1 (blind pool): a table built in NumPy at import and converted to jnp, an int
# constant rebound to `jnp.int32`, and the `f = jax.jit(f)` idiom, all before anything is called
IMPORT_TIME_REBINDINGS = """
import jax
import jax.numpy as jnp
import numpy as np

TABLE = np.linspace(0.0, 1.0, 8)
TABLE = jnp.asarray(TABLE)
N_STEPS = 4
N_STEPS = jnp.int32(N_STEPS)


def energy(x):
    return jnp.sum(TABLE * x) + N_STEPS


energy = jax.jit(energy)
result = energy(jnp.ones(8))
"""


def test_import_time_conversions_are_silent():
    assert findings(IMPORT_TIME_REBINDINGS) == []


def test_conversion_after_the_first_call_is_reported():
    buggy = IMPORT_TIME_REBINDINGS + "TABLE = TABLE * 2  # after `energy(...)` traced: it keeps the old table\n"
    assert names(buggy) == ["TABLE"]


# issue #29, shapes 1: loop locals traced within the same iteration (a notebook's sweep that
# builds and jits its function inside the loop: each iteration traces a new function)
LOOP_LOCAL = """
import jax
import jax.numpy as jnp

for lr in (0.1, 0.01):
    scale = lr * 2

    def loss(w):
        return jnp.sum(w * scale)

    g = jax.grad(loss)(jnp.ones(3))
    step = jax.jit(lambda w: w - scale * w)
    w = step(jnp.ones(3))
"""


def test_function_made_inside_the_loop_is_silent():
    assert findings(LOOP_LOCAL) == []


def test_function_made_outside_the_loop_is_reported():
    buggy = """
    import jax
    import jax.numpy as jnp

    scale = 1.0


    @jax.jit
    def step(w):
        return w - scale * w


    for lr in (0.1, 0.01):
        scale = lr * 2  # iteration 2 rebinds after iteration 1 traced `step`
        w = step(jnp.ones(3))
    """
    assert names(buggy) == ["scale"]


def test_rejitting_a_function_defined_outside_the_loop_still_reuses_its_trace():
    """`jax.jit(step)` inside the loop wraps the same function: jit's cache keeps the first trace."""
    buggy = """
    import jax
    import jax.numpy as jnp

    scale = 1.0


    def step(w):
        return w - scale * w


    for lr in (0.1, 0.01):
        scale = lr * 2
        w = jax.jit(step)(jnp.ones(3))
    """
    assert names(buggy) == ["scale"]


def test_comprehension_and_lambda_variables_are_not_module_globals():
    """A comprehension's `for` target (and a lambda's parameter) is its own scope, even when the
    module rebinds a global of the same name after a trace."""
    source = """
    import jax
    import jax.numpy as jnp

    k = 0
    lr = 0.1


    @jax.jit
    def f(x):
        ys = [x * k for k in range(3)]
        g = lambda lr: x * lr
        return sum(ys) + g(2.0) + {lr: 1 for lr in range(2)}[0]


    for k in range(3):
        f(jnp.ones(2))
        lr = lr * 0.5
    """
    assert findings(source) == []
    read = source.replace("return sum(ys)", "return lr + sum(ys)")
    assert names(read) == ["lr"]


# FLAIROx/Kinetix@fac744975567154a90e4d378ced1ad3f143d57c0:experiments/ppo.py: a logging `callback`
# defined inside the traced update step, with `nonlocal last_time`, passed to `jax.debug.callback`:
# it runs on the host at every step, with concrete values
HOST_CALLBACK = """
import time

import jax
import jax.numpy as jnp
import numpy as np


def make_train(config):
    last_time = time.time()

    def train(rng):
        def update(carry, _):
            x = carry * 2

            def callback(metric):
                nonlocal last_time
                now = time.time()
                print(np.asarray(metric), now - last_time)
                last_time = now

            jax.debug.callback(callback, x)
            jax.debug.callback(lambda m: print(np.mean(m)), x)  # JAX401/402: on the host, not traced
            return x, None

        return jax.lax.scan(update, rng, None, 3)

    return train


out = jax.jit(make_train({}))(jnp.ones(2))
"""


def test_host_callback_is_not_traced_code():
    result = analyze(HOST_CALLBACK, "ppo.py", Config(preview=True, select=("JAX4",)))
    assert result.error is None and result.findings == []


def test_the_same_function_called_in_the_trace_is_reported():
    buggy = HOST_CALLBACK.replace("jax.debug.callback(callback, x)", "callback(x)")
    result = analyze(buggy, "ppo.py", Config(preview=True, select=("JAX404",)))
    assert [f.message.split(" inside")[0] for f in result.findings] == ["assignment to nonlocal `last_time`"]


def test_the_reported_order_is_real(tmp_path):
    """The buggy shape, run: after a trace, a module-level rebinding is not seen by the compiled
    function (the silent shapes rebind before any trace, so the first trace sees the final value)."""
    path = tmp_path / "stale_scale.py"
    path.write_text(
        textwrap.dedent(
            """
            import jax
            import jax.numpy as jnp

            scale = 1.0

            @jax.jit
            def step(w):
                return w * scale

            first = step(jnp.ones(()))
            scale = 3.0
            second = step(jnp.ones(()))
            """
        ),
        encoding="utf-8",
    )
    assert names(path.read_text(encoding="utf-8")) == ["scale"]
    spec = importlib.util.spec_from_file_location("stale_scale", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert float(module.first) == float(module.second) == 1.0  # the compiled step kept scale == 1.0
    assert float(jax.jit(lambda w: w * module.scale)(jnp.ones(()))) == 3.0


# -- JAX402 fix safety: certainly traced, or not safe ---------------------------------------------
# exoplanet-dev/jaxoplanet@6972b779fd9932db50d03ba451c137edcb6406e4: src/jaxoplanet/starry/light_curves.py
# calls `np.atleast_2d(...)` in `surface_light_curve`, which only a test of another module vmaps
# (tests/starry/light_curve_test.py:320, with the surface unmapped: `in_axes=None`): the value there
# is a concrete mpmath-built table, and a "safe" `jnp` rewrite would change working code
LIBRARY = """import numpy as np


def light_curve(table, theta):
    return np.atleast_2d(table) * theta
"""
CALLER = """import jax
import jax.numpy as jnp
from pkg.lib import light_curve


def sweep(table, thetas):
    return jax.vmap(light_curve, in_axes=(0, 0))(table, thetas)
"""


def _project_findings(tmp_path, files: dict[str, str], name: str, select: str = "JAX402"):
    paths = []
    for rel, text in {"pkg/__init__.py": "", **files}.items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        paths.append(str(path))
    index = build_project_index(paths)
    path = next(p for p in paths if p.endswith(name))
    return analyze(open(path, encoding="utf-8").read(), path, Config(preview=True, select=(select,)), project=index).findings


def test_numpy_fix_traced_only_through_another_module_is_unsafe(tmp_path):
    found = _project_findings(tmp_path, {"pkg/lib.py": LIBRARY, "pkg/caller.py": CALLER}, "lib.py")
    assert [(f.code, f.fix.safety.value) for f in found] == [("JAX402", "unsafe")]
    assert "another module" in found[0].message


def test_numpy_fix_under_a_transform_of_its_own_module_stays_safe(tmp_path):
    own = LIBRARY.replace("import numpy as np\n", "import jax\nimport numpy as np\n") + (
        "\n\nsweep = jax.vmap(light_curve)\n"
    )
    found = _project_findings(tmp_path, {"pkg/lib.py": own}, "lib.py")
    assert [(f.code, f.fix.safety.value) for f in found] == [("JAX402", "safe")]


def test_only_transforms_that_keep_their_trace_count():
    """Measured (jax 0.10.2): an eager `jax.vmap(f)(x)` or `jax.grad(f)(x)` traces at every call
    and sees a rebound global; an eager `lax.scan(body, ...)` of a named body keeps its trace
    (3.0 before and after `S = 3.0`), as `jit` does."""
    eager = """
    import jax
    import jax.numpy as jnp
    from jax import lax

    S = 1.0


    def f(x):
        return x * S


    def body(c, x):
        return c + x * S, None


    a = jax.vmap(f)(jnp.ones(2))
    g = jax.grad(f)(1.0)
    S = 3.0
    """
    assert names(eager) == []
    scanned = eager.replace("g = jax.grad(f)(1.0)", "r = lax.scan(body, 0.0, jnp.ones(3))")
    assert names(scanned) == ["S"]


# JAX401 and JAX403 the same way: a site traced only through another module's call is not
# certainly traced, so the rewrite (`jax.debug.print`, `.at[...].set`) is unsafe there
PRINTS = """import numpy as np


def report(x):
    print("value", x)
    return x * 2
"""
UPDATES = """import numpy as np


def bump(x, i):
    x[i] = 0.0
    return x + 1
"""


def _caller(function: str, module: str) -> str:
    return f"import jax\nfrom pkg.{module} import {function}\n\n\ndef run(x):\n    return jax.jit({function})(x)\n"


def test_print_and_update_traced_only_through_another_module_are_unsafe(tmp_path):
    files = {
        "pkg/prints.py": PRINTS,
        "pkg/updates.py": UPDATES,
        "pkg/a.py": _caller("report", "prints"),
        "pkg/b.py": "import jax\nimport jax.numpy as jnp\nfrom pkg.updates import bump\n\n\n"
        "def run(x):\n    return jax.jit(bump)(x, jnp.int32(1))\n",
    }
    printed = _project_findings(tmp_path, files, "prints.py", "JAX401")
    updated = _project_findings(tmp_path, files, "updates.py", "JAX403")
    assert [(f.code, f.fix.safety.value) for f in printed] == [("JAX401", "unsafe")]
    assert [(f.code, f.fix.safety.value) for f in updated] == [("JAX403", "unsafe")]
    assert "another module" in printed[0].message and "another module" in updated[0].message


def test_print_and_update_under_their_own_jit_stay_safe(tmp_path):
    files = {
        "pkg/prints.py": "import jax\n" + PRINTS + "\n\nreport_jit = jax.jit(report)\n",
        "pkg/updates.py": "import jax\n" + UPDATES + "\n\nbump_jit = jax.jit(bump)\n",
    }
    printed = _project_findings(tmp_path, files, "prints.py", "JAX401")
    updated = _project_findings(tmp_path, files, "updates.py", "JAX403")
    assert [(f.code, f.fix.safety.value) for f in printed] == [("JAX401", "safe")]
    assert [(f.code, f.fix.safety.value) for f in updated] == [("JAX403", "safe")]


# google/neural-tangents@c17e770bb74f1771da7be4a69fabfa68b6078960:
# notebooks/Disentangling_Trainability_and_Generalization.ipynb (cells joined as jaxfix reads a
# notebook): `x_train` is rebound in a setup cell after an earlier cell ran a jitted function, but
# the function that reads it is defined (and first traced) only in a later cell: its trace sees
# the last value, so no rebinding can go stale.
NOTEBOOK_SETUP_BEFORE_DEF = """
import jax
import jax.numpy as jnp

x_train = jnp.zeros(3)

@jax.jit
def warm(x):
    return x + 1

warm(x_train)
x_train = jnp.ones(3)

@jax.jit
def experiment(w):
    return w * x_train

experiment(1.0)
"""


def test_a_rebinding_before_the_reading_function_exists_is_silent():
    assert names(NOTEBOOK_SETUP_BEFORE_DEF) == []


def test_a_rebinding_after_the_reading_function_traced_is_still_reported():
    source = NOTEBOOK_SETUP_BEFORE_DEF + "x_train = jnp.full(3, 2.0)\nexperiment(1.0)\n"
    assert names(source) == ["x_train"]
    # and it is a real bug: the second call still multiplies by the traced-in ones
    namespace: dict = {}
    exec(textwrap.dedent(source), namespace)
    assert float(namespace["experiment"](1.0)[0]) == 1.0


def notebook_names(*cells: str) -> list[str]:
    """`names` of a notebook made of `cells` (read in notebook order: nothing runs after the last)."""
    import nbformat

    from jaxfix.engine.notebook import analyze_notebook

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(textwrap.dedent(c).strip()) for c in cells]
    result = analyze_notebook(nbformat.writes(nb), "case.ipynb", Config(preview=True, select=("JAX404",)))
    assert result.error is None, result.error
    return [f.message.split("`")[1] for f in result.findings]


# google/neural-tangents@c17e770bb74f1771da7be4a69fabfa68b6078960:
# notebooks/function_space_linearization.ipynb (cells 25-47): each rebinding of the loss comes with a
# fresh `jit(grad(lambda ...))` bound to `grad_loss` before any later call, so the stale compiled
# function is never called again and every trace sees the loss of its section.
LINEARIZATION_CELLS = (
    """
    import jax
    import jax.numpy as jnp
    from jax import grad, jit

    f = lambda params, x: params * x
    """,
    """
    loss = lambda fx, y_hat: 0.5 * jnp.mean((fx - y_hat) ** 2)
    grad_loss = jit(grad(lambda params, x, y: loss(f(params, x), y)))
    """,
    "for i in range(3):\n    g = grad_loss(1.0, jnp.ones(3), jnp.zeros(3))",
    """
    loss = lambda fx, y_hat: -jnp.mean(fx * y_hat)
    grad_loss = jit(grad(lambda params, x, y: loss(f(params, x), y)))
    """,
    "for i in range(3):\n    g = grad_loss(1.0, jnp.ones(3), jnp.ones(3))",
)


def test_a_stale_compiled_function_replaced_before_its_next_call_is_silent():
    assert notebook_names(*LINEARIZATION_CELLS) == []
    namespace: dict = {}
    exec("\n".join(textwrap.dedent(c) for c in LINEARIZATION_CELLS), namespace)
    # the second section's gradient is the new loss's: -mean(x * y) / d params = -1
    assert float(namespace["g"]) == -1.0


def test_the_stale_compiled_function_called_after_the_rebinding_is_reported():
    # the buggy twin: the loss is rebound but `grad_loss` is not rebuilt, so the old trace runs
    # `loss` is only called in traced code: it holds a function, and a stale read of one is not
    # reported (`held_objects`: on the spent pools every such read was wrong), a known miss
    cells = (*LINEARIZATION_CELLS[:3], "loss = lambda fx, y_hat: -jnp.mean(fx * y_hat)", LINEARIZATION_CELLS[4])
    assert notebook_names(*cells) == []
    namespace: dict = {}
    exec("\n".join(textwrap.dedent(c) for c in cells), namespace)
    assert float(namespace["g"]) != -1.0  # still the first loss's gradient
    # the same order with a number the traced code reads as data is reported
    scaled = (
        LINEARIZATION_CELLS[0],
        "scale = 1.0\ngrad_loss = jit(grad(lambda params, x, y: scale * jnp.mean((f(params, x) - y) ** 2)))",
        LINEARIZATION_CELLS[2],
        "scale = -1.0",
        LINEARIZATION_CELLS[4],
    )
    assert notebook_names(*scaled) == ["scale"]


# google-deepmind/mujoco_playground@d5e6b47531328468da1eec33b8b304a00bb0873c:
# learning/notebooks/vision.ipynb (cells 19-33): `do_rollout` reads `ppo_params.episode_length`;
# `ppo_params` is rebound for a second section, which redefines `step` and `do_rollout` and jits the
# methods of new environments before calling them: the first `do_rollout` is never called again.
ROLLOUT_CELLS = (
    """
    import jax
    import jax.numpy as jnp

    class Env:
        def reset(self, rng):
            return jnp.zeros(3)

    ppo_params = {"episode_length": 2}
    """,
    """
    def step(carry, _):
        return carry + 1, carry

    @jax.jit
    def do_rollout(state):
        _, traj = jax.lax.scan(step, state, None, length=ppo_params["episode_length"])
        return traj

    traj = do_rollout(jnp.zeros(3))
    """,
    'ppo_params = {"episode_length": 4}',
    """
    wrapped_env = Env()
    jit_reset = jax.jit(wrapped_env.reset)

    def step(carry, _):
        return carry + 2, carry

    @jax.jit
    def do_rollout(state):
        _, traj = jax.lax.scan(step, state, None, length=ppo_params["episode_length"])
        return traj

    traj = do_rollout(jit_reset(0))
    """,
)


def test_a_redefined_rollout_after_the_rebinding_is_silent():
    assert notebook_names(*ROLLOUT_CELLS) == []
    namespace: dict = {}
    exec("\n".join(textwrap.dedent(c) for c in ROLLOUT_CELLS), namespace)
    assert namespace["traj"].shape == (4, 3)


def test_calling_the_first_rollout_after_the_rebinding_is_reported():
    cells = (*ROLLOUT_CELLS[:3], "traj = do_rollout(jnp.zeros(3))")
    assert notebook_names(*cells) == ["ppo_params"]
    namespace: dict = {}
    exec("\n".join(textwrap.dedent(c) for c in cells), namespace)
    assert namespace["traj"].shape == (2, 3)  # the stale episode length


def test_a_new_jit_of_an_old_function_keeps_its_stale_trace():
    # `jax.jit(update)` of a function defined (and traced) before the rebinding shares its trace
    cells = (
        "import jax\nimport jax.numpy as jnp\nscale = 1.0",
        "def update(x):\n    return x * scale\n\nfast = jax.jit(update)\ny = fast(1.0)",
        "scale = 2.0\nfast = jax.jit(update)\ny = fast(1.0)",
    )
    assert notebook_names(*cells) == ["scale"]
    namespace: dict = {}
    exec("\n".join(cells), namespace)
    assert float(namespace["y"]) == 1.0


# probml/probml-notebooks@4c0da5e918930e02de5f3e78278c90efe5688b66:notebooks/gp_deep_kernel_learning.ipynb
# (cells 9 and 13): `loss` reads the module-level `model`; the second cell rebinds `model` and
# builds `loss_grad_fn = jax.jit(jax.value_and_grad(loss))` again: `value_and_grad` makes a new
# function object, so the new jit has its own cache and traces with the new model (measured,
# jax 0.10.2), unlike `jax.jit(update)` of the same function above
GP_CELLS = (
    "import jax\nimport jax.numpy as jnp\nmodel = 1.0",
    "def loss(p):\n    return model * p ** 2\n\nloss_grad_fn = jax.jit(jax.value_and_grad(loss))\n"
    "for i in range(2):\n    val, grad = loss_grad_fn(1.0)",
    "model = 3.0\nloss_grad_fn = jax.jit(jax.value_and_grad(loss))\nfor i in range(2):\n    val, grad = loss_grad_fn(1.0)",
)


def test_a_new_jit_of_a_new_gradient_function_traces_again():
    assert notebook_names(*GP_CELLS) == []
    namespace: dict = {}
    exec("\n".join(GP_CELLS), namespace)
    assert float(namespace["grad"]) == 6.0  # the new model


def test_calling_the_old_gradient_function_after_the_rebinding_is_reported():
    cells = (*GP_CELLS[:2], "model = 3.0\nval, grad = loss_grad_fn(1.0)")
    assert notebook_names(*cells) == ["model"]
    namespace: dict = {}
    exec("\n".join(cells), namespace)
    assert float(namespace["grad"]) == 2.0  # the stale model


# google/learned_optimization@32186aa:docs/notebooks/Part1_Introduction.py, the jupytext
# (light format) copy of Part1_Introduction.ipynb: `update` (@jax.jit) reads `opt` and `task`,
# bound just before it; `opt` is rebound twice further down, but no later line calls `update`.
# A jupytext file is a notebook: nothing imports it and calls `update` after its last line.
JUPYTEXT_PART1 = """
# ---
# jupyter:
#   jupytext:
#     formats: ipynb,md:myst,py
#     text_representation:
#       extension: .py
#       format_name: light
# ---

# +
import jax
import jax.numpy as jnp


class Adam:
    def __init__(self, lr):
        self.lr = lr

    def update(self, state, grads):
        return state - self.lr * grads


task_scale = 2.0
opt = Adam(1e-2)


@jax.jit
def update(state, batch):
    grads = jax.grad(lambda s: jnp.sum((task_scale * s - batch) ** 2))(state)
    return opt.update(state, grads)


state = jnp.ones(3)
for i in range(5):
    state = update(state, jnp.zeros(3))

# +
opt = Adam(1.0)
opt.update(state, jnp.ones(3))
"""


def test_jupytext_notebook_rebinding_after_its_last_call_is_not_reported():
    assert names(JUPYTEXT_PART1) == []
    # the twin: a later cell calls the stale `update` after `task_scale` is rebound (`opt`, an object
    # `update` only reads attributes of, is not reported: `held_objects`)
    later = "\n# +\ntask_scale = 3.0\nstate = update(state, jnp.zeros(3))\n"
    assert names(JUPYTEXT_PART1 + later) == ["task_scale"]
    # without jupytext's header it is a module: an importer may call `update` after the rebinding
    plain = JUPYTEXT_PART1.split("# ---\n\n", 1)[1] + "task_scale = 3.0\n"
    assert names(plain) == ["task_scale"]


# google/learned_optimization@32186aa:learned_optimization/summary.py: `summary()` is "for use
# exclusively inside jax functions": it names its oryx tag from the scope stack that
# `summary_scope` (a @contextmanager) pushes and pops around its `yield`, and dedups names in the
# module dict `count_per_tags` with Python ints. Trace-time bookkeeping by design.
SUMMARY = """
import contextlib

import jax
import jax.numpy as jnp

_summary_scope_stack = []
count_per_tags = {}


@contextlib.contextmanager
def summary_scope(val):
    _summary_scope_stack.append(val)
    try:
        yield
    finally:
        _summary_scope_stack.pop(-1)


def summary(name, val):
    prefix = "/".join(_summary_scope_stack)
    if prefix:
        name = prefix + "/" + name
    if name in count_per_tags:
        count_per_tags[name] += 1
        name += "___%d" % count_per_tags[name]
    else:
        count_per_tags[name] = 0
    return val


@jax.jit
def loss(x):
    with summary_scope("inner"):
        return summary("loss", jnp.sum(x))
"""


def test_trace_time_naming_state_of_a_library_is_not_reported():
    assert findings(SUMMARY) == []
    # twins: a traced value kept in the module dict (a leaked tracer), and a stack that another
    # function empties at run time (not a scope around a `yield`)
    leaked = SUMMARY.replace("count_per_tags[name] = 0", "count_per_tags[name] = val")
    assert [line for line, _ in findings(leaked)] == [28]
    emptied = SUMMARY.replace("        yield\n", "        pass\n")
    assert names(emptied) == ["_summary_scope_stack"]


# lockwo/distreqx@544d83f1:examples/02_mixture_models.ipynb: a later cell redefines
# `@eqx.filter_jit def step` (reading the global `optimizer`), rebinds `optimizer` below it and
# only then loops over `step(...)`: the new `step` is traced first by that loop, with the new
# optimizer, and the old `step` is never called again.
STEP_CELLS = (
    """
    import jax
    import jax.numpy as jnp

    scale = 1.0

    @jax.jit
    def step(x):
        return x * scale

    y = step(1.0)
    """,
    """
    @jax.jit
    def step(x):
        return x * scale + 1.0

    scale = 2.0
    y = step(1.0)
    """,
)


def test_a_jitted_def_first_called_after_the_rebinding_is_silent():
    assert notebook_names(*STEP_CELLS) == []
    namespace: dict = {}
    exec("\n".join(textwrap.dedent(c) for c in STEP_CELLS), namespace)
    assert float(namespace["y"]) == 3.0  # the new scale


def test_a_jitted_def_called_before_the_rebinding_is_reported():
    cells = (STEP_CELLS[0], STEP_CELLS[1].replace("scale = 2.0", "y = step(1.0)\n    scale = 2.0"))
    assert notebook_names(*cells) == ["scale", "scale"]  # at each def that reads it
    namespace: dict = {}
    exec("\n".join(textwrap.dedent(c) for c in cells), namespace)
    assert float(namespace["y"]) == 2.0  # the stale scale


# google-research/self-organising-systems@3d5547ca48b60ecac459834e2c05c9ff5df87991:
# notebooks/diffLogic_CA.ipynb (cells 17, 41, 52): each experiment cell rebinds `opt` and defines
# a new `@jax.jit def train_step` reading it; what runs later with an older trace is another
# compiled function (`run_sync`, the visualisation) that never reads `opt`: no stale read.
EXPERIMENT_CELLS = (
    """
    import jax
    import jax.numpy as jnp

    opt = 0.1

    @jax.jit
    def train_step(p):
        return p - opt * p

    @jax.jit
    def run_sync(p):
        return jnp.tanh(p)

    p = train_step(1.0)
    """,
    """
    opt = 0.5

    @jax.jit
    def train_step(p):
        return p - opt * p

    p = train_step(1.0)
    """,
    """
    frames = run_sync(p)
    """,
)


def test_a_rebinding_matters_only_to_compiled_functions_called_after_it_that_read_it():
    assert notebook_names(*EXPERIMENT_CELLS) == []
    namespace: dict = {}
    exec("\n".join(textwrap.dedent(c) for c in EXPERIMENT_CELLS), namespace)
    assert float(namespace["p"]) == 0.5  # the new train_step saw the new opt


def test_an_old_compiled_function_that_reads_the_rebound_global_is_still_reported():
    """The twin: the second cell rebinds `opt` without redefining `train_step`, and the third
    calls the old one, whose trace kept the old value."""
    cells = (
        EXPERIMENT_CELLS[0],
        "opt = 0.5\n",
        "p = train_step(1.0)\nframes = run_sync(p)\n",
    )
    assert notebook_names(*cells) == ["opt"]
    namespace: dict = {}
    exec("\n".join(textwrap.dedent(c) for c in cells), namespace)
    assert abs(float(namespace["p"]) - 0.9) < 1e-6  # the stale opt = 0.1


def test_a_loop_cell_that_calls_and_rebinds_stays_reported_whatever_runs_later():
    """A cell whose loop calls `train_step` and then rebinds `opt` is stale within the loop, even
    when a later cell only calls another old compiled function (`run_sync`)."""
    cells = (
        EXPERIMENT_CELLS[0],
        "for _ in range(2):\n    p = train_step(p)\n    opt = opt * 2\n",
        "frames = run_sync(p)\n",
    )
    assert notebook_names(*cells) == ["opt"]


# cgarciae/nnx@b4c31367a42f62360575018a21012c3dbb084131:docs/tiny_nnx.ipynb (cell 6) and
# nnx/transforms.py:464: a lifted init under an eager `jax.vmap` writes the static module
# structure to a `nonlocal`; vmap runs the body (and the write) at every call, and the unpacked
# result is not shown to be traced
NNX_LIFTED_INIT = """
import jax


def partition(key):
    return jax.random.normal(key, (3,)), ("Block", 3)


def make(keys):
    moduledef = None

    def init_fn(key):
        nonlocal moduledef
        state, moduledef = partition(key)
        return state

    state = jax.vmap(init_fn)(keys)
    return moduledef, state
"""


def test_nonlocal_unpacked_under_eager_vmap_is_not_reported():
    assert findings(NNX_LIFTED_INIT) == []
    moduledef, state = importlib_module(NNX_LIFTED_INIT).make(jax.random.split(jax.random.key(0), 2))
    assert moduledef == ("Block", 3) and state.shape == (2, 3)


def test_nonlocal_under_jit_or_leaking_a_tracer_under_vmap_is_still_reported():
    jitted = NNX_LIFTED_INIT.replace("jax.vmap(init_fn)(keys)", "jax.jit(jax.vmap(init_fn))(keys)")
    assert [m.split(" inside")[0] for _, m in findings(jitted)] == ["assignment to nonlocal `moduledef`"]
    leak = NNX_LIFTED_INIT.replace(
        "state, moduledef = partition(key)", "state, _ = partition(key)\n        moduledef = state * 2"
    )
    ((line, message),) = findings(leak)
    assert "leaks" in message


def importlib_module(source: str):
    spec = importlib.util.spec_from_loader("nnx_case", loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(textwrap.dedent(source), module.__dict__)
    return module


# probml/probml-notebooks@4c0da5e918930e02de5f3e78278c90efe5688b66:notebooks/smc_tempered_1d_bimodal.ipynb
# (cells 17 and 19): a cell redefines `cond_fun`, rebinds `buffer_size` below it, and only then
# hands it to an eager `lax.while_loop`: its first trace sees the new value (an eager lax call
# keeps its body's trace, as jit does: the old `cond_fun` would have answered with the stale one)
WHILE_CELLS = (
    "import jax\nn = 1",
    "def cond(c):\n    return c < n\n\ndef body(c):\n    return c + 1\n\nout = jax.lax.while_loop(cond, body, 0)",
    "def cond(c):\n    return c < n\n\nn = 3\nout = jax.lax.while_loop(cond, body, 0)",
)


def test_a_lax_body_redefined_before_the_rebinding_traces_with_the_new_value():
    assert notebook_names(*WHILE_CELLS) == []
    namespace: dict = {}
    exec("\n".join(WHILE_CELLS), namespace)
    assert int(namespace["out"]) == 3


def test_the_old_lax_body_after_the_rebinding_is_reported():
    cells = (*WHILE_CELLS[:2], "n = 3\nout = jax.lax.while_loop(cond, body, 0)")
    assert notebook_names(*cells) == ["n"]
    namespace: dict = {}
    exec("\n".join(cells), namespace)
    assert int(namespace["out"]) == 1  # the stale bound


# ucl-dark/pax@6ae3d078f006f3f63835575311eab9833e034575:proof_of_concept.ipynb (cells 3, 11 and 13): `rollout` reads the
# global `env_params` and is scanned once, in its own cell; a later loop scans its own `_rollout`
# (which takes `env_params` through the carry) and rebinds `env_params` each iteration: the stale
# calls run `_rollout`, never `rollout`
PAX_CELLS = (
    "import jax\nimport jax.numpy as jnp\nenv_params = 1.0",
    "def rollout(carry, _):\n    return carry + env_params, carry\n\nfinal, traj = jax.lax.scan(rollout, 0.0, None, length=2)",
    "def _rollout(carry, _):\n    x, p = carry\n    return (x + p, p), x",
    "for _ in range(3):\n    (x, env_params), traj = jax.lax.scan(_rollout, (0.0, env_params), None, length=2)\n"
    "    env_params = env_params + 1.0",
)


def test_a_loop_rebinding_reaches_only_what_its_compiled_calls_run():
    assert notebook_names(*PAX_CELLS) == []
    namespace: dict = {}
    exec("\n".join(PAX_CELLS), namespace)
    assert float(namespace["env_params"]) == 4.0


def test_a_loop_that_scans_the_reader_again_is_reported():
    cells = (
        *PAX_CELLS[:2],
        PAX_CELLS[3].replace("_rollout, (0.0, env_params)", "rollout, 0.0").replace("(x, env_params), traj", "x, traj"),
    )
    assert notebook_names(*cells) == ["env_params"]
    namespace: dict = {}
    exec("\n".join(cells), namespace)
    assert float(namespace["x"]) == 2.0  # the stale env_params of the first trace


# MilesCranmer/lagrangian_nns@2fc26cbf584416628e82ab49f7266a6a8bfe932e:notebooks/auto_trainer.py
# (reduced; the stax `optimizers.adam` triple is written out): `update_derivative` (@jax.jit) calls
# the module's `opt_update` and `get_params`, which the training loop rebinds at every trip to a
# new optimizer with the same learning rate. Names traced code only calls (or reads attributes of)
# hold functions and objects: such a rebinding comes with an equal object or with arguments of a
# new structure (a retrace), and every such finding on the spent pools was wrong (`held_objects`).
# The twin reads a number the loop rebinds (`l2reg`) as data: the first trace keeps it.
LAGRANGIAN_TRAINER = """
import jax
import jax.numpy as jnp


def opti(lr):
    return (lambda p: p), (lambda i, g, s: s - lr * g), (lambda s: s)


@jax.jit
def update_derivative(i, opt_state, batch):
    grads = jax.grad(lambda p: jnp.sum((p - batch) ** 2) + l2reg * jnp.sum(p**2))(get_params(opt_state))
    return opt_update(i, grads, opt_state)


l2reg = 0.0
results = []
for trip in range(2):
    opt_init, opt_update, get_params = opti(0.1)
    opt_state = opt_init(jnp.ones(3))
    for i in range(2):
        opt_state = update_derivative(i, opt_state, jnp.zeros(3))
    results.append(opt_state)
"""


def test_a_rebound_optimizer_read_only_as_a_function_is_silent():
    assert names(LAGRANGIAN_TRAINER) == []
    namespace: dict = {}
    exec(textwrap.dedent(LAGRANGIAN_TRAINER), namespace)
    # each trip's optimizer equals the first: the trace made with the first gives the same steps
    first, second = namespace["results"]
    assert jnp.allclose(first, second)


def test_a_rebound_number_read_as_data_is_still_reported():
    twin = LAGRANGIAN_TRAINER.replace("for trip in range(2):\n", "for trip in range(2):\n    l2reg = 0.1 * trip\n")
    assert names(twin) == ["l2reg"]
    namespace: dict = {}
    exec(textwrap.dedent(twin), namespace)
    first, second = namespace["results"]
    assert jnp.allclose(first, second)  # l2reg = 0.1 on the second trip is never seen: stale
