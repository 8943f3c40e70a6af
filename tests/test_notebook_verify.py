"""`fix --verify` on notebooks (issue #32 item 5): both versions' code cells run in order in a
child (real jax on CPU), the values the cells leave are compared, compiles are counted on the
second run, and the evidence names cells.

Notebooks are written here with nbformat (or copied from tests/data/notebooks/, written for these
tests) into a temporary folder.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat
from typer.testing import CliRunner

from jaxfix.cli import app
from jaxfix.engine.config import Config
from jaxfix.engine.notebook import analyze_notebook, patch_sources, read, runnable
from jaxfix.verify.api import verify_result
from jaxfix.verify.notebook import cell_of_names, in_cells

DATA = Path(__file__).parent / "data" / "notebooks"
IMPORTS = "from functools import partial\n\nimport jax\nimport jax.numpy as jnp"
LOSS = "def loss(w, x):\n    return jnp.sum((w * x) ** 2)"
# the example: a jitted grad of a fresh partial built in a loop (JAX201), in its own cell
LOOP = "%matplotlib inline\nw = jnp.ones(3)\nfor step in range(3):\n    g = jax.jit(jax.grad(partial(loss, x=jnp.ones(3))))(w)\n    w = w - 0.1 * g"


def notebook(path: Path, *cells: str) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_markdown_cell("# Notes")] + [nbformat.v4.new_code_cell(c) for c in cells]
    nbformat.write(nb, path)
    return path


def fixed(path: Path):
    result = analyze_notebook(path.read_text(), str(path), Config(), fix=True)
    assert result.error is None and result.fixed_source is not None
    return result


def with_cell(result, index: int, old: str, new: str):
    """`result` with the fixed notebook's cell `index` edited by hand (a wrong rewrite)."""
    source = nbformat.reads(result.fixed_source, as_version=4).cells[index].source
    assert old in source
    result.fixed_source = patch_sources(result.fixed_source, {index: source.replace(old, new)})
    return result


def test_jax201_fix_in_a_notebook_is_verified_with_compile_counts(tmp_path):
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, LOOP)
    verification = verify_result(fixed(nb))
    [finding] = verification.findings
    evidence = finding.fix.evidence
    assert (finding.code, finding.cell, evidence.verdict) == ("JAX201", 3, "verified"), evidence.detail
    # a fresh partial per step compiles on each of the 3 steps; the hoisted one once per run
    assert evidence.detail.startswith("3 compiles -> 1 (steady state)")
    assert "3 value(s) compared: g (cell 3), step (cell 3), w (cell 3)" in evidence.detail
    assert "the fixes changed cell(s) 3" in evidence.notes
    assert verification.original.tasks["notebook cells"].compiles == 3
    assert verification.rewritten.tasks["notebook cells"].compiles == 1


def test_a_wrong_rewrite_is_a_mismatch_naming_the_cell(tmp_path):
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, LOOP)
    result = with_cell(fixed(nb), 2, "x=jnp.ones(3)", "x=2 * jnp.ones(3)")
    [finding] = verify_result(result).findings
    evidence = finding.fix.evidence
    assert evidence.verdict == "mismatch"
    assert "output 'w (cell 3)': values differ" in evidence.detail
    # and a rewrite that raises: the cell and line in the cell, not the joined module's line
    result = with_cell(fixed(nb), 2, "w = w - 0.1 * g", "w = w - 0.1 * g.nope")
    evidence = verify_result(result).evidence
    assert evidence.verdict == "mismatch"
    assert "the rewritten notebook raised AttributeError" in evidence.detail
    assert 'nb.ipynb (rewritten by jaxfix)", cell 3, line 6' in evidence.detail
    assert "in drive" not in evidence.detail  # the runner's own frame is not the user's


def test_values_that_change_between_runs_are_left_out_not_mismatched(tmp_path):
    clock = (
        "import time\nstarted = time.perf_counter()\nkey = jax.random.PRNGKey(0)\nnoise = jax.random.normal(key, (3,))"
    )
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, clock, LOOP)
    verification = verify_result(fixed(nb))
    assert verification.findings[0].fix.evidence.verdict == "verified"
    assert any("started (cell 3)" in note and "noise" not in note for note in verification.notes)
    assert "noise (cell 3)" in verification.findings[0].fix.evidence.detail  # seeded: compared


def test_timing_magic_fix_runs_its_statement(tmp_path):
    """The JAX504/JAX505 fixes live inside `%timeit`/`%%time` cells: the timed statement runs once
    in each version, so a fix there is exercised (a wrong one raises: mismatch)."""
    nb = tmp_path / "colab_timing.ipynb"
    shutil.copy(DATA / "colab_timing.ipynb", nb)
    result = fixed(nb)
    _, module = read(result.fixed_source)
    assert "\njax.block_until_ready(f(x))\n" in runnable(module)  # `%timeit -n 3 -r 1 ...` runs once
    verification = verify_result(result)
    assert {(f.code, f.cell, f.fix.evidence.verdict) for f in verification.findings} == {
        ("JAX201", 3, "verified"),
        ("JAX504", 5, "verified"),
        ("JAX504", 6, "verified"),
    }
    wrong = with_cell(fixed(nb), 4, "jax.block_until_ready(f(x))", "f(x).tolist().block_until_ready()")
    evidence = verify_result(wrong).evidence
    assert evidence.verdict == "mismatch" and "cell 5, line 1" in evidence.detail


