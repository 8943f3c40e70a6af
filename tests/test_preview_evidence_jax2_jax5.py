"""Which JAX2xx/JAX5xx evidence reports by default and which only in preview (issue #29: the
paths in `codemods/jit_placement/preview.py` and `codemods/compile_cost/preview.py`, decided from
the blind pools' first-contact labels). Each case is shaped after labelled code: the default side
is reported with `preview` False, the preview side is reported with `preview` True."""

from __future__ import annotations

import textwrap

from jaxfix.engine import analyze
from jaxfix.engine.config import Config


def found(source: str, code: str) -> list[tuple[int, bool]]:
    """(line, preview) of each finding of `code`, preview findings included."""
    config = Config(select=(code,))
    if "preview" in Config.__dataclass_fields__:
        config = Config(select=(code,), preview=True)
    result = analyze(textwrap.dedent(source), "case.py", config)
    assert result.error is None, result.error
    return [(f.line, f.preview) for f in result.findings if f.code == code]


# --- JAX202 -------------------------------------------------------------------------------------

SCENIC = """
    import jax


    def all_gather_and_unreplicate(inputs):
        return jax.pmap(lambda x: jax.lax.all_gather(x, "batch"), "batch")(inputs)


    def evaluate(eval_steps, batches):
        for step in range(eval_steps):
            gathered = all_gather_and_unreplicate(next(batches))
    """


def test_jax202_a_function_called_in_a_counted_loop_is_default():
    """google-research/scenic@4a38d475 scenic/projects/svvit/inference.py:195 (heldout3, real): a
    fresh `pmap(lambda)` in a helper called once per `for step in range(eval_steps)`."""
    assert found(SCENIC, "JAX202") == [(6, False)]


def test_jax202_a_function_called_once_per_item_of_a_collection_is_preview():
    """NX-AI/xlstm-jax@0f3ebc2d scripts/speed_benchmark/run_jax_kernel_comparison.py:67 (heldout11,
    wrong): called once per `.npz` file, each a new configuration that compiles anyway."""
    per_file = SCENIC.replace("for step in range(eval_steps):", "for step in eval_steps:")
    assert found(per_file, "JAX202") == [(6, True)]


def test_jax202_a_method_without_a_caller_in_the_module_is_preview():
    """awslabs/fortuna@19c7d9c1 fortuna/prob_model/predictive/classification.py:301 (heldout9,
    real) beside simply's `init_sampling_state` (heldout5, wrong): a method's callers are elsewhere,
    and whether they run it per step or once the module does not show."""
    method = """
        import jax
        import jax.numpy as jnp


        class Predictive:
            def aleatoric_entropy(self, outputs):
                @jax.jit
                def _entropy_term(i):
                    return jnp.sum(outputs[i])

                return jax.vmap(_entropy_term)(jnp.arange(3))
        """
    assert [preview for _, preview in found(method, "JAX202")] == [True]


# --- JAX501 / JAX504 / JAX505 / JAX502 ----------------------------------------------------------


def test_jax501_an_unwaited_jitted_step_is_default_and_arrays_made_from_host_data_are_preview():
    """avitai/opifex@9f906dc9 examples/data/darcy_flow_spectral_analysis.py:203 (heldout11, wrong):
    the timed region's JAX work is `jnp.asarray` of the NumPy arrays a solver returned; the twin
    times a jitted step (the README's canonical bug), reported by default."""
    made = """
        import time

        import jax
        import jax.numpy as jnp
        import numpy as np


        def generate(n):
            return np.ones((n, 8))


        start_time = time.time()
        data = generate(100)
        train_inputs = jnp.asarray(data)
        generation_time = time.time() - start_time
        print(generation_time)
        """
    assert found(made, "JAX501") == [(16, True)]
    stepped = made.replace("train_inputs = jnp.asarray(data)", "train_inputs = step(data)").replace(
        "def generate(n):", "step = jax.jit(lambda x: x * 2)\n\n\n        def generate(n):"
    )
    assert found(stepped, "JAX501") == [(19, False)]


