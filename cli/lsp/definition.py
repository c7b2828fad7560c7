"""A Ref under the cursor → where what it names is defined: a declaration, or a catalog JSON entry.

In: the Ref, the parsed sources (declarations), the catalog folders (user folder first, then the
shipped one). Out: a Span (absolute path, 1-based line and column), or None.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from ...compiler import ast
from ...compiler.catalog import Catalog
from ...compiler.source import Span
from .index import Ref

DECLARED = ("preset", "host", "scope", "policy")


def definition(ref: Ref, documents, catalog: Catalog, catalog_dirs: list[str]) -> Span | None:
    """`documents`: every parsed source, so a jump works while the sources do not resolve."""
    if ref.kind in (*DECLARED, "commands"):
        kind = ast.DECL_KIND
        return next(
            (
                d.name.span
                for doc in documents
                for d in doc.decls
                if kind[type(d)] == ref.kind and d.name.text == ref.text
            ),
            None,
        )
    if ref.kind == "package" and ref.text in catalog.package_by_id:
        return _json_key(catalog_dirs, ref.text, "id", ref.text)
    if ref.kind == "tool":
        tools = [t for t in catalog.definitions.values() if t.name == ref.text or ref.text in t.aliases]
        if tools:
            return _json_key(catalog_dirs, tools[0].package, "name", tools[0].name)
    return None


def _json_key(catalog_dirs: list[str], package: str, key: str, value: str) -> Span | None:
    """The line of `"key": "value"` in the package's file: the first catalog folder that has it."""
    needle = re.compile(r'"%s"\s*:\s*%s' % (re.escape(key), re.escape(json.dumps(value))))
    for folder in catalog_dirs:
        path = Path(folder) / "packages" / f"{package}.json"
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        for number, line in enumerate(lines, 1):
            found = needle.search(line)
            if found:
                return Span(str(path.resolve()), number, found.start() + 1, number, found.end() + 1)
        return Span(str(path.resolve()), 1, 1, 1, 1)
    return None
