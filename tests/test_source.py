import pytest

from jaxfix.engine.source import SourceError, decode


def test_utf8_bom_is_kept_on_round_trip():
    data = "\ufeffx = 'é'\r\n".encode("utf-8")
    src = decode(data)
    assert src.encoding == "utf-8-sig" and src.text == "x = 'é'\r\n"
    assert src.encode(src.text) == data


def test_pep263_cookie_is_honoured():
    data = "# -*- coding: latin-1 -*-\nname = 'café'\n".encode("latin-1")
    src = decode(data)
    assert "café" in src.text
    assert src.encode(src.text) == data


def test_crlf_is_not_translated():
    assert decode(b"a = 1\r\nb = 2\r\n").text == "a = 1\r\nb = 2\r\n"


@pytest.mark.parametrize(
    "data, reason",
    [
        (b"\x00\x01binary", "binary"),
        (b"x = '\xff\xfe'\n", "not valid utf-8"),
        (b"# -*- coding: no-such-codec -*-\nx = 1\n", "encoding"),
    ],
)
def test_bad_bytes_give_one_line_reason(data, reason):
    with pytest.raises(SourceError) as info:
        decode(data)
    assert reason in str(info.value) and "\n" not in str(info.value)