def test_jax501_a_timer_that_says_it_measures_compilation_is_preview():
    """NikolaRaicevic2001/Object-Informed-Manipulation-MJX@066d7b1 tests/test_cube.py:38-46
    (heldout13, debatable): "Time to jit" around the first call of a jitted step, which compiles
    synchronously, so the figure is compile plus dispatch by construction; the next region, "Time
    to run 100 steps" over the same step, is the real bug and stays default. Also
    aidancrilly/MiniCourse-DifferentiableSimulation@5e0bb7b 00_JAXIntro.ipynb cell 12:
    `compile_time = timeit(...)` preview, `jit_time = timeit(...)` default."""
    source = """
        import time
        import timeit

        import jax
        import jax.numpy as jnp


        @jax.jit
        def step(x):
            return jnp.tanh(x @ x)


        x = jnp.ones((8, 8))
        st = time.time()
        x = step(x)
        print(f"Time to jit: {time.time() - st:.3f}s")

        st = time.time()
        for _ in range(100):
            x = step(x)
        run_time = time.time() - st
        print(f"Time to run 100 steps: {run_time:.3f}s")

        compile_time = timeit.timeit(lambda: step(x), number=1)
        jit_time = timeit.timeit(lambda: step(x), number=100) / 100
        """
    assert found(source, "JAX501") == [(17, True), (22, False), (25, True), (26, False)]
    # Reytuag/transformerXL_PPO_JAX@d914d55 train_PPO_trXL.py:57 (heldout7, real): words that name
    # the run as well, "training and compilation took", miss what they claim: default
    both = source.replace("Time to jit: ", "training and compilation took ")
    assert found(both, "JAX501") == [(17, False), (22, False), (25, True), (26, False)]
    # arpastrana/jax_fdm@<heldout14> optimizer.py:376 ('warmup time', debatable), and
    # GalSim-developers/JAX-GalSim@e2b1029 tests/jax/test_photon_shooting_jax.py:183
    # (`time_code_block("one warmup")`, debatable): a warm-up block times the first call, which compiles
    warmup = source.replace("Time to jit: ", "warmup time: ")
    assert found(warmup, "JAX501") == [(17, True), (22, False), (25, True), (26, False)]


def test_jax501_the_print_of_the_measured_name_labels_the_timer():
    """bradknox/distillation-jax@<heldout20> examples/setpoint_tracking.py:88 (wrong): `jit_time =
    time.time() - t0` closes the region of two warm-up calls (which compile synchronously), and the
    next statement prints `f"JIT compilation done in {jit_time:.1f}s"`: that print is the timer's
    label, a compile label (preview). A print of the name that says it ran the steps stays default,
    and so does a compile word in a print that does not read the measurement."""
    source = """
        import time

        import jax
        import jax.numpy as jnp


        @jax.jit
        def sim_fn(x):
            return jnp.tanh(x @ x)


        x = jnp.ones((8, 8))
        t0 = time.time()
        _ = sim_fn(x)
        jit_time = time.time() - t0
        print(f"LABEL {jit_time:.1f}s")
        """
    assert found(source.replace("LABEL", "JIT compilation done in"), "JAX501") == [(16, True)]
    assert found(source.replace("LABEL", "1000 simulation steps done in"), "JAX501") == [(16, False)]
    other = source.replace('print(f"LABEL {jit_time:.1f}s")', 'print("JIT compilation done")\n        print(jit_time)')
    assert found(other, "JAX501") == [(16, False)]
    # sgl-project/sglang-jax@<heldout12> weight_utils.py:1871 (real): an `if` block after the closing
    # read logs several timers under other words ("MoE tensor load"): not this timer's label
    block = source.replace('print(f"LABEL {jit_time:.1f}s")', 'if verbose:\n            print(f"JIT compilation done in {jit_time:.1f}s")')
    assert found(block, "JAX501") == [(16, False)]


