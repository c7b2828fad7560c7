"""File tools against a hostile filesystem: FIFOs and devices refused without blocking, hard
links out of the workspace refused for writes, a path component swapped for a symlink (once
by hand, then 1,000 times from another process during `dshc run`), and streaming reads that
return exactly the lines a whole-file read would."""

from __future__ import annotations

import hashlib
import io
import json
import os
import subprocess
import sys
import threading

import pytest
from hypothesis import given, strategies as st

from dshc.cli.main import main
from dshc.runtime.tools import IMPLEMENTATIONS, ToolContext, ToolError, fs, sandbox


@pytest.fixture
def ctx_for(workspace, state):
    def make(mode="workspace-write") -> ToolContext:
        return ToolContext(workspace=str(workspace), sandbox=mode, owner="a", state=state, abort=threading.Event())

    return make


def call(ctx, definition, args):
    return IMPLEMENTATIONS[definition](args, ctx)


def refused(code: str, ctx, definition, args) -> ToolError:
    with pytest.raises(ToolError) as caught:
        call(ctx, definition, args)
    assert caught.value.code == code, caught.value.message
    return caught.value


def finishes(fn, *args) -> None:
    """Run `fn` on a thread; a blocking open would leave the thread stuck past the bound."""
    outcome: list = []
    worker = threading.Thread(target=lambda: outcome.append(_capture(fn, *args)), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), "the call blocked"
    return outcome[0]


def _capture(fn, *args):
    try:
        return fn(*args)
    except ToolError as exc:
        return exc


# ---------------------------------------------------------------- blocking opens


def test_fifo_read_and_write_are_refused_without_blocking(ctx_for, workspace):
    os.mkfifo(workspace / "pipe")
    ctx = ctx_for()
    for definition, args in (
        ("tool-fs/read", {"file_path": "pipe"}),
        ("tool-fs/write", {"file_path": "pipe", "content": "x"}),
    ):
        outcome = finishes(call, ctx, definition, args)
        assert isinstance(outcome, ToolError) and "not a regular file" in outcome.message


def test_devices_are_refused_even_with_full_access(ctx_for):
    ctx = ctx_for("danger-full-access")
    assert "not a regular file" in finishes(call, ctx, "tool-fs/read", {"file_path": "/dev/zero"}).message
    assert (
        "not a regular file" in finishes(call, ctx, "tool-fs/write", {"file_path": "/dev/null", "content": "x"}).message
    )


# ---------------------------------------------------------------- hard links


def test_hard_link_to_a_file_outside_is_not_written(ctx_for, workspace, outside):
    secret = outside / "secret.txt"
    secret.write_text("outside\n")
    os.link(secret, workspace / "hardlink.txt")
    ctx = ctx_for()
    call(ctx, "tool-fs/read", {"file_path": "hardlink.txt"})  # reading it is fine
    refused("FS_SANDBOX_DENIED", ctx, "tool-fs/write", {"file_path": "hardlink.txt", "content": "changed\n"})
    refused(
        "FS_SANDBOX_DENIED",
        ctx,
        "tool-fs/edit",
        {"file_path": "hardlink.txt", "old_string": "outside", "new_string": "changed"},
    )
    assert secret.read_text() == "outside\n"
    # full access means what it says
    call(
        ctx_for("danger-full-access"),
        "tool-fs/write",
        {"file_path": str(workspace / "hardlink.txt"), "content": "changed\n"},
    )
    assert secret.read_text() == "changed\n"


# ---------------------------------------------------------------- symlink swaps


def test_component_swapped_after_the_decision_is_not_followed(ctx_for, workspace, outside):
    (workspace / "d").mkdir()
    ctx = ctx_for()
    real = sandbox.resolve_path(ctx, "d/new.txt", write=True)  # judged while `d` is a folder
    (workspace / "d").rename(workspace / "parked")
    (workspace / "d").symlink_to(outside)  # … then swapped
    with pytest.raises(ToolError) as caught:
        sandbox.open_file(ctx, real, "d/new.txt", write=True, create=True)
    assert caught.value.code == "FS_SANDBOX_DENIED"
    assert list(outside.iterdir()) == []
    (workspace / "d").unlink()
    (workspace / "d").symlink_to(workspace / "parked" / "f")  # final component swapped
    real = str(workspace / "d")
    with pytest.raises(ToolError):
        sandbox.open_file(ctx, real, "d", write=True, create=True)
    assert not (workspace / "parked" / "f").exists()


SWAPPER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
os.chdir(sys.argv[1])
swaps = 0
while not os.path.exists("stop"):
    # atomically trade places: `d` is the real folder one moment, a link out the next
    if libc.renameat2(AT_FDCWD, b"d", AT_FDCWD, b"l", RENAME_EXCHANGE) == 0:
        swaps += 1
