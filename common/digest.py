"""SHA-256 without loading OpenSSL.

`import hashlib` loads the OpenSSL library (~5 ms of a process); a hook runs once per tool call and
hashes a few kilobytes, where CPython's own SHA-256 module is good enough. A process that has
loaded hashlib anyway (one that parses: the parser cache is keyed with it) gets OpenSSL's, about
eight times faster on the catalog's ~110 KB. The digests are the same.
"""

from __future__ import annotations

import sys

try:
    from _sha2 import sha256 as _own_sha256  # CPython 3.12+
except ImportError:
    try:
        from _sha256 import sha256 as _own_sha256  # CPython 3.11
    except ImportError:  # another interpreter: the standard library's
        from hashlib import sha256 as _own_sha256


def sha256(data: bytes = b""):
    """A SHA-256 hash object holding `data`: OpenSSL's when hashlib is already loaded, else CPython's."""
    hashlib = sys.modules.get("hashlib")
    return hashlib.sha256(data) if hashlib is not None else _own_sha256(data)


__all__ = ["sha256"]