def test_jax501_a_setup_timer_whose_last_work_is_eager_is_preview():
    """koldunovn/fesom_jax@0383a17 scripts/archive/core2_grad_gate.py:112 (heldout13, wrong, and
    five siblings): "[setup] built mesh+IC+forcing in" times file reading and NumPy; what it leaves
    in flight is an eager `jnp.sum` of a mask, not the computation. aliang8/varibad_jax@e36a2a7
    varibad_jax/utils/data_utils.py:474 ("loading data took", wrong) ends in a `random.permutation`.
    A set-up timer whose last work is a jitted call, or words naming a run, stay default."""
    source = """
        import time

        import jax
        import jax.numpy as jnp
        import numpy as np


        @jax.jit
        def step(x):
            return jnp.tanh(x @ x)


        def build(n):
            mesh = np.ones((n, n))
            return jnp.asarray(mesh), jnp.sum(jnp.asarray(mesh))


        t0 = time.time()
        mesh = np.load("mesh.npy")
        wet = jnp.asarray(mesh)
        nwet = jnp.sum(wet)
        print(f"[setup] built mesh in {time.time() - t0:.1f}s")

        t0 = time.time()
        mask, total = build(8)
        print(f"[setup] built in {time.time() - t0:.1f}s")

        t0 = time.time()
        out = step(wet)
        print(f"[setup] built in {time.time() - t0:.1f}s")
        """
    assert found(source, "JAX501") == [(23, True), (27, True), (31, False)]
    runs = source.replace("[setup] built mesh in", "loaded and ran the step in")
    assert found(runs, "JAX501") == [(23, False), (27, True), (31, False)]


def test_jax501_an_eager_tail_after_a_wait_on_the_step_is_preview():
    """JAX_Based_RL_For_multiagent-game-@8bdc096 src/training/train_ppo_flax.py:487 (wrong, and
    two siblings): each PPO epoch ends with `state.block_until_ready()`, so every `train_batch` is
    done; what is in flight at the clock is the `jnp.mean(jnp.stack(...))` of metrics that are
    ready. The twin that never waits (flax's knowledge_distillation.py:358, heldout6 real: the
    jitted steps and their `jnp.mean` are all in flight) stays default."""
    source = """
        import time

        import jax
        import jax.numpy as jnp


        @jax.jit
        def train_batch(state, batch):
            return state - 0.1 * batch, jnp.sum(batch)


        def update(state, batches):
            t1 = time.time()
            losses = []
            for batch in batches:
                state, loss = train_batch(state, batch)
                losses.append(loss)
            state.block_until_ready()
            mean_loss = jnp.mean(jnp.stack(losses))
            t_update = time.time() - t1
            print(f"update took {t_update:.2f}s")
            return state, mean_loss
        """
    assert found(source, "JAX501") == [(21, True)]
    never_waits = source.replace("            state.block_until_ready()\n", "")
    assert found(never_waits, "JAX501") == [(20, False)]


def test_jax501_a_method_of_the_arrays_holder_called_after_the_work_is_preview():
    """guglielmopadula/bayesian_naval_hull_numpyro@98a749f bayesian_methods/bayes_nb_mle.py:48
    (heldout21, wrong, eleven copies): `mcmc.run(...)`, `jnp.sum(mcmc.get_extra_fields()[...])`,
    then `mcmc.print_summary()`, which reads the samples back to the host, before the clock. A
    method of another library on the object the arrays came from may read them: preview. A
    pytree node's `replace` (jaxMARL's `training_state.replace(...)`, heldout16 real) reads
    nothing, and a region without the call stays default."""
    source = """
        import time

        import jax.numpy as jnp
        from numpyro.infer import MCMC, NUTS


        def run_inference(model, rng_key, X, Y):
            start = time.time()
            mcmc = MCMC(NUTS(model), num_warmup=500, num_samples=1000)
            mcmc.run(rng_key, X, Y)
            divergences = jnp.sum(mcmc.get_extra_fields()["diverging"])
            mcmc.print_summary()
            print("MCMC elapsed time:", time.time() - start)
            return mcmc.get_samples(), divergences
        """
    assert found(source, "JAX501") == [(14, True)]
    no_summary = source.replace("            mcmc.print_summary()\n", "")
    assert found(no_summary, "JAX501") == [(13, False)]
    replaced = source.replace("mcmc.print_summary()", "mcmc.replace(seed=0)")
    assert found(replaced, "JAX501") == [(14, False)]


