"""Build step of the package: the run_code worker's npm dependency is fetched beside runner.js before
the modules are copied, so `pip install .` yields a package whose code mode runs. Everything else
about the package is in pyproject.toml."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

WORKER_DIR = Path(__file__).resolve().parent / "runtime" / "code" / "node"
SKIP_ENV = "DSHC_SKIP_NPM"  # build without the worker's dependency (run_code then shows unavailable)


def fetch_worker_dependencies(folder: Path = WORKER_DIR, npm: str | None = None) -> str:
    """`npm ci` in the worker's folder when its node_modules is absent; returns what was done."""
    if (folder / "node_modules").is_dir():
        return "present"
    if os.environ.get(SKIP_ENV):
        return "skipped"
    npm = npm or shutil.which("npm")
    if npm is None:  # no Node.js toolchain: the package builds, and gate 5 shows run_code unavailable
        print("dshc: npm is not on PATH; run_code will be unavailable", file=sys.stderr)
        return "no-npm"
    done = subprocess.run(
        [npm, "ci", "--prefix", str(folder), "--no-audit", "--no-fund", "--omit=dev"], capture_output=True, text=True
    )
    if done.returncode != 0:  # a half-filled node_modules must not ship: fail the build, say how to skip
        shutil.rmtree(folder / "node_modules", ignore_errors=True)
        raise SystemExit(
            f"dshc: `npm ci` in {folder} failed ({done.returncode}):\n{done.stderr[-2000:]}\n"
            f"set {SKIP_ENV}=1 to build without code mode's worker"
        )
    return "fetched"


class BuildWithWorker(build_py):
    def run(self) -> None:
        if fetch_worker_dependencies() == "fetched":
            self.__dict__.pop("data_files", None)  # listed before the fetch: list the package data again
        super().run()


if __name__ == "__main__":  # setuptools' build backend runs this file as __main__; tests import it
    setup(cmdclass={"build_py": BuildWithWorker})
