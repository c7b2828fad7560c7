"""An interpreter as a user's clean install has it: a fresh venv that sees dshc and its dependencies,
and nothing else of the environment the benchmark runs in.

Why: whole-process figures are ratios to `python3 -c pass`. A development environment's site
directory can run start-up hooks in every interpreter (`.pth` files: an editable install's import
finder, a certificate bundle patch); those cost tens of milliseconds, inflate the baseline and
pre-import modules dshc would otherwise pay for. Here a `.pth` in the venv lists the package and the
dependencies' directories as plain paths, so no `.pth` of theirs runs.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import sysconfig

# the installed package's parts (pyproject's package-dir): dshc itself is a namespace package
PARTS = ("catalogs", "cli", "common", "compiler", "policies", "presets", "runtime")


def clean_python(root: str) -> str:
    """Make the venv under `root`; return its interpreter."""
    venv = os.path.join(root, "venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", venv], check=True)
    python = os.path.join(venv, "bin", "python")
    package = os.path.join(root, "package", "dshc")
    os.makedirs(package)
    for part in PARTS:  # wherever this interpreter finds dshc (an editable checkout or site-packages)
        os.symlink(importlib.import_module(f"dshc.{part}").__path__[0], os.path.join(package, part))
    own = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    dependencies = dict.fromkeys(sysconfig.get_paths()[key] for key in ("purelib", "platlib"))
    with open(os.path.join(own, "_bench_paths.pth"), "w", encoding="utf-8") as handle:
        handle.write("\n".join([os.path.dirname(package), *dependencies]) + "\n")
    return python