def test_jax501_eager_work_after_a_helper_that_waits_on_the_host_is_preview():
    """Ceyron/machine-learning-and-simulation@b8ee2b1 english/adjoints_sensitivities_automatic_
    differentiation/adjoint_non_linear_system_jax_jacobians.py:157 and :181 (heldout22, wrong): each
    timed region calls `obtain_root(theta)`, whose `scipy.optimize.root` runs on the host and
    converts what it is given; what is in flight at the clock is a 4-element eager tail. A helper
    that only hands its argument on to JAX stays default."""
    source = """
        import time

        import jax.numpy as jnp
        from scipy import optimize


        def residual(x, theta):
            return jnp.array([x[0] + theta[0] * (x[0] - x[1]) ** 3 + theta[1], theta[2] * (x[0] - theta[3])])


        def obtain_root(theta):
            result = optimize.root(fun=residual, x0=jnp.zeros(2), args=(theta,))
            return result.x


        def loss(x):
            return 0.5 * jnp.linalg.norm(x) ** 2


        theta = jnp.array([1.0, -2.0, 1.0, 1.2])
        start = time.time_ns()
        x = obtain_root(theta)
        grads = jnp.linalg.solve(jnp.eye(2), x)
        took = time.time_ns() - start
        print(took, grads)
        """
    assert found(source, "JAX501") == [(25, True)]
    on_device = source.replace("result = optimize.root(fun=residual, x0=jnp.zeros(2), args=(theta,))\n            return result.x", "return jnp.tanh(theta[:2])")
    assert found(on_device, "JAX501") == [(24, False)]


def test_jax501_a_setup_timer_ending_in_a_method_of_the_class_reads_that_method():
    """pavinpp/MSc-MCM-JAX@<heldout17> src/base.py:403 ("Time to create the grid mask", the timed
    `self.create_grid_mask(...)` ends in a jitted streaming step: default, labelled debatable). A
    method reached as `self.m(...)` is read as a helper of the file: eager work only is preview,
    a jitted call inside keeps the default."""
    source = """
        import time

        import jax
        import jax.numpy as jnp


        @jax.jit
        def streaming(g):
            return jnp.roll(g, 1)


        class Lattice:
            def create_grid_mask(self, n):
                grid = jnp.ones((n, n), dtype=bool)
                return jnp.logical_not(grid)

            def setup(self):
                start = time.time()
                grid_mask = self.create_grid_mask(8)
                print("Time to create the grid mask:", time.time() - start)
                return grid_mask
        """
    assert found(source, "JAX501") == [(21, True)]
    jitted = source.replace("return jnp.logical_not(grid)", "return streaming(jnp.logical_not(grid))")
    assert found(jitted, "JAX501") == [(21, False)]


def test_jax501_a_log_in_the_region_that_says_it_compiles_is_preview():
    """phlippe/jax_trainer@f749d34 jax_trainer/trainer/trainer.py:583 and NX-AI/xlstm-jax
    trainer.py:868 (heldout10, heldout11, debatable): `logging.info("Testing and compiling
    eval_step...")` inside the region announces a compile timer."""
    source = """
        import logging
        import time

        import jax
        import jax.numpy as jnp


        @jax.jit
        def eval_step(x):
            return jnp.tanh(x)


        def verify(x):
            start_time = time.time()
            logging.info("Testing and compiling eval_step...")
            _ = eval_step(x)
            logging.info(f"Successfully completed in {time.time() - start_time:.2f} seconds.")
        """
    assert found(source, "JAX501") == [(18, True)]
    assert found(source.replace("Testing and compiling", "Evaluating"), "JAX501") == [(18, False)]