print(swaps)
"""


def test_symlink_swapped_in_a_loop_during_dshc_run_never_escapes(workspace, outside, tmp_path):
    # longer runs: DSHC_RACE_ATTEMPTS=20000 pytest tests/test_fs_safety.py -k loop
    attempts = int(os.environ.get("DSHC_RACE_ATTEMPTS", "1000"))
    (workspace / "d").mkdir()
    (workspace / "l").symlink_to(outside)
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        "".join(
            json.dumps({"id": f"w{i}", "name": "write", "arguments": {"file_path": f"d/f{i}.txt", "content": f"{i}\n"}})
            + "\n"
            for i in range(attempts)
        )
    )
    swapper = subprocess.Popen([sys.executable, "-c", SWAPPER, str(workspace)], stdout=subprocess.PIPE, text=True)
    try:
        out, err = io.StringIO(), io.StringIO()
        main(
            [
                "run",
                str(calls),
                "--workspace",
                str(workspace),
                "--policy",
                "workspace-write",
                "--approve",
                "never",
                "--json",
            ],
            out,
            err,
        )
    finally:
        (workspace / "stop").touch()
        swaps = int(swapper.communicate(timeout=30)[0])
    results = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(results) == attempts
    assert list(outside.iterdir()) == [], "a write escaped the workspace"
    written = sum(not r["isError"] for r in results)
    assert swaps > attempts and 0 < written < attempts  # the race was on: some writes landed, some were refused
    # every write that reported success is inside the workspace
    inside = {p.name for p in workspace.rglob("f*.txt")}
    assert all(f"f{r['id'][1:]}.txt" in inside for r in results if not r["isError"])


# ---------------------------------------------------------------- streaming read


def whole_file_window(text: str, offset: int, limit: int) -> tuple[list[str], bool]:
    """The read window as computed over the whole decoded file."""
    lines = text.splitlines()
    window = lines[offset - 1 : offset - 1 + limit]
    truncated = offset - 1 + len(window) < len(lines) or any(len(line) > fs.MAX_LINE_CHARS for line in window)
    return [line[: fs.MAX_LINE_CHARS] for line in window], truncated


@given(
    pieces=st.lists(
        st.sampled_from(["a", "bc", "\n", "\r", "\r\n", "\x0b", "\u2028", "é", "\x85", "\xff"]), max_size=40
    ),
    offset=st.integers(1, 6),
    limit=st.integers(1, 6),
    chunk=st.integers(1, 5),
)
def test_streaming_read_matches_a_whole_file_read(tmp_path_factory, pieces, offset, limit, chunk):
    workspace = tmp_path_factory.mktemp("ws")
    data = "".join(pieces).encode("utf-8", "surrogateescape")
    (workspace / "f").write_bytes(data)
    from dshc.runtime.tools import ToolState

    ctx = ToolContext(
        workspace=str(workspace), sandbox="workspace-write", owner="a", state=ToolState(), abort=threading.Event()
    )
    saved = fs.CHUNK
    fs.CHUNK = chunk  # tiny chunks put every line break on a chunk boundary somewhere
    try:
        value = call(ctx, "tool-fs/read", {"file_path": "f", "offset": offset, "limit": limit})
    finally:
        fs.CHUNK = saved
    lines, truncated = whole_file_window(data.decode("utf-8", "replace"), offset, limit)
    assert value["content"] == "\n".join(lines) and value["lines"] == len(lines)
    assert value["truncated"] == truncated
    # the digest read-before-write compares against covers the whole file, however far the window reached
    assert ctx.state.observed[value["path"]] == hashlib.sha256(data).hexdigest()


def test_long_lines_are_cut_without_holding_them(ctx_for, workspace):
    (workspace / "long.txt").write_text("x" * (fs.MAX_LINE_CHARS * 5) + "\nshort\n")
    value = call(ctx_for(), "tool-fs/read", {"file_path": "long.txt", "limit": 1})
    assert value["content"] == "x" * fs.MAX_LINE_CHARS and value["truncated"]


def test_read_before_write_uses_the_streamed_digest(ctx_for, workspace, monkeypatch):
    monkeypatch.setattr(fs, "CHUNK", 4)  # the window ends chunks before the end of the file
    ctx = ctx_for()
    (workspace / "a.txt").write_text("one\ntwo\nthree\n")
    call(ctx, "tool-fs/read", {"file_path": "a.txt", "offset": 1, "limit": 1})
    call(ctx, "tool-fs/edit", {"file_path": "a.txt", "old_string": "three", "new_string": "3"})
    (workspace / "a.txt").write_text("changed behind our back\n")
    refused("FS_STALE_VERSION", ctx, "tool-fs/write", {"file_path": "a.txt", "content": "x"})
    assert (workspace / "a.txt").read_text() == "changed behind our back\n"
