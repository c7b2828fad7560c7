"""The compiled Bash grammar for tree-sitter, loaded without its package's start-up.

`import tree_sitter_bash` runs the package's `__init__`, which imports importlib.resources — and
with it tempfile, random and zipfile's helpers, ~6 ms of every hook that decides a shell command —
only to offer a highlighting query dshc never reads. The grammar itself is the package's compiled
`_binding` module, so that file is loaded on its own through importlib's documented machinery;
if it cannot be found that way (another layout, another interpreter), the package is imported.
"""
from __future__ import annotations

import os


def bash_language():
    """The grammar's language pointer, as `tree_sitter_bash.language()` returns it."""
    binding = _binding_alone()
    if binding is None:
        import tree_sitter_bash
        return tree_sitter_bash.language()
    return binding.language()


def _binding_alone():
    """`tree_sitter_bash._binding`, executed without the package's `__init__`; None if not found."""
    import importlib.machinery
    import importlib.util
    try:
        package = importlib.util.find_spec("tree_sitter_bash")  # finds, never runs, a top-level package
    except (ImportError, ValueError):
        return None
    for folder in (package.submodule_search_locations or ()) if package else ():
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, "_binding" + suffix)
            if os.path.isfile(path):
                spec = importlib.util.spec_from_file_location("tree_sitter_bash._binding", path)
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                return module
    return None
