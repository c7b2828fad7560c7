"""JSON text ⇄ values for the processes spawned per tool call, without importing the json package.

`import json` imports `re` (and with it `enum`, `functools`, `collections`) to compile four
expressions at import time, for skipping whitespace and for its pure-Python fallbacks: ~30 million
instructions, a sixth of a hook process. Parsing and writing are done by CPython's own C
accelerator (`_json`), which the json package itself calls: `loads` here hands it the text as
`json.loads` does, skipping JSON's four whitespace characters with str methods instead of a regular
expression; `dumps` calls its encoder with `json.dumps`'s default options. Anything else — an error
to report, bytes in another encoding, an interpreter without `_json` — goes to the json package, so
results and error messages are json's own.
"""
from __future__ import annotations

try:
    import _json
except ImportError:  # another interpreter: the json package does all of it
    _json = None

_WHITESPACE = " \t\n\r"  # JSON's whitespace, as json.decoder.WHITESPACE_STR


def _constant(name: str) -> float:
    return {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}[name]


class _Options:
    """What `_json.make_scanner` reads off a json.JSONDecoder: its defaults."""
    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int
    parse_constant = staticmethod(_constant)


_scan = _json.make_scanner(_Options()) if _json is not None else None


def loads(text: str | bytes | bytearray):
    """`json.loads(text)`."""
    if _scan is None:
        return _stdlib_loads(text)
    if not isinstance(text, str):
        # json.loads detects UTF-16/32 and a BOM in bytes; plain UTF-8 is all dshc writes
        if text[:3] == b"\xef\xbb\xbf" or b"\x00" in text[:4]:
            return _stdlib_loads(text)
        try:
            text = text.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return _stdlib_loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scan(text, start)
    except Exception:  # noqa: BLE001 - any failure is json's to report (the accelerator raises its
        # JSONDecodeError only once json.decoder is loaded; before that, a SystemError)
        return _stdlib_loads(text)
    if end != len(text) and end != len(text.rstrip(_WHITESPACE)):
        return _stdlib_loads(text)  # extra data after the value
    return value


def dumps(value, ensure_ascii: bool = True) -> str:
    """`json.dumps(value, ensure_ascii=ensure_ascii)` (every other option at its default)."""
    if _json is None:
        import json
        return json.dumps(value, ensure_ascii=ensure_ascii)
    encode = _json.make_encoder({}, _not_serializable,
                                _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring,
                                None, ": ", ", ", False, False, True)
    return "".join(encode(value, 0))


def _not_serializable(value):
    import json
    return json.JSONEncoder().default(value)  # json's TypeError, worded as json words it


def _stdlib_loads(text):
    import json
    return json.loads(text)
