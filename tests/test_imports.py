"""The engine's import requests: new imports land where isort puts them, unused ones go."""

from __future__ import annotations

import pytest

from jaxfix.engine.imports import add_imports, remove_unused_imports
from jaxfix.model import ImportRequest


def test_stdlib_import_joins_the_stdlib_group_in_order():
    text = "import dataclasses\nimport functools\n\nimport jax\nfrom flax import struct\n\nx = 1\n"
    out = add_imports(text, [ImportRequest("typing")])
    assert out == "import dataclasses\nimport functools\nimport typing\n\nimport jax\nfrom flax import struct\n\nx = 1\n"


def test_stdlib_group_is_created_before_third_party():
    text = '"""Doc."""\n\nimport jax\nfrom flax import struct\n\n\nclass A:\n    pass\n'
    out = add_imports(text, [ImportRequest("typing")])
    assert out == '"""Doc."""\n\nimport typing\n\nimport jax\nfrom flax import struct\n\n\nclass A:\n    pass\n'


def test_third_party_group_is_created_after_stdlib():
    text = "import functools\n\nx = 1\n"
    out = add_imports(text, [ImportRequest("jax")])
    assert out == "import functools\n\nimport jax\n\nx = 1\n"


def test_plain_imports_come_before_from_imports():
    text = "import jax\nfrom jax import lax\n"
    assert add_imports(text, [ImportRequest("jax.numpy", alias="jnp")]) == (
        "import jax\nimport jax.numpy as jnp\nfrom jax import lax\n"
    )


def test_from_import_merges_in_member_order():
    text = "from jax import lax, vmap\n"
    assert add_imports(text, [ImportRequest("jax", "jit")]) == "from jax import jit, lax, vmap\n"
    assert add_imports(text, [ImportRequest("jax", "Array")]) == "from jax import Array, lax, vmap\n"


def test_present_import_is_not_added_again():
    text = "import typing\nfrom jax import lax\n"
    assert add_imports(text, [ImportRequest("typing"), ImportRequest("jax", "lax")]) == text


def test_file_without_imports_gets_one_at_the_top():
    assert add_imports("x = 1\n", [ImportRequest("jax")]) == "import jax\n\nx = 1\n"


def test_unused_import_is_removed_and_group_separation_kept():
    text = "import functools\nfrom functools import cached_property\n\nimport jax\n\n\nclass A:\n    @property\n    def f(self):\n        return jax\n"
    out = remove_unused_imports(text, [ImportRequest("functools", "cached_property"), ImportRequest("functools")])
    assert out == "import jax\n\n\nclass A:\n    @property\n    def f(self):\n        return jax\n"


def test_import_still_used_elsewhere_stays():
    text = "from functools import cached_property, partial\n\nf = partial(print)\n\n\nclass A:\n    x: cached_property\n"
    assert remove_unused_imports(text, [ImportRequest("functools", "cached_property")]) == text
    text = "from functools import cached_property\n\n__all__ = ['cached_property']\n"
    assert remove_unused_imports(text, [ImportRequest("functools", "cached_property")]) == text


def test_one_name_of_a_from_import_is_removed():
    text = "from functools import cached_property, partial\n\nf = partial(print)\n"
    out = remove_unused_imports(text, [ImportRequest("functools", "cached_property")])
    assert out == "from functools import partial\n\nf = partial(print)\n"


def test_only_requested_imports_are_removed():
    text = "import os\nimport sys\n\nx = 1\n"
    assert remove_unused_imports(text, [ImportRequest("sys")]) == "import os\n\nx = 1\n"
    assert remove_unused_imports(text, []) == text


# -- only the head of a long file is edited (issue #33) ----------------------------------------
HEAD_CASES = [
    # imports, a decorated definition after a comment, more code below
    'import functools\nimport jax\n\nX = 1\n\n\n# a comment\n@functools.cache\ndef f():\n    return 1\n\n\ndef g():\n    return jax.numpy.ones(3)\n',
    # a string whose last line starts with `#` right before the cut
    'import functools\nimport jax\nS = """\n# not a comment"""\ndef f():\n    return jax\n',
    # CRLF newlines
    'import functools\r\nimport jax\r\n\r\nY = 2\r\n\r\ndef f():\r\n    return jax\r\n',
    # an import after code: the head reaches it
    '"""Doc."""\nimport jax\n\ndef f():\n    return jax\n\nimport functools\n\nZ = 3\n\ndef h():\n    return 0\n',
]


@pytest.mark.parametrize("text", HEAD_CASES)
def test_editing_the_head_gives_what_editing_the_whole_module_gives(text, monkeypatch):
    from jaxfix.engine import imports

    add = [ImportRequest("typing"), ImportRequest("jax.numpy", alias="jnp"), ImportRequest("os", "path")]
    remove = [ImportRequest("functools")]
    fast = imports.apply_import_requests(text, add, remove)
    head, rest = imports._split_head(text)
    assert head + rest == text
    monkeypatch.setattr(imports, "_split_head", lambda text, tree=None: (text, ""))
    whole = imports.apply_import_requests(text, add, remove)
    assert fast == whole
    assert ("import functools" in fast) == ("functools." in text) and "import typing" in fast
