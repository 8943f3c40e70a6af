"""`# jaxfix: skip-file` is a whole line of its own, in any newline convention."""

import pytest

from jaxfix.engine.suppression import skips_file


@pytest.mark.parametrize(
    "text, skips",
    [
        ("# jaxfix: skip-file\nimport jax\n", True),
        ("import jax\n   #jaxfix:skip-file   \r\nx = 1\n", True),
        ("import jax\r# jaxfix: skip-file\rx = 1\r", True),
        ("\n\n   \n# jaxfix: skip-file", True),
        ("x = 1  # jaxfix: skip-file\n", False),
        ("# jaxfix: skip-file now\n", False),
        ('"""\n# jaxfix: skip\n"""\n', False),
    ],
)
def test_skip_file_line(text, skips):
    assert skips_file(text) is skips

