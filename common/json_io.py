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
    _json = None  # type: ignore[assignment]  # tested for None below

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


_scan = _json.make_scanner(_Options()) if _json is not None else None  # type: ignore[arg-type]  # reads any object's attributes


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


def dumps(
    value,
    ensure_ascii: bool = True,
    *,
    sort_keys: bool = False,
    separators: tuple[str, str] = (", ", ": "),
    default=None,
) -> str:
    """`json.dumps(value, ensure_ascii=…, sort_keys=…, separators=…, default=…)` (every other option at its default)."""
    if _json is None:
        import json

        return json.dumps(value, ensure_ascii=ensure_ascii, sort_keys=sort_keys, separators=separators, default=default)
    item, key = separators
    encode = _json.make_encoder(
        {},
        default or _not_serializable,
        _json.encode_basestring_ascii if ensure_ascii else _json.encode_basestring,
        None,
        key,
        item,
        sort_keys,
        False,
        True,
    )
    return "".join(encode(value, 0))


def canonical(value) -> bytes | None:
    """RFC 8785 canonical JSON of a value whose every character is below U+D800 and that holds no float and
    no integer beyond 2**53, through the C encoder; None for any other (rfc8785 decides). For such values
    the forms agree: members sorted by key (UTF-16 order is code point order there), no whitespace, only
    `"`, `\\` and control characters escaped, lowercase `\\u00xx`."""
    if not _plain(value, 0):
        return None
    return dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":")).encode("utf-8")


def _plain(value, depth: int) -> bool:
    kind = type(value)
    if kind is str:
        return not value or max(value) < "\ud800"
    if kind is dict:
        return depth < 100 and all(
            type(k) is str and _plain(k, depth) and _plain(v, depth + 1) for k, v in value.items()
        )
    if kind is list or kind is tuple:
        return depth < 100 and all(_plain(v, depth + 1) for v in value)
    return (kind is int and -(2**53) < value < 2**53) or kind is bool or value is None  # rfc8785's integer range


def _not_serializable(value):
    import json

    return json.JSONEncoder().default(value)  # json's TypeError, worded as json words it


def _stdlib_loads(text):
    import json

    return json.loads(text)
