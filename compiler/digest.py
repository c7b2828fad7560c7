"""SHA-256 without loading OpenSSL.

`import hashlib` loads the OpenSSL library (~5 ms of a process); a hook runs once per tool call and
hashes a few kilobytes, where CPython's own SHA-256 module is as good. The digests are the same.
"""
from __future__ import annotations

try:
    from _sha2 import sha256  # CPython 3.12+
except ImportError:
    try:
        from _sha256 import sha256  # CPython 3.11
    except ImportError:  # another interpreter: the standard library's
        from hashlib import sha256

__all__ = ["sha256"]
