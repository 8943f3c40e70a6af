"""The text test before the trace screen (`Rule.prefilter_pattern` of the rules that look at
traced code): a file whose text names no JAX transform by any spelling the analysis follows has
no trace entry, so no rule that reads traced code needs its AST. Split from `trace_screen`, which
re-exports it: a regex searched where its words stand (`WordLed`), with its own test
(tests/test_prefilter_pattern.py).
"""

from __future__ import annotations

import re

# The text test before the screen (`Rule.prefilter_pattern`): every transform and lax body the
# analysis follows is named `jax.*`, `equinox.*`, `flax.*` or `jax_dataclasses.*`
# (`transforms.TRANSFORM_PACKAGES`), so a name qualifies to one only through an import of one of
# them (`import jax`, `import a, jax.numpy as jnp`, `from jax import jit`, `from flax.nnx import jit`,
# `from jax.lax import scan`, `from jax.experimental.pjit import pjit`, `from equinox import
# filter_jit`; `from jax._src.api import jit` qualifies to `jax._src.api.jit`, no transform), or
# spelled out with `jax`/`equinox` unbound by any import (bound by an assignment or a star import).
# Any text holding none of those spellings has no trace entry for the rules.
#
# Written as below it reads:
#     \bimport\b[^\n]*\b(?:jax|equinox|flax|jax_dataclasses)\b | \b(?:import|from)\s*\\
#     | \bfrom\s+(?:jax|equinox|flax|jax_dataclasses)(?:\s*\.\s*(?:lax|experimental(?:\s*\.\s*pjit)?|nnx|linen))?\s+import\b
#     | (?<![\w.])(?:jax|equinox)<TRANSFORM_ATTRIBUTE>
# Each branch starts with its word and checks what precedes it afterwards (a look-behind), so the
# regex engine skips ahead to the next i, f, j or e instead of trying every branch at every
# character: the same matches, 9x faster (tests/test_prefilter_pattern.py checks they agree).
# Between the word and its `.`: white space and whole comments, each to the end of its line. A comment
# matched as `#[^\n]*` alone could end anywhere, so a rule line of n `#` split 2^n ways before the
# missing `.` failed the match: SamDuffield/mocat@<heldout24> src/tests/test_utils.py (a line ending in
# `mocat-jax`, then 120 `#`) hung the whole run in its root pre-test (measured: 22 `#`, 0.6 s; x2 per `#`).
_TRANSFORM_ATTRIBUTE = (
    r"(?:\s|#[^\n]*\n)*\.\s*(?:jit|pmap|vmap|grad|value_and_grad|jacfwd|jacrev|hessian|jvp|vjp"
    r"|linearize|checkpoint|remat|lax|experimental|filter_\w+)\b"
)


class WordLed:
    """A pattern each of whose matches starts with one of `words`, searched by trying it only
    where one of them stands (found with `str.find`): the regex engine tries the branches at every
    character that starts one (`i`, `f`, `j`, `e`: an eighth of the characters of code). `search`
    gives a match, not always the leftmost: the text tests ask only whether there is one (2.4x
    less time on the jax/flax/optax corpus, every file of which the root test searches)."""

    def __init__(self, pattern: re.Pattern[str], words: tuple[str, ...]) -> None:
        self.pattern = pattern
        self.words = words

    def search(self, text: str) -> re.Match[str] | None:
        match, find = self.pattern.match, text.find
        for word in self.words:
            at = find(word)
            while at >= 0:
                found = match(text, at)  # the look-behinds see the text before `at`
                if found is not None:
                    return found
                at = find(word, at + 1)
        return None


MAY_NAME_A_TRANSFORM = WordLed(
    re.compile(
        r"import(?<=(?<!\w)import)\b[^\n]*\b(?:jax|equinox|flax|jax_dataclasses)\b"
        r"|import(?<=(?<!\w)import)\s*\\"
        r"|from(?<=(?<!\w)from)\s*\\"
        r"|from(?<=(?<!\w)from)\s+(?:jax|equinox|flax|jax_dataclasses)(?:\s*\.\s*(?:lax|experimental(?:\s*\.\s*pjit)?|nnx|linen))?\s+import\b"
        r"|jax(?<=(?<![\w.])jax)" + _TRANSFORM_ATTRIBUTE + r"|equinox(?<=(?<![\w.])equinox)" + _TRANSFORM_ATTRIBUTE
    ),
    ("import", "from", "jax", "equinox"),  # the first words of its branches
)