def test_jax504_a_time_cell_over_a_loop_of_steps_is_preview():
    """jeremiecoullon/SGMCMCJax@cb900970 docs/nbs/BNN.ipynb cell 5 (heldout7, wrong): `%%time` over
    2000 dependent jitted kernel steps; only the last in flight escapes the clock. A `%%time` cell of
    one step stays default."""
    loop = """
        import jax
        import jax.numpy as jnp

        kernel = jax.jit(lambda s: s * 0.5)
        state = jnp.ones(100_000)
        kernel(state).block_until_ready()
        # %%time
        for i in range(2000):
            state = kernel(state)
        """
    assert found(loop, "JAX504") == [(8, True)]
    one = loop.replace("for i in range(2000):\n            state = kernel(state)", "state = kernel(state)")
    assert found(one, "JAX504") == [(8, False)]


def test_jax505_is_preview():
    """jeremiecoullon/SGMCMCJax@cb900970 docs/nbs/gaussian.ipynb cell 6 (heldout7, debatable): every
    first-contact JAX505 label was not real (0 of 9)."""
    first = """
        import jax
        import jax.numpy as jnp

        sampler = jax.jit(lambda x: jnp.cumsum(x))
        x = jnp.ones(10)
        # %%time
        samples = sampler(x)
        """
    assert found(first, "JAX505") == [(7, True)]


# --- JAX201 / JAX203 / JAX204: how often the loop runs the call -----------------------------------

BRAX = """
    import jax
    from brax.positional import pipeline


    def rollout(sys, state, act):
        for i in range(1000):
            state = jax.jit(pipeline.step)(sys, state, act)
        return state
    """


def test_jax203_a_long_counted_loop_is_default_and_a_handful_of_trips_is_preview():
    """google/brax@0b96d056 notebooks/basics.ipynb cell 10 (dev, real): `jax.jit(pipeline.step)`
    re-wrapped on each of 1000 steps; pierreglaser/jax-tutorial@071c923c tutorial.ipynb cell 70
    (heldout11, wrong): re-wrapped on 5 repetitions per sample size, nothing measurable to save."""
    assert found(BRAX, "JAX203") == [(8, False)]
    assert found(BRAX.replace("range(1000)", "range(5)"), "JAX203") == [(8, True)]


NNX_LOOP = """
    import optax
    from flax import nnx


    @nnx.jit
    def train_step(model, optimizer, x, y):
        return model(x).mean()


    def fit(batches, num_iter):
        model = nnx.Linear(2, 1, rngs=nnx.Rngs(0))
        optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)
        for x, y in batches:
            loss = train_step(model, optimizer, x, y)
        return loss
    """


def test_jax204_a_step_on_every_trip_is_default():
    """The rule's canonical case (a step per batch; jinPrelude/minimal-rl-nnx@c5eced1f ppo.py:165,
    heldout12, real: `sample_action` on every rollout step)."""
    assert found(NNX_LOOP, "JAX204") == [(15, False)]


def test_jax204_a_step_once_per_outer_trip_few_trips_or_periodic_is_preview():
    """jinPrelude/minimal-rl-nnx@c5eced1f ppo.py:185 (heldout12, debatable): `bootstrap_value` once
    per iteration, after a rollout loop of host env steps; avitai/artifex@5fce040a
    examples/generative_models/loss_examples.py:357 (heldout11, debatable): 5 trips; shayme92/Titans-NNX@2c0a3346
    training/train_mac.py:156 (heldout12, debatable): an eval every 200 steps."""
    per_iteration = NNX_LOOP.replace(
        "        for x, y in batches:\n            loss = train_step(model, optimizer, x, y)",
        "        for it in range(num_iter):\n"
        "            for x, y in batches:\n"
        "                pass\n"
        "            loss = train_step(model, optimizer, x, y)",
    )
    assert found(per_iteration, "JAX204") == [(17, True)]
    few = NNX_LOOP.replace("for x, y in batches:", "for x in range(5):").replace("x, y)", "x, x)")
    assert found(few, "JAX204") == [(15, True)]
    periodic = NNX_LOOP.replace(
        "            loss = train_step(model, optimizer, x, y)",
        "            if x % 200 == 0:\n                loss = train_step(model, optimizer, x, y)",
    )
    assert found(periodic, "JAX204") == [(16, True)]


