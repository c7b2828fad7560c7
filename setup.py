"""Build step of the package: the run_code worker's npm dependency is fetched beside runner.js before
the modules are copied, so `pip install .` yields a package whose code mode runs. Everything else
about the package is in pyproject.toml."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
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


def prebuild(build_lib: str) -> str:
    """Compile the shipped presets and policies with the package just built (dshc.compiler.build_shipped) into
    its `prebuilt` folder, so that the first call after installing parses and checks nothing; returns
    what was done. A build where this fails still installs: the first call then compiles, as before."""
    build_lib = os.path.abspath(build_lib)  # the compile runs in a folder of its own
    target = os.path.join(build_lib, "dshc", "compiler", "prebuilt")
    shutil.rmtree(target, ignore_errors=True)
    with tempfile.TemporaryDirectory() as cache:  # the compile's own cache: its grammar tables, its stamp
        # the package first, then whatever the build's own environment puts on the path (pip's isolated build
        # finds its requirements through PYTHONPATH)
        path = os.pathsep.join([build_lib, *filter(None, [os.environ.get("PYTHONPATH")])])
        env = {**os.environ, "PYTHONPATH": path, "XDG_CACHE_HOME": cache, "PYTHONDONTWRITEBYTECODE": "1"}
        env.pop("DSHC_NO_CACHE", None)
        done = subprocess.run(
            [sys.executable, "-m", "dshc.compiler.build_shipped", target],
            env=env,
            cwd=cache,
            capture_output=True,
            text=True,
        )
    if done.returncode != 0:
        shutil.rmtree(target, ignore_errors=True)  # all or nothing
        print(f"dshc: the shipped program was not prebuilt:\n{done.stderr[-2000:]}", file=sys.stderr)
        return "failed"
    return "built"


class BuildWithWorker(build_py):
    def run(self) -> None:
        if fetch_worker_dependencies() == "fetched":
            self.__dict__.pop("data_files", None)  # listed before the fetch: list the package data again
        super().run()
        if not getattr(self, "editable_mode", False):  # a checkout compiles on first use, into the user's cache
            prebuild(self.build_lib)


if __name__ == "__main__":  # setuptools' build backend runs this file as __main__; tests import it
    setup(cmdclass={"build_py": BuildWithWorker})
