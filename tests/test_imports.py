"""The engine's import requests: new imports land where isort puts them, unused ones go."""

from __future__ import annotations

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
