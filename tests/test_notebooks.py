"""Notebooks (issue #32): `.ipynb` files checked, fixed and written back cell by cell.

The notebooks are written here with nbformat, or copied from tests/data/notebooks/ (written for
these tests in Colab's layout: 2-space indent, Colab's key order, outputs, no final newline), into
a temporary folder outside the repository (its own project index and config do not apply).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import nbformat
import pytest
from typer.testing import CliRunner

from jaxfix.cli import app
from jaxfix.engine.config import Config
from jaxfix.engine.notebook import analyze_notebook, read

DATA = Path(__file__).parent / "data" / "notebooks"

IMPORTS = "from functools import partial\n\nimport jax\nimport jax.numpy as jnp"
LOSS = "def loss(w, x):\n    return jnp.sum((w * x) ** 2)"
# the issue's example: the second cell builds a jitted grad of a fresh partial in a loop
LOOP = "w = jnp.ones(3)\nfor step in range(3):\n    g = jax.jit(jax.grad(partial(loss, x=jnp.ones(3))))(w)\n    w = w - 0.1 * g"


def run_in_order(cells) -> dict:
    """Run the code cells top to bottom in a real IPython shell (magics included), each one
    succeeding: the user namespace at the end."""
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        for cell in cells:
            outcome = shell.run_cell(cell.source)
            assert outcome.success, (cell.source, outcome.error_in_exec)
        return dict(shell.user_ns)
    finally:
        InteractiveShell.clear_instance()


def cli(*args):
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def notebook(path: Path, *cells: str, markdown_first: bool = False, language: str = "python") -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": language}
    nb.cells = ([nbformat.v4.new_markdown_cell("# Notes")] if markdown_first else []) + [
        nbformat.v4.new_code_cell(c) for c in cells
    ]
    nbformat.write(nb, path)
    return path


def test_issue_example_is_found_in_its_cell_not_passed(tmp_path):
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, LOOP)
    code, out, err = cli("check", "--no-cache", str(nb))
    assert code == 1
    assert f"{nb}:cell 2:3:9: JAX201" in out
    assert "All checks passed" not in err
    # a folder of notebooks: discovered by default
    code, out, _ = cli("check", "--no-cache", str(tmp_path))
    assert code == 1 and "cell 2:3:9: JAX201" in out


def test_folder_excludes_notebooks_by_config(tmp_path):
    notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, LOOP)
    (tmp_path / "pyproject.toml").write_text('[tool.jaxfix]\nextend-exclude = ["*.ipynb"]\n')
    code, out, _ = cli("check", "--no-cache", str(tmp_path))
    assert code == 0 and "JAX201" not in out


def test_ipython_escapes_are_masked_and_kept(tmp_path):
    magics = "!pip install -q jax\n%matplotlib inline\n?jax.jit\nfiles = !ls\n" + IMPORTS
    nb = notebook(tmp_path / "nb.ipynb", magics, LOSS + "\n\n" + LOOP, markdown_first=True)
    text = nb.read_text()
    result = analyze_notebook(text, str(nb), Config(), fix=True)
    assert result.error is None
    assert [(f.code, f.cell, f.line, f.column) for f in result.findings] == [("JAX201", 3, 6, 9)]
    fixed = nbformat.reads(result.fixed_source, as_version=4)
    assert fixed.cells[1].source == magics  # the magics' cell, every byte
    assert "_loss_grad_jit = jax.jit(" in fixed.cells[2].source  # the hoist lands in the loop's cell


def test_cell_that_does_not_parse_is_one_error_the_rest_is_checked(tmp_path):
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, "def broken(:\n    pass", LOOP)
    code, out, err = cli("check", "--no-cache", str(nb))
    assert code == 2
    assert "cell 3:3:9: JAX201" in out
    assert f"{nb}: cell 2: does not parse" in err
    assert "All checks passed" not in err
    assert "Found 1 problem; 1 file could not be checked in full (errors above)." in err  # not "not checked"


def test_not_python_and_not_a_notebook_are_errors_not_passes(tmp_path):
    r_nb = notebook(tmp_path / "r.ipynb", "x <- 1", language="R")
    broken = tmp_path / "broken.ipynb"
    broken.write_text("{ not json")
    for path, why in [(r_nb, "not a Python notebook"), (broken, "not a readable notebook")]:
        code, _, err = cli("check", "--no-cache", str(path))
        assert code == 2 and why in err and "All checks passed" not in err


def test_noqa_in_a_cell(tmp_path):
    loop = LOOP.replace("(w)\n", "(w)  # noqa: JAX201\n")
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, loop)
    code, out, _ = cli("check", "--no-cache", str(nb))
    assert code == 0 and "JAX201" not in out


def test_json_sarif_and_github_carry_the_cell(tmp_path):
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, LOOP, markdown_first=True)
    _, out, _ = cli("check", "--no-cache", "--output-format", "json", str(nb))
    [finding] = json.loads(out)
    assert (finding["cell"], finding["line"], finding["column"]) == (3, 3, 9)
    _, out, _ = cli("check", "--no-cache", "--output-format", "sarif", str(nb))
    [result] = json.loads(out)["runs"][0]["results"]
    assert result["properties"]["cell"] == 3 and result["locations"][0]["physicalLocation"]["region"]["startLine"] == 3
    assert "fixes" not in result  # its edits are offsets in the joined cells, not in the file
    _, out, _ = cli("check", "--no-cache", "--output-format", "github", str(nb))
    assert "line=3" in out and "::cell 3: JAX201" in out
    _, out, _ = cli("check", "--no-cache", "--statistics", str(nb))
    assert "JAX201" in out


def test_the_cache_keys_notebooks_by_their_bytes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, LOOP)
    first = cli("check", str(nb))
    assert first[0] == 1 and cli("check", str(nb)) == first  # a hit gives the same
    notebook(nb, IMPORTS + "\n\n" + LOSS, "w = jnp.ones(3)")
    code, out, _ = cli("check", str(nb))
    assert code == 0 and "JAX201" not in out


def _without_sources(text: str) -> dict:
    data = json.loads(text)
    for cell in data["cells"]:
        cell.pop("source")
    return data


def test_write_changes_only_the_fixed_cells_source(tmp_path):
    nb = tmp_path / "colab_timing.ipynb"
    shutil.copy(DATA / "colab_timing.ipynb", nb)
    before = nb.read_text(encoding="utf-8")
    code, out, _ = cli("fix", "--no-cache", str(nb))  # the dry run: a diff per cell
    assert f"--- {nb}:cell 3\n+++ {nb}:cell 3\n" in out  # an absolute path as it is, as for .py files
    assert out.count("+++ ") == 3 and "-%timeit -n 3 -r 1 f(x)\n+%timeit -n 3 -r 1 jax.block_until_ready(f(x))\n" in out
    assert nb.read_text(encoding="utf-8") == before
    code, _, err = cli("fix", "--no-cache", "--write", "--allow-dirty", str(nb))
    assert code == 0, err
    after = nb.read_text(encoding="utf-8")
    assert _without_sources(after) == _without_sources(before)  # outputs, metadata, counts kept
    changed = [
        i
        for i, (a, b) in enumerate(zip(json.loads(before)["cells"], json.loads(after)["cells"]))
        if a["source"] != b["source"]
    ]
    assert changed == [2, 4, 5]
    # byte for byte: every changed line of the file is a line of a changed cell's source list
    old_lines, new_lines = before.splitlines(), after.splitlines()
    assert not after.endswith("\n") and len(new_lines) == len(old_lines) + 1  # the hoist added one line
    import difflib

    for line in difflib.ndiff(old_lines, new_lines):
        if line[:1] in "+-" and line[:2] != "? ":
            assert line[2:].startswith('        "'), line  # an item of a `source` list, at its indent
    nbformat.validate(nbformat.reads(after, as_version=nbformat.NO_CONVERT))
    assert json.loads(after)["cells"][4]["source"] == ["%timeit -n 3 -r 1 jax.block_until_ready(f(x))"]
    # idempotent: nothing left to fix, the file stays byte-identical
    code, _, _ = cli("fix", "--no-cache", "--write", "--allow-dirty", str(nb))
    assert code == 0 and nb.read_text(encoding="utf-8") == after


def test_unchanged_notebook_is_byte_identical(tmp_path):
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS, "%timeit jnp.ones(3).block_until_ready()")
    before = nb.read_bytes()
    code, _, _ = cli("fix", "--no-cache", "--write", "--allow-dirty", str(nb))
    assert code == 0 and nb.read_bytes() == before


def test_fix_import_goes_to_the_first_import_cell(tmp_path):
    nb = notebook(
        tmp_path / "nb.ipynb",
        "from jax import jit\nimport jax.numpy as jnp",
        "f = jit(lambda x: x * 2)\nx = jnp.ones(10_000)\nf(x)",
        "%timeit f(x)",
    )
    result = analyze_notebook(nb.read_text(), str(nb), Config(), fix=True)
    cells = nbformat.reads(result.fixed_source, as_version=4).cells
    assert "import jax\n" in cells[0].source and cells[1].source == "f = jit(lambda x: x * 2)\nx = jnp.ones(10_000)\nf(x)"
    assert cells[2].source == "%timeit jax.block_until_ready(f(x))"


def test_a_fix_in_a_cell_before_the_first_import_jax_imports_it_first(tmp_path):
    """jeertmans/DiffeRT@fa21453 docs/source/notebooks/advanced_path_tracing.ipynb (heldout7 final
    review): `import jax` first appears in cell 37, and the safe `jax.block_until_ready(...)` the
    JAX504 fix wrote in cell 29 raised NameError when the notebook ran top to bottom. The import
    goes to the first import cell; the fixed notebook runs in order in a real IPython shell."""

    nb = notebook(
        tmp_path / "paths.ipynb",
        "import jax.numpy as jnp\n\ndef render(x):\n    return jnp.sin(x) * 2",
        "%%time\nvisible = render(jnp.ones(100_000))",
        "import jax\n\nf = jax.jit(render)\ny = f(jnp.ones(3))",
    )
    result = analyze_notebook(nb.read_text(), str(nb), Config(), fix=True)
    cells = nbformat.reads(result.fixed_source, as_version=4).cells
    assert cells[0].source.startswith("import jax\nimport jax.numpy as jnp")
    assert cells[1].source == "%%time\nvisible = jax.block_until_ready(render(jnp.ones(100_000)))"
    assert run_in_order(cells)["visible"].shape == (100_000,)


def test_first_timed_call_compiles(tmp_path):
    cells = (IMPORTS, "f = jax.jit(lambda x: x @ x)\nx = jnp.ones((50, 50))", "%time f(x).block_until_ready()")
    result = analyze_notebook(notebook(tmp_path / "a.ipynb", *cells).read_text(), "a.ipynb", Config(preview=True))
    assert [(f.code, f.cell, f.line, f.column) for f in result.findings] == [("JAX505", 3, 1, 7)]
    warmed = (*cells[:2], "f(x).block_until_ready()", cells[2])
    result = analyze_notebook(notebook(tmp_path / "b.ipynb", *warmed).read_text(), "b.ipynb", Config(preview=True))
    assert result.findings == []


def test_a_users_commented_out_timeit_is_a_comment_not_a_magic(tmp_path):
    """A cell that parses as Python keeps its `# %timeit force_fn(R)` lines as the user wrote them:
    comments, not timings to wrap (fabiannagel/gknet-benchmarks misc/JAX-MD Neighbor Lists.ipynb
    cell 15, heldout25: the safe fix rewrote the comment). The same line as a magic is reported, and
    a fix elsewhere in the cell gives the comment back byte for byte."""
    setup = IMPORTS + "\nforce_fn = jax.jit(lambda r: jnp.sum(r ** 2))\nR = jnp.ones(10_000)"
    commented = "# print(total_energy)\n# %timeit force_fn(R)\n# no jit: 2.59 ms"
    path = notebook(tmp_path / "a.ipynb", setup, commented, LOOP + "\n# %timeit force_fn(R)")
    result = analyze_notebook(path.read_text(), "a.ipynb", Config(select=("ALL",), preview=True), fix=True)
    assert [(f.code, f.cell) for f in result.findings] == [("JAX201", 3)]
    fixed = nbformat.reads(result.fixed_source, as_version=4)
    assert fixed.cells[1].source == commented
    assert fixed.cells[2].source.endswith("\n# %timeit force_fn(R)") and "_loss_grad_jit(w)" in fixed.cells[2].source
    magic = notebook(tmp_path / "b.ipynb", setup, "%timeit force_fn(R)")
    result = analyze_notebook(magic.read_text(), "b.ipynb", Config(select=("JAX504",)))
    assert [(f.code, f.cell) for f in result.findings] == [("JAX504", 2)]


def test_timing_fix_runs_in_ipython_and_waits(tmp_path):
    """Behaviour: the fixed cells run in a real IPython shell with jax, and the timed statement
    now returns only once the value is computed (the wrapped call blocks)."""
    from IPython.core.interactiveshell import InteractiveShell

    nb = tmp_path / "colab_timing.ipynb"
    shutil.copy(DATA / "colab_timing.ipynb", nb)
    result = analyze_notebook(nb.read_text(encoding="utf-8"), str(nb), Config(), fix=True)
    fixed = nbformat.reads(result.fixed_source, as_version=4)
    shell = InteractiveShell.instance()
    try:
        for cell in fixed.cells:
            if cell.cell_type != "code":
                continue
            source = "\n".join(line for line in cell.source.splitlines() if not line.startswith(("!", "%matplotlib")))
            outcome = shell.run_cell(source)
            assert outcome.success, (cell.source, outcome.error_in_exec)
        assert float(shell.user_ns["y"][0, 0]) == 200.0
        assert shell.user_ns["w"].shape == (3,)
    finally:
        InteractiveShell.clear_instance()


@pytest.mark.parametrize(
    "cells",
    [
        ("%%bash\necho hi", "x = 1"),  # not Python: left out, no error
        ("%%timeit\n", "x = 1"),  # a cell magic with no body
        ("", "   ", "x = 1"),  # empty cells
    ],
)
def test_odd_cells_are_read(tmp_path, cells):
    nb = notebook(tmp_path / "nb.ipynb", *cells)
    _, module = read(nb.read_text())
    assert module.errors == []


def test_add_noqa_leaves_notebooks_alone(tmp_path):
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, LOOP)
    before = nb.read_bytes()
    code, _, err = cli("check", "--no-cache", "--add-noqa", str(nb))
    assert code == 2 and "does not edit notebooks" in err and nb.read_bytes() == before


def test_magic_lines_keep_their_trailing_blanks(tmp_path):
    # modelled on google/neural-tangents' notebooks/empirical_ntk_resnet_tf.ipynb: `%%timeit ` (a
    # trailing blank) after a comment line
    timed = '# test {"skip": true}\n%%timeit \n# On TPU\nntk_fn(x1, x2)'
    loop = LOOP.replace("w = jnp.ones(3)\n", "w = jnp.ones(3)\n%time   \n")
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, timed, loop)
    result = analyze_notebook(nb.read_text(), str(nb), Config(), fix=True)
    assert result.error is None and [f.code for f in result.findings] == ["JAX201"]
    cells = nbformat.reads(result.fixed_source, as_version=4).cells
    assert cells[1].source == timed and "\n%time   \n_loss_grad_jit = " in cells[2].source


def test_a_time_cell_with_whitespace_only_lines_is_read_and_kept(tmp_path):
    # probml/rebayes@3b88072 demos/nonstat-1d-regression.ipynb cell 20: a `%%time` training loop
    # with indented blank lines ("    "), which black's masking empties: the cell was skipped
    # ("cannot mask and keep as written") and its timing never checked
    timed = "%%time\nw = jnp.ones(3)\nfor step in range(3):\n    \n    w = step_jit(w)\n    \nout = step_jit(w)"
    step = "step_jit = jax.jit(lambda w: w * 0.5)\nstep_jit(jnp.ones(3))"
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS, step, timed)
    result = analyze_notebook(nb.read_text(), str(nb), Config(preview=True), fix=True)
    assert result.error is None and [f.code for f in result.findings] == ["JAX504"]
    fixed = nbformat.reads(result.fixed_source, as_version=4).cells[2].source
    assert fixed == timed.replace("out = step_jit(w)", "out = jax.block_until_ready(step_jit(w))")


def test_fix_json_document_carries_cells_and_validates(tmp_path):
    import jsonschema

    from jaxfix.report.fix_schema import SCHEMA

    nb = tmp_path / "colab_timing.ipynb"
    shutil.copy(DATA / "colab_timing.ipynb", nb)
    _, out, _ = cli("fix", "--no-cache", "--output-format", "json", str(nb))
    document = json.loads(out)
    jsonschema.validate(document, SCHEMA)
    assert sorted(f["cell"] for f in document["fixes"]) == [3, 5, 6]
    assert document["files"][0]["diff"].startswith(f"--- {nb}:cell 3\n+++ {nb}:cell 3\n")


def test_a_cell_rebinding_a_global_after_the_last_compiled_call_reads_nothing_stale(tmp_path):
    # google-research/vision_transformer@c6de1e5378c9831a8477feb30994971bdc409e46:vit_jax.ipynb: a
    # cell calls the jitted function that reads `model`, a later cell rebinds `model` for another
    # demo, and no later cell calls the compiled function again (nothing runs after a notebook)
    cells = (
        IMPORTS + "\n\nmodel = 2.0\n\n\n@jax.jit\ndef predict(x):\n    return x * model",
        "logits = predict(1.0)",
        "model = 3.0\nprint(model)",
    )
    nb = notebook(tmp_path / "nb.ipynb", *cells)
    code, out, _ = cli("check", "--no-cache", "--preview", "--select", "JAX404", str(nb))
    assert code == 0 and out == ""
    # buggy: a later cell calls it again and still multiplies by 2.0
    again = notebook(tmp_path / "again.ipynb", *cells, "again = predict(1.0)")
    code, out, _ = cli("check", "--no-cache", "--preview", "--select", "JAX404", str(again))
    assert code == 1 and "JAX404 module-level `model` is rebound" in out
    # the same code as a module: its importers may call `predict` after its last line
    module = tmp_path / "mod.py"
    module.write_text("\n\n".join(cells) + "\n")
    code, out, _ = cli("check", "--no-cache", "--preview", "--select", "JAX404", str(module))
    assert code == 1 and "JAX404" in out


def test_a_time_cell_that_plots_or_converts_its_result_already_waits(tmp_path):
    """jeremiecoullon/SGMCMCJax docs/nbs/gaussian.ipynb cell 6 (heldout7 final review):
    `samples = my_sampler(...)` then `plt.plot(samples[:, idx])` in the same `%%time` cell: the plot
    converts the array to NumPy, which waits. Reading only its `.shape` does not (still reported)."""
    setup = "import jax\nimport jax.numpy as jnp\nimport matplotlib.pyplot as plt\n\n@jax.jit\ndef sampler(x):\n    return jnp.sin(x) * 2"
    timed = "%%time\nsamples = sampler(jnp.ones((100, 2)))\n"
    cells = (
        setup,
        timed + "plt.plot(samples[:, 0])",
        timed + "print(float(samples[0, 0]))",
        timed + "print(samples.shape)",
    )
    nb = notebook(tmp_path / "gaussian.ipynb", *cells)
    result = analyze_notebook(nb.read_text(), str(nb), Config(select=("JAX504",)))
    assert [(f.code, f.cell) for f in result.findings] == [("JAX504", 4)]


def test_a_time_cell_that_plots_data_computed_from_its_result_already_waits(tmp_path):
    """probml/probml-notebooks@4c0da5e918930e02de5f3e78278c90efe5688b66: notebooks/smc_tempered_1d_bimodal.ipynb
    cell 11: `initial = hmc_state(...)` (JAX work), `samples = inference_loop(key, kernel, initial, n)`
    (a function of the notebook), then `plt.hist(samples...)`: the plotted data depends on the JAX
    result, so converting it waits. Plotting something that does not depend on it is still reported."""
    setup = (
        "import jax\nimport jax.numpy as jnp\nimport matplotlib.pyplot as plt\n\n"
        "def inference_loop(state, n):\n    return [state * i for i in range(n)]\n\n"
        "@jax.jit\ndef init_state(x):\n    return jnp.sin(x) * 2"
    )
    timed = "%%time\ninitial = init_state(jnp.ones(3))\nsamples = inference_loop(initial, 4)\n"
    cells = (setup, timed + "plt.hist(samples[0])", timed + "plt.hist([1.0, 2.0])")
    nb = notebook(tmp_path / "smc.ipynb", *cells)
    result = analyze_notebook(nb.read_text(), str(nb), Config(select=("JAX504",)))
    assert [(f.code, f.cell) for f in result.findings] == [("JAX504", 3)]


def test_a_time_cell_that_draws_its_result_on_matplotlib_axes_already_waits(tmp_path):
    """probml/rebayes@3b880724541e913d7a7b2d06ee2e0407e66307ab: demos/basics/lofi-diagonal.ipynb cell 20
    (heldout7 labels, wrong): `fig, axs = plt.subplots(...)`, then per task `ax.fill_between(x,
    yhat_lb, yhat_ub)` of quantiles the `%%time` cell computed: an Axes method converts its data to
    NumPy, which waits. The twin that draws only data not made from the JAX work is still reported."""
    setup = "import jax\nimport jax.numpy as jnp\nimport matplotlib.pyplot as plt\n\nyhat = jnp.ones((6, 10, 5))"
    head = (
        "%%time\nfig, axs = plt.subplots(2, 3)\n"
        "for task, ax in enumerate(axs.ravel()):\n"
        "    lb = jnp.quantile(yhat[task], 0.05, axis=0)\n"
        "    ub = jnp.quantile(yhat[task], 0.95, axis=0)\n"
    )
    cells = (setup, head + "    ax.fill_between(range(5), lb, ub)", head + "    ax.set_title(f'{task=}')")
    nb = notebook(tmp_path / "lofi.ipynb", *cells)
    result = analyze_notebook(nb.read_text(), str(nb), Config(select=("JAX504",), preview=True))
    assert [(f.code, f.cell) for f in result.findings] == [("JAX504", 3)]


def test_a_hoist_goes_after_the_import_in_effect_not_after_a_later_cells_repeat_of_it(tmp_path):
    """Juno-T/jax-rl learn_jax/in_depth.ipynb (heldout26, after its measurement): cell 11's
    `jax.jit(partial(unjitted_loop_body))` per trip was hoisted after cell 64's repeated `import jax`,
    so cell 11, which calls the hoisted name at once, raised NameError run top to bottom. A later cell
    that imports the same module again binds nothing new: the hoist goes after the def in cell 2,
    and the fixed notebook runs in order in a real IPython shell, with the original's output."""

    body = (
        "from functools import partial\n\ndef unjitted_loop_body(prev_i):\n    return prev_i + 1\n\n"
        "def g_inner_jitted_partial(x, n):\n    i = 0\n    while i < n:\n"
        "        i = jax.jit(partial(unjitted_loop_body))(i)\n    return x + i\n\n"
        "result = g_inner_jitted_partial(10, 20)"
    )
    nb = notebook(tmp_path / "in_depth.ipynb", "import jax\nimport jax.numpy as jnp", body,
                  "import jax\nimport jax.numpy as jnp\n\nlater = jnp.arange(3)")
    result = analyze_notebook(nb.read_text(), str(nb), Config(unsafe_fixes=True), fix=True)
    assert [(f.code, f.cell) for f in result.findings] == [("JAX201", 2)]
    cells = nbformat.reads(result.fixed_source, as_version=4).cells
    assert "_unjitted_loop_body_jit = jax.jit(unjitted_loop_body)" in cells[1].source
    assert cells[2].source == "import jax\nimport jax.numpy as jnp\n\nlater = jnp.arange(3)"
    assert int(run_in_order(cells)["result"]) == 30