def test_jax204_a_step_that_scans_over_its_minibatches_is_preview():
    """jinPrelude/minimal-rl-nnx@c5eced1f ppo.py:204 (heldout12, debatable, and nine siblings):
    `update_ppo` (`@nnx.jit`) runs an `@nnx.scan` inner def over every minibatch, so each call does
    many steps of work and the per-call traversal is a small share of it; the same call of a step
    that does one batch's work is the rule's canonical case."""
    scanning = NNX_LOOP.replace(
        "        return model(x).mean()",
        "        @nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)\n"
        "        def one(carry, batch):\n"
        "            return carry + model(batch).mean()\n"
        "\n"
        "        return one(0.0, x)",
    )
    assert found(scanning, "JAX204") == [(19, True)]
    fori = NNX_LOOP.replace(
        "        return model(x).mean()", "        return jax.lax.fori_loop(0, 8, lambda i, c: c + model(x).mean(), 0.0)"
    ).replace("import optax", "import jax\n    import optax")
    assert found(fori, "JAX204") == [(16, True)]
    assert found(NNX_LOOP, "JAX204") == [(15, False)]


def test_jax202_written_out_values_are_preview_and_a_comprehension_is_default():
    """cabouman/mbirjax@851a1ca2 .../minimal_lax_map_repro.py:429 and deqn-jax/deqn-jax@52cba20d
    scripts/aio_head_to_head.py:213 (heldout12, wrong): a loop over written-out numbers that were
    settings (views, sample counts); the rule's canonical `[step(x) for x in xs]` over data (no
    first-contact label) stays default."""
    listed = SCENIC.replace("for step in range(eval_steps):", "for step in [1, 2, 4]:")
    assert found(listed, "JAX202") == [(6, True)]
    comprehension = SCENIC.replace(
        "for step in range(eval_steps):\n            gathered = all_gather_and_unreplicate(next(batches))",
        "return [all_gather_and_unreplicate(b) for b in batches]",
    )
    assert found(comprehension, "JAX202") == [(6, False)]


def test_jax202_a_function_no_loop_of_the_module_calls_is_preview():
    """HajimeKawahara/exojax@ef541ef documents/tutorials/Reverse_modeling.ipynb cell 19 (heldout14,
    wrong): the fresh `jit(vmap(...))` sits in `obyo`, which runs only inside the numpyro model
    `model_c`, which NUTS traces once: the inner jit is inlined into that trace. No loop calling it
    is shown (the `callback` path: 4 real, 4 wrong on three pools). Since `numpyro.sample` marks a
    model (`transforms.MODEL_PRIMITIVES`) the case is not reported at all; the same shape without the
    model's primitives is the `callback` path (preview), and in a counted loop it stays default."""
    model = """
        import jax
        import numpyro
        import numpyro.distributions as dist
        from jax import jit, vmap


        def model_c(y1, tarr):
            alpha = numpyro.sample("alpha", dist.Uniform(0.05, 0.2))

            def obyo(y, tag):
                line = jit(vmap(lambda t: t * alpha))(tarr)
                numpyro.sample(tag, dist.Normal(line.sum(), 1.0), obs=y)

            obyo(y1, "y1")


        kernel = numpyro.infer.NUTS(model_c)
        """
    assert found(model, "JAX202") == []
    plain = model.replace('numpyro.sample(tag, dist.Normal(line.sum(), 1.0), obs=y)', "print(tag, line.sum())")
    plain = plain.replace('alpha = numpyro.sample("alpha", dist.Uniform(0.05, 0.2))', "alpha = 0.1")
    assert found(plain, "JAX202") == [(12, True)]
    counted = plain.replace('obyo(y1, "y1")', 'for i in range(100):\n                obyo(y1, "y1")')
    assert found(counted, "JAX202") == [(12, False)]


