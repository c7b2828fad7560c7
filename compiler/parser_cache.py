"""Grammar text + a build function → lark parser, with the LALR tables kept as plain JSON data.

The cache lives in the user's cache folder (user_cache) and is trusted only when it is ours and nobody
else can write it; anything else is reported on stderr and the tables are rebuilt from the grammar.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from typing import Callable

import lark
from lark import Lark
from lark.grammar import Rule
from lark.lark import _LOAD_ALLOWED_OPTIONS
from lark.lexer import TerminalDef

from . import user_cache
from .user_cache import UntrustedCache

FORMAT = 1
# JSON has no tuples and no integer keys; lark's serialised tables use both
_TUPLE, _INT_KEYS = "#t", "#i"


def load_parser(grammar: str, build: Callable[[], Lark], load_options: dict, *, report=None, variant: str = "") -> Lark:
    """The parser for `grammar`: from the cache when it is trustworthy, else `build()` (and cache it).

    `variant` names the build options baked into the tables (keep_all_tokens is): they are part of the key.
    """
    report = report or _warn
    if os.environ.get("DSHC_NO_PARSER_CACHE") or not user_cache.usable():
        return build()
    key = hashlib.sha256(f"{FORMAT}\0{lark.__version__}\0{variant}\0{grammar}".encode("utf-8")).hexdigest()
    name = f"grammar-{key[:32]}.json"
    try:
        folder = user_cache.open_folder()
    except UntrustedCache as exc:
        report(f"not using the parser cache: {exc}")
        return build()
    except OSError:
        return build()  # no cache folder can be made (read-only home): cold start, nothing unsafe
    try:
        try:
            return Lark.__new__(Lark)._load(_tables(user_cache.read(folder, name), key), **load_options)
        except FileNotFoundError:
            built = _from_build(name, key, load_options)
            if built is not None:
                parser, data = built
                try:
                    user_cache.write(folder, name, data)
                except OSError:
                    pass
                return parser
        except UntrustedCache as exc:
            report(f"ignoring the parser cache: {exc}")
        except Exception as exc:  # noqa: BLE001 - any unreadable cache means a rebuild, never a failure
            report(f"ignoring the parser cache `{name}`: it is corrupt ({type(exc).__name__})")
        parser = build()
        try:
            _write(folder, name, key, parser)
        except OSError:
            pass  # a full disk costs the next run a rebuild, nothing more
        return parser
    finally:
        os.close(folder)


def _warn(message: str) -> None:
    print(f"dshc: warning: {message}", file=sys.stderr)


def _from_build(name: str, key: str, load_options: dict):
    """(parser, the file's bytes) from the tables the package build made, or None (a checkout, a
    build with another lark, a damaged file: then they are built here)."""
    from . import prebuilt

    data = prebuilt.read(name)
    if data is None:
        return None
    try:
        return Lark.__new__(Lark)._load(_tables(data, key), **load_options), data
    except Exception:  # noqa: BLE001 - as for a corrupt cache file: rebuild
        return None


def _tables(data: bytes, key: str) -> dict:
    header, _, body = data.partition(b"\n")
    meta = json.loads(header)
    if meta.get("key") != key or meta.get("sha256") != hashlib.sha256(body).hexdigest():
        raise ValueError("key or checksum mismatch")
    return json.loads(body, object_hook=_decode)


def _write(folder: int, name: str, key: str, parser: Lark) -> None:
    data, memo = parser.memo_serialize([TerminalDef, Rule])
    # options that carry code (callbacks) are given again at load time; they are never stored
    data["options"] = {n: v for n, v in data["options"].items() if n not in _LOAD_ALLOWED_OPTIONS}
    body = json.dumps(_encode({"data": data, "memo": memo}), separators=(",", ":")).encode("utf-8")
    header = json.dumps(
        {"format": FORMAT, "lark": lark.__version__, "key": key, "sha256": hashlib.sha256(body).hexdigest()}
    ).encode("utf-8")
    user_cache.write(folder, name, header + b"\n" + body)


def _encode(value):
    if isinstance(value, dict):
        if all(type(k) is str for k in value):
            return {k: _encode(v) for k, v in value.items()}
        return {_INT_KEYS: [[k, _encode(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {_TUPLE: [_encode(v) for v in value]}
    if isinstance(value, list):
        return [_encode(v) for v in value]
    return value


def _decode(obj: dict):
    if len(obj) == 1:
        if _TUPLE in obj:
            return tuple(obj[_TUPLE])
        if _INT_KEYS in obj:
            return {k: v for k, v in obj[_INT_KEYS]}
    return obj
