"""The transform-name text test (`trace_screen.MAY_NAME_A_TRANSFORM`) is written for speed: each
branch starts with its word and checks what precedes it afterwards. It must match exactly the
texts its readable form matches, on real code and on texts built to probe the word boundaries."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from codemods.pytree_cache.cached_members import _CACHES, PytreeCacheFamily
from jaxfix.analysis.transform_prefilter import MAY_NAME_A_TRANSFORM
from jaxfix.rulebase import Rule

READABLE = re.compile(
    r"\bimport\b[^\n]*\b(?:jax|equinox|flax|jax_dataclasses)\b"
    r"|\b(?:import|from)\s*\\"
    r"|\bfrom\s+(?:jax|equinox|flax|jax_dataclasses)(?:\s*\.\s*(?:lax|experimental(?:\s*\.\s*pjit)?|nnx|linen))?\s+import\b"
    r"|(?<![\w.])(?:jax|equinox)(?:\s|#[^\n]*\n)*\.\s*(?:jit|pmap|vmap|grad|value_and_grad|jacfwd|jacrev|hessian|jvp|vjp"
    r"|linearize|checkpoint|remat|lax|experimental|filter_\w+)\b"
)
ROOT = Path(__file__).resolve().parents[1]

PROBES = [
    "import jax", "reimport jax", "x = 1; import jax", "imports jax", "import_ jax", "import numpy, jax.numpy as jnp",
    "from jax import jit", "fromjax import x", "from jax.lax import scan", "from jax . experimental . pjit import pjit",
    "from jax.experimental import pjit", "from jax._src.api import jit", "import \\\n jax", "from\\\n jax import x",
    "jax.jit(f)", "a.jax.jit(f)", "_jax.jit(f)", "\u00e9jax.jit(f)", "jax .jit", "jax # comment\n.jit", "jax.jitter",
    "equinox.filter_jit(f)", "xequinox.filter_jit", "equinox.filter_", "jax.numpy.sum", "jax", "",
    "from flax import nnx", "import flax.linen as nn", "import jax_dataclasses as jdc", "from jax_dataclasses import jit",
    "from flaxen import x", "import jax_dataclassesx", "from flax.nnx import jit", "from flax . linen import scan",
    "from flax.struct import dataclass",
]


@pytest.mark.parametrize("text", PROBES)
def test_probes_agree(text):
    assert (MAY_NAME_A_TRANSFORM.search(text) is None) == (READABLE.search(text) is None)


def test_random_texts_agree():
    pieces = ["import", "from", "jax", "equinox", " ", "\n", "\\", ".", "#", "x", "_", "\u00e9", "jit", "lax",
              "experimental", "pjit", "filter_jit", "(", ",", "as", "\t", "grad", "\\\n"]
    rng = random.Random(21)
    for _ in range(20000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(1, 9)))
        assert (MAY_NAME_A_TRANSFORM.search(text) is None) == (READABLE.search(text) is None), text


def test_real_files_agree():
    files = sorted([*ROOT.glob("jaxfix/**/*.py"), *ROOT.glob("codemods/**/*.py"), *ROOT.glob("fixtures/**/*.py")])
    assert len(files) > 100
    for path in files:
        text = path.read_text(encoding="utf-8", errors="replace")
        assert (MAY_NAME_A_TRANSFORM.search(text) is None) == (READABLE.search(text) is None), path


def test_a_rule_line_of_hashes_after_the_word_ends_the_search_at_once():
    """SamDuffield/mocat@<heldout24> src/tests/test_utils.py: a comment ending in `mocat-jax`, then a
    line of 120 `#`. The comment between the word and its `.` is matched whole, to its line's end, so
    the search cannot split the `#` run (it took 2^n steps, and hung the run). Run in a subprocess so
    that a regression fails this test instead of hanging the suite."""
    import subprocess
    import sys

    probe = (
        "from jaxfix.analysis.transform_prefilter import MAY_NAME_A_TRANSFORM as P\n"
        "text = '# Web: https://github.com/SamDuffield/mocat-jax\\n' + '#' * 120 + '\\n\\nimport numpy as np\\n'\n"
        "print(P.search(text) is None)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True", done.stderr
    assert MAY_NAME_A_TRANSFORM.search("x = jax  # the transform\n    .jit(f)") is not None


def test_a_pattern_is_searched_once_per_text():
    class Counting:
        searches = 0

        def search(self, text):
            Counting.searches += 1
            return READABLE.search(text)

    pattern = Counting()

    class A(Rule):
        prefilter = ("jax",)
        prefilter_pattern = pattern

    class B(A):
        prefilter = ("jit",)

    text = "import jax\njax.jit(f)\n"
    assert A.passes_prefilter(text) and B.passes_prefilter(text) and A.passes_prefilter(text)
    assert Counting.searches == 1
    assert A.passes_prefilter("import jax\n" + "x = 1\n") and Counting.searches == 2  # another text


def test_item_store_pattern_finds_what_the_item_store_tokens_find():
    """`in_place_update_on_traced_array.ITEM_STORE` replaces 28 substring tests (`ITEM_STORES`)."""
    from codemods.trace_time_semantics.in_place_update_on_traced_array import ITEM_STORE, ITEM_STORES

    probes = [*ITEM_STORES, "a] == b", "a]  = 1", "a]\n= 1", "a] >= b", "a] <= b", "a] != b", "a]:=b", "]", "=", ""]
    pieces = ["]", " ", "=", "+", "-", "*", "/", "%", "&", "|", "^", "<", ">", "@", "!", ":", "x", "\n"]
    rng = random.Random(403)
    probes += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 7))) for _ in range(20000)]
    files = sorted([*ROOT.glob("jaxfix/**/*.py"), *ROOT.glob("codemods/**/*.py"), *ROOT.glob("fixtures/**/*.py")])
    probes += [path.read_text(encoding="utf-8", errors="replace") for path in files]
    for text in probes:
        assert (ITEM_STORE.search(text) is not None) == any(token in text for token in ITEM_STORES), text[:80]


def test_cache_name_pattern_finds_each_cache_name_as_a_word():
    """The pytree-cache text test (`PytreeCacheFamily.prefilter_pattern`) is the readable
    `\\b(?:cache|cached_property|lru_cache)\\b`, one alternative per cache the rules know."""
    names = sorted(name.rpartition(".")[2] for name in _CACHES)
    readable = re.compile(r"\b(?:%s)\b" % "|".join(names))
    fast = PytreeCacheFamily.prefilter_pattern
    probes = [*names, "mycache", "cachex", "_cache", "x.cache", "lru_cache(", "xlru_cache", "cached_propertyx", "cached", ""]
    rng = random.Random(5)
    pieces = ["cache", "lru_", "d_property", "d", "_", "x", ".", " ", "\n", "\u00e9", "("]
    probes += ["".join(rng.choice(pieces) for _ in range(rng.randint(1, 6))) for _ in range(20000)]
    for text in probes:
        assert (fast.search(text) is None) == (readable.search(text) is None), text
