"""The Bash parser of tree-sitter, loaded without its packages' start-up.

`import tree_sitter_bash` runs the package's `__init__`, which imports importlib.resources — and
with it tempfile, random and zipfile's helpers, ~6 ms of every hook that decides a shell command —
only to offer a highlighting query dshc never reads; `import tree_sitter` imports `typing` (~4 ms)
for a Protocol it declares. What dshc uses of each is its compiled `_binding` module, so that file
is loaded on its own through importlib's documented machinery; if it cannot be found that way
(another layout, another interpreter), the package is imported. The module loaded alone is entered
in `sys.modules` under its own name, and one already there is used: the package, imported before or
after, shares that one module, so there is one `Parser` type in the process.
"""

from __future__ import annotations

import os
import sys


def bash_parser():
    """A tree-sitter Parser for Bash (`tree_sitter.Parser(tree_sitter.Language(...))`)."""
    tree_sitter = _binding_alone("tree_sitter")
    if tree_sitter is None:
        import tree_sitter
    return tree_sitter.Parser(tree_sitter.Language(bash_language()))


def bash_language():
    """The grammar's language pointer, as `tree_sitter_bash.language()` returns it."""
    binding = _binding_alone("tree_sitter_bash")
    if binding is None:
        import tree_sitter_bash

        return tree_sitter_bash.language()
    return binding.language()


def _binding_alone(package_name: str):
    """`<package_name>._binding`, executed without the package's `__init__`; None if not found."""
    name = f"{package_name}._binding"
    if name in sys.modules:
        return sys.modules[name]
    # importlib.machinery only: importlib.util imports contextlib and functools (~15M instructions)
    from importlib.machinery import EXTENSION_SUFFIXES, ExtensionFileLoader, ModuleSpec, PathFinder

    try:
        package = PathFinder.find_spec(package_name)  # finds, never runs, a top-level package
    except (ImportError, ValueError):
        return None
    for folder in (package.submodule_search_locations or ()) if package else ():
        for suffix in EXTENSION_SUFFIXES:
            path = os.path.join(folder, "_binding" + suffix)
            if os.path.isfile(path):
                loader = ExtensionFileLoader(name, path)
                spec = ModuleSpec(name, loader, origin=path)
                spec.has_location = True
                module = loader.create_module(spec)  # as importlib.util.module_from_spec, for an extension
                module.__spec__, module.__loader__ = spec, loader
                loader.exec_module(module)
                sys.modules[name] = module
                return module
    return None
