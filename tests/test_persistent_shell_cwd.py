"""The persistent shell keeps its `cd`s from one call to the next, so a relative path in a later call is the
shell's directory's, not the workspace's: `cd ~` then `cat .aws/credentials` reads the home's credentials.
The runtime decides each call where the shell is now (read from /proc), as the hook does with Claude Code's
`cwd`.

Report: the shell-cwd class of anthropics/claude-code#4570 (deny rules on paths walked around from another
directory)."""

from __future__ import annotations

import json
import sys

import pytest

from dshc.runtime import sandbox

PROBE = sandbox.probe()
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads the shell's directory in /proc")


@pytest.mark.parametrize("mode", ["danger-full-access", "workspace-write"])
def test_a_later_call_is_decided_in_the_directory_the_shell_moved_to(cli, tmp_path, mode):
    if mode != "danger-full-access" and (PROBE.landlock_abi < 1 or not PROBE.network_namespace):
        pytest.skip("needs Landlock and unprivileged user namespaces")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s3cret\n")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "secret.txt").write_text("harmless\n")
    policy = tmp_path / "p.dsh"
    policy.write_text(
        f'policy p {{\n  default allow\n  sandbox {mode}\n  deny read when args.file_path matches "{outside}/*"\n}}\n'
    )
    calls = tmp_path / "calls.jsonl"
    calls.write_text(
        "".join(
            json.dumps({"id": cid, "name": "bash", "arguments": {"command": command}}) + "\n"
            for cid, command in (("here", "cat secret.txt"), ("move", f"cd {outside}"), ("there", "cat secret.txt"))
        )
    )
    done = cli(
        "run",
        str(calls),
        "minimal",
        "--load",
        str(policy),
        "--policy",
        "p",
        "--workspace",
        str(workspace),
        "--log",
        str(tmp_path / "events.jsonl"),
        "--json",
    )
    rows = {row["id"]: row for row in map(json.loads, done.out.splitlines())}
    assert "harmless" in rows["here"]["content"] and not rows["here"]["isError"], rows["here"]
    assert not rows["move"]["isError"], rows["move"]
    assert rows["there"]["isError"] and "s3cret" not in rows["there"]["content"], rows["there"]
    assert f"{outside}/secret.txt" in rows["there"]["content"], rows["there"]