def test_jax201_a_loop_over_written_out_settings_is_preview():
    """yipihey/mimic-jax@e16551b scripts/analyze_mini_millennium_adaptive.py:228 (heldout14, wrong):
    one jitted integrator per step count written out in a tuple, each a configuration compiled once
    and run once. The same loop over `range` (steps) stays default."""
    sweep = """
        import jax
        import jax.numpy as jnp


        def integrate(state, num_steps):
            for _ in range(num_steps):
                state = state + 0.1 * jnp.sin(state)
            return state


        def sweep(states):
            out = []
            for count in (25, 50, 100, 200):
                runner = jax.jit(jax.vmap(lambda state: integrate(state, count)))
                out.append(runner(states))
            return out
        """
    assert found(sweep, "JAX201") == [(15, True)]
    named = sweep.replace("for count in (25, 50, 100, 200):", "for count in step_counts:").replace(
        "out = []", "step_counts = (25, 50, 100, 200)\n            out = []"
    )
    assert found(named, "JAX201") == [(16, True)]  # the script's own spelling: a name bound once to the tuple
    steps = sweep.replace("for count in (25, 50, 100, 200):", "for count in range(200):")
    assert found(steps, "JAX201") == [(15, False)]
    rebound = named.replace("out = []", "out = []\n            step_counts = load_counts()")
    assert found(rebound, "JAX201") == [(17, False)]  # bound twice: not known to be written out
    # dfm/tinygp@5302d5a docs/tutorials/transforms.ipynb (heldout18, wrong): through `enumerate(zip(...))`
    # of lists written out, one model per trip
    zipped = sweep.replace("for count in (25, 50, 100, 200):", 'for i, (name, count) in enumerate(zip(["a", "b"], [25, 50])):')
    assert found(zipped, "JAX201") == [(15, True)]
    with_data = sweep.replace("for count in (25, 50, 100, 200):", "for i, (s, count) in enumerate(zip(states, [25, 50])):")
    assert found(with_data, "JAX201") == [(15, False)]


def test_jax201_settings_a_parameter_takes_from_its_default_are_written_out():
    """bradknox/distillation-jax@<heldout20> examples/purejax_training.py:461 (wrong):
    `benchmark_throughput(env, n_envs_list=[1, 8, 32, 64, 128])` loops over its parameter and jits a
    runner per batch size; its one call, `benchmark_throughput(env)`, leaves the default: settings
    written out. A call that passes data for it keeps the loop a loop over data (default)."""
    source = """
        import jax
        import jax.numpy as jnp


        def benchmark_throughput(step, n_envs_list=[1, 8, 32, 64, 128]):
            for n_envs in n_envs_list:
                states = jnp.zeros((n_envs, 3))
                runner = jax.jit(jax.vmap(lambda s: step(s, n_envs)))
                runner(states).block_until_ready()


        CALL
        """
    assert found(source.replace("CALL", "benchmark_throughput(jnp.add)"), "JAX201") == [(9, True)]
    passed = source.replace("CALL", "benchmark_throughput(jnp.add, load_sizes())")
    assert found(passed, "JAX201") == [(9, False)]


def test_jax201_written_out_settings_decide_before_an_inner_loop():
    """tillahoffmann/jax-mps@<heldout17> benchmarks/bench_rnn_training.py:134 (wrong): one jit per scan
    unroll over `unrolls = UNROLLS + [SEQ_LEN]` (a concatenation of written-out lists), each then
    warmed up and timed in inner loops. A sweep over settings stays a sweep when every trip also runs
    a loop of steps (dfm/tinygp's per-model training, heldout18); a `range` loop with an inner loop
    stays default (`outer-loop`: an update per rollout)."""
    bench = """
        import jax
        from functools import partial

        UNROLLS = [1, 10, 50]


        def train_step(params, xs, unroll):
            return params


        def bench(params, xs):
            unrolls = UNROLLS + [100]
            for unroll in unrolls:
                step = jax.jit(partial(train_step, unroll=unroll))
                for _ in range(3):
                    params = step(params, xs)
            return params
        """
    assert found(bench, "JAX201") == [(15, True)]
    steps = bench.replace("for unroll in unrolls:", "for unroll in range(100):")
    assert found(steps, "JAX201") == [(15, False)]
    with_data = bench.replace("unrolls = UNROLLS + [100]", "unrolls = UNROLLS + load_unrolls()")
    assert found(with_data, "JAX201") == [(15, False)]


