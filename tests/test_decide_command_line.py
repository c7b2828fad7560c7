"""`dshc decide`'s lean path reads a plainly written command line into exactly the Namespace the
full command line (argparse) makes, and leaves every other command line to it."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.cli.decide import fast_arguments
from dshc.cli.main import parse_arguments, parser_for

VALUE_FLAGS = [
    "--args",
    "--workspace",
    "--host",
    "--platform",
    "--scope",
    "--mode",
    "--policy",
    "--with",
    "--without",
    "--flag",
    "--load",
    "--catalog",
    "--preset",
]
SWITCHES = ["--plan", "--no-shipped", "--json"]
ODD = ["--help", "-h", "--hos", "--host=web", "--", "-x", "--debug", "--all", "--args=", "-1"]
values = st.sampled_from(
    [
        '{"file_path": "a.md"}',
        "{}",
        "web",
        "linux",
        "darwin",
        "win32",
        "solaris",
        "root",
        "both",
        "code",
        "native",
        "lean",
        "read-only",
        "-v",
        "x.dsh",
        "",
        "standard",
        "a b",
    ]
)
pieces = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(VALUE_FLAGS), values).map(list),
        st.sampled_from(SWITCHES).map(lambda s: [s]),
        st.sampled_from(ODD).map(lambda s: [s]),
        st.sampled_from(["read", "standard", "bash"]).map(lambda s: [s]),
    ),
    max_size=6,
)


def _argparse(argv: list[str]) -> dict:
    full = ["decide", *argv]
    return vars(parse_arguments(parser_for(full), full))


@settings(max_examples=300)
@given(
    st.sampled_from(["read", "bash", "web_fetch", "-", "--json"]),
    st.sampled_from([[], ["standard"], ["a", "b"]]),
    pieces,
    st.integers(min_value=0, max_value=6),
)
def test_a_plain_command_line_reads_as_argparse_reads_it(tool, presets, flags, at):
    """The preset words go anywhere among the flags' pieces (argparse intermixes positionals)."""
    words = [word for piece in flags for word in piece]
    at = min(at, len(flags))
    before = [word for piece in flags[:at] for word in piece]
    argv = [tool, *before, *presets, *words[len(before) :]]
    fast = fast_arguments(argv)
    if fast is None:
        return
    assert vars(fast) == _argparse(argv), argv


@pytest.mark.parametrize(
    "argv",
    [
        ["read", "--args", '{"file_path": "a.md"}'],
        ["bash", "standard", "--args", '{"command": "ls"}', "--host", "ci", "--policy", "read-only", "--json"],
        ["read", "--load", "a.dsh", "--load", "b.dsh", "--no-shipped", "--with", "net", "--plan", "--workspace", "w"],
        ["read", "--mode", "code", "--platform", "darwin", "--flag", "x", "--scope", "child", "--catalog", "c"],
        ["bash", "--args", '{"command": "git status"}', "standard"],  # the preset after the flags
        ["read", "--json", "standard"],
        ["--json", "read", "--host", "ci", "standard", "--plan"],
    ],
)
def test_common_command_lines_take_the_lean_path(argv):
    fast = fast_arguments(argv)
    assert fast is not None and vars(fast) == _argparse(argv)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["--help"],
        ["read", "-h"],
        ["read", "--host=web"],
        ["read", "--hos", "web"],
        ["read", "--args"],
        ["read", "--platform", "solaris"],
        ["read", "x", "y"],
        ["read", "--host", "-v"],
        ["read", "--json", "a", "b"],
        ["--json"],
    ],
)
def test_anything_else_goes_to_argparse(argv):
    assert fast_arguments(argv) is None


@pytest.mark.parametrize("mode", ["native", "bogus"])
def test_the_mode_default_comes_from_the_environment_as_with_argparse(monkeypatch, mode):
    monkeypatch.setenv("DSH_TOOLS_MODE", mode)
    fast = fast_arguments(["read"])
    if mode == "bogus":
        assert fast is None  # argparse reports it
    else:
        assert fast is not None and vars(fast) == _argparse(["read"]) and fast.mode == "native"


@pytest.mark.parametrize(
    "argv",
    [
        ["decide", "read", "--args", '{"file_path": "a.md"}'],
        ["decide", "write", "--args", '{"file_path": "a.md", "content": "x"}', "--policy", "read-only", "--json"],
        ["decide", "nosuchtool", "--args", "{}"],
        ["decide", "read", "--args", "{bad", "--json"],
        ["decide", "bash", "--args", '{"command": "sudo rm -rf /"}', "--policy", "read-only"],
    ],
)
def test_the_lean_path_answers_as_the_full_command_line(tmp_path, argv):
    """`dshc --debug decide …` goes through argparse (the first word is not `decide`): the same
    output and status as the lean path's."""
    entry = [sys.executable, "-c", "from dshc.cli.entry import entry; entry()"]
    lean = subprocess.run(entry + argv, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    full = subprocess.run(entry + ["--debug", *argv], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert (lean.returncode, lean.stdout, lean.stderr) == (full.returncode, full.stdout, full.stderr)


@pytest.mark.parametrize(
    "argv, collecting", [(["decide", "read"], False), (["hook", "claude-code"], False), (["ls"], True)]
)
def test_a_per_call_process_runs_without_the_cyclic_collector(monkeypatch, argv, collecting):
    """`decide` and `hook` free everything at once when they end (`_end_now`): no collector passes before."""
    import gc

    from dshc.cli import entry

    seen = []
    monkeypatch.setattr(entry, "run", lambda args: seen.append(gc.isenabled()) or 0)
    monkeypatch.setattr(entry, "_end_now", lambda code: None)
    monkeypatch.setattr(sys, "argv", ["dshc", *argv])
    enabled = gc.isenabled()
    try:
        with pytest.raises(SystemExit):
            entry.entry()
    finally:
        gc.enable() if enabled else gc.disable()
    assert seen == [collecting]
