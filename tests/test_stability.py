"""Byte-stable views: the same bytes whatever the hash seed and whatever order sources load in."""

from __future__ import annotations

import os
import subprocess
import sys

PROBE = r"""
import hashlib, random, sys
from dshc.compiler.program import Program, shipped_sources
from dshc.compiler.request import Request
files = shipped_sources()
random.Random(int(sys.argv[1])).shuffle(files)
program = Program.from_files(files)
out = []
for kwargs in (dict(preset="standard"), dict(preset="code"), dict(preset="cordis", scope="continuable-child"),
               dict(host="headless", platform="win32"), dict(preset="standard", policy="plan", plan=True)):
    view = program.view(Request(**kwargs))
    out.append(view.fingerprint + " " + hashlib.sha256(view.canonical_json()).hexdigest())
print("\n".join(out))
"""


def test_views_are_byte_identical_across_processes_seeds_and_source_orders():
    outputs = set()
    for run in range(5):
        env = {**os.environ, "PYTHONHASHSEED": str(1000 + run * 7919)}
        done = subprocess.run(
            [sys.executable, "-c", PROBE, str(run)], env=env, capture_output=True, text=True, check=True
        )
        outputs.add(done.stdout)
    assert len(outputs) == 1
    (text,) = outputs
    assert len(text.split()) == 10