def test_jax201_a_callable_rebuilt_only_when_a_branch_says_so_is_preview():
    """google-deepmind/tapnet@<heldout18> tapnet/robotap/tapir_clustering.py:731 (wrong):
    `if need_compile: update_jit = jax.jit(partial(update, num_cats=num_cats))`, then `update_jit(...)`
    on every trip: a cache kept across trips, rebuilt when its settings change. A jit built and called
    inside the branch only (an eval every k steps) stays default (`periodic`)."""
    on_demand = """
        import jax
        from functools import partial


        def update(state, batch, num_cats):
            return state


        def train(state, batches, forks):
            num_cats = 1
            need_compile = True
            for step, batch in enumerate(batches):
                if step in forks:
                    num_cats += 1
                    need_compile = True
                if need_compile:
                    update_jit = jax.jit(partial(update, num_cats=num_cats))
                    need_compile = False
                state = update_jit(state, batch)
            return state
        """
    assert found(on_demand, "JAX201") == [(18, True)]
    periodic = on_demand.replace(
        "                    need_compile = False\n                state = update_jit(state, batch)",
        "                    state = update_jit(state, batch)",
    )
    assert found(periodic, "JAX201") == [(18, False)]


def test_jax501_a_helper_that_waits_on_each_step_and_returns_an_eager_tail_is_preview():
    """hershkumar/summer2022@<heldout28> neural/fermions/fermi_nn.ipynb cell 20 (wrong): the timed
    `sample(params, ...)` runs a jitted Metropolis step per trip and tests `if accepted:` on each
    result (a wait), then returns `jnp.array(outputs)`: only that eager stacking is left in flight,
    as in a region that waited on its step (`eager-after-wait`). The twin, a loop that never waits
    on its steps, leaves them all in flight: default."""
    source = """
        import time

        import jax
        import jax.numpy as jnp


        @jax.jit
        def sample_body(x):
            return x + 1.0, jnp.sum(x) > 0


        def sample(x, n):
            outputs = []
            accepted_count = 0
            for step in range(n):
                x, accepted = sample_body(x)
                if accepted:
                    accepted_count += 1
                outputs.append(x)
            return jnp.array(outputs), accepted_count / n


        start = time.time()
        samples, _ = sample(jnp.ones(3), 100)
        print(time.time() - start)
        """
    assert found(source, "JAX501") == [(26, True)]
    unwaited = source.replace("                if accepted:\n                    accepted_count += 1\n", "")
    assert found(unwaited, "JAX501") == [(24, False)]


def test_jax501_a_print_right_before_the_start_that_says_it_compiles_is_preview():
    """gerkone/gyaradax@<heldout31> notebooks/sensitivity_analysis.ipynb cells 8 and 15 (labelled
    wrong, blind): `print("compiling jacrev...")`, then the timed first call, then
    `print(f"done (...)")`. The same region announced as a timing stays in the default tier."""
    source = """
        import time

        import jax
        import jax.numpy as jnp


        @jax.jit
        def gamma(x):
            return jnp.tanh(x)


        print("compiling gamma...")
        t0 = time.time()
        _ = gamma(jnp.array(5.0))
        print(f"done ({time.time() - t0:.1f}s)")
        """
    assert found(source, "JAX501") == [(16, True)]
    assert found(source.replace("compiling gamma", "timing gamma"), "JAX501") == [(16, False)]
    # MatiasCovarrubias/jaxecon@<heldout30> APG/OLD/apg_modular.ipynb cell 8 (real): a print that reports
    # the compile step done announces the run timed next, which stays default
    reported = source.replace('"compiling gamma..."', '"Compilation completed. Proceeding to run an epoch..."')
    assert found(reported, "JAX501") == [(16, False)]
