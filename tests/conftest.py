"""Shared fixtures: the shipped program (loaded once), an in-process CLI runner, and a tool
session with a workspace and a folder outside it."""
from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from dshc.compiler.cli import main
from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.runtime.tools import ToolState

settings.register_profile("ci", max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci")


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


def run_cli(*argv: str) -> CliResult:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out, err)
    return CliResult(code, out.getvalue(), err.getvalue())


@pytest.fixture(scope="session")
def program() -> Program:
    return Program.load()


@pytest.fixture
def cli():
    return run_cli


def request(**kwargs) -> Request:
    return Request(**kwargs)


@pytest.fixture
def state():
    s = ToolState()
    yield s
    s.close()


@pytest.fixture
def workspace(tmp_path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def outside(tmp_path) -> Path:
    out = tmp_path / "outside"
    out.mkdir()
    return out