def test_user_comments_that_look_like_magics_stay_comments(tmp_path):
    # a cell whose author already wrote `# %timeit ...` as a comment: jaxfix did not comment it
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS, "# %timeit undefined_name()\nz = jnp.ones(2)")
    _, module = read(nb.read_text())
    assert "# %timeit undefined_name()" in runnable(module)
    assert cell_of_names(module)["z"] == 3 and cell_of_names(module)["jnp"] == 2


def test_original_that_fails_is_unverifiable_with_its_cell(tmp_path):
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, LOOP, "raise RuntimeError('needs a GPU')")
    evidence = verify_result(fixed(nb)).findings[0].fix.evidence
    assert evidence.verdict == "unverifiable"
    assert "the original notebook fails when its cells run in order: RuntimeError: needs a GPU" in evidence.detail
    assert 'nb.ipynb", cell 4, line 1' in evidence.detail


def test_in_cells_maps_module_lines():
    _, module = read(
        nbformat.writes(
            nbformat.v4.new_notebook(
                cells=[nbformat.v4.new_code_cell("a = 1\nb = 2"), nbformat.v4.new_code_cell("c = 3")]
            )
        )
    )
    assert (
        in_cells('File "n.ipynb", line 4, in <module>', "n.ipynb", module)
        == 'File "n.ipynb", cell 2, line 1, in <module>'
    )


def test_verify_write_writes_verified_notebook_fixes(tmp_path):
    nb = tmp_path / "colab_timing.ipynb"
    shutil.copy(DATA / "colab_timing.ipynb", nb)
    result = CliRunner().invoke(app, ["fix", "--no-cache", "--verify", "--write", "--allow-dirty", str(nb)])
    assert "Verified 3 of 3 fixes; 0 mismatch; 0 unverifiable" in result.stderr + result.stdout
    after = nbformat.read(nb, as_version=4)
    nbformat.validate(after)
    assert "_loss_grad_jit = jax.jit(" in after.cells[2].source
    assert after.cells[4].source == "%timeit -n 3 -r 1 jax.block_until_ready(f(x))"


def test_a_fix_whose_code_never_runs_is_unverifiable_not_verified(tmp_path):
    # the fixed function is defined but no cell calls it: the values agree, but say nothing of it
    train = (
        "def train(w):\n    for step in range(3):\n"
        "        g = jax.jit(jax.grad(partial(loss, x=jnp.ones(3))))(w)\n        w = w - 0.1 * g\n    return w"
    )
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS + "\n\n" + LOSS, train, "w0 = jnp.ones(3)")
    [finding] = verify_result(fixed(nb)).findings
    evidence = finding.fix.evidence
    assert (finding.cell, evidence.verdict) == (3, "unverifiable")
    assert "the rewritten code in cell 3 never ran when the cells ran in order" in evidence.detail
    # called from a later cell: it runs, and is verified
    nb = notebook(tmp_path / "nb2.ipynb", IMPORTS + "\n\n" + LOSS, train, "w0 = train(jnp.ones(3))")
    [finding] = verify_result(fixed(nb)).findings
    assert finding.fix.evidence.verdict == "verified", finding.fix.evidence.detail


# modelled on exoplanet-dev/jaxoplanet docs/tutorials/introduction-to-jax.ipynb (dev pool): a
# tutorial cell calls a jitted function with a Python `if` inside `try`, its value never bound
RELU = "@jax.jit\ndef relu(x):\n    if x > 0:\n        return x\n    else:\n        return 0.0"
CALL = "try:\n    relu(2.0)\nexcept Exception as ex:\n    print(type(ex).__name__)"


def test_calls_of_a_changed_function_are_watched(tmp_path):
    nb = notebook(tmp_path / "nb.ipynb", IMPORTS, RELU, CALL, "z = jnp.zeros(2)")
    result = analyze_notebook(nb.read_text(), str(nb), Config(unsafe_fixes=True), fix=True)
    assert [f.code for f in result.fixes_applied] == ["JAX301"]  # `x` made static: a Python float here
    [finding] = verify_result(result).findings
    evidence = finding.fix.evidence
    assert evidence.verdict == "verified", evidence.detail
    assert "relu call 1 (defined in cell 3)" in evidence.detail  # compared with the eager original
    source = nbformat.reads(result.fixed_source, as_version=4).cells[2].source
    result.fixed_source = patch_sources(result.fixed_source, {2: source.replace("return x\n", "return 2 * x\n")})
    evidence = verify_result(result).findings[0].fix.evidence
    assert evidence.verdict == "mismatch" and "output 'relu call 1 (defined in cell 3)'" in evidence.detail
