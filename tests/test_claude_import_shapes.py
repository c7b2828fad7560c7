"""`dshc import claude-code` + `dshc hook claude-code`, held together to Claude Code's documented decisions.

tests/fixtures/interop/claude_shapes.json holds settings shapes, one defect class each, with probe calls and
the session's permission mode; every probe goes through the real hook (in-process) with the imported policy
loaded, so the import and the hook are checked as one.
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest

from dshc.cli.hook import main as hook_main
from dshc.compiler.interop.claude_settings import import_settings
from dshc.compiler.policy import RANK

SHAPES = json.loads((Path(__file__).parent / "fixtures" / "interop" / "claude_shapes.json").read_text())["shapes"]


@pytest.fixture
def places(tmp_path, monkeypatch):
    """(project, home, policy folder). The home is the real one, only named in probes, never written: a
    policy's `~/` is expanded once per process."""
    root = tmp_path / "proj"
    (root / ".claude").mkdir(parents=True)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)
    return root, Path(os.path.expanduser("~")), tmp_path / "policies"


@pytest.fixture
def own_home(places, tmp_path, monkeypatch):
    """`places` with a home of its own, for files a settings hierarchy reads there."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    return places[0], home, places[2]


def _import(places, settings: dict, name: str):
    root, home, folder = places
    result = import_settings(settings, str(root / ".claude" / "settings.json"), str(root), str(home), name=name)
    folder.mkdir(exist_ok=True)
    path = folder / f"{name}.dsh"
    path.write_text(result.text)
    return result, path


def _fill(value, root, home):
    if isinstance(value, str):
        return value.replace("{root}", str(root)).replace("{home}", str(home))
    if isinstance(value, dict):
        return {k: _fill(v, root, home) for k, v in value.items()}
    return value


def hook_decision(places, path: Path, name: str, tool: str, tool_input, mode: str) -> str:
    root, home, _ = places
    tool_input = _fill(tool_input, root, home)
    if isinstance(tool_input, str):
        tool_input = {"command": tool_input} if tool in ("Bash", "PowerShell") else {"file_path": tool_input}
    payload = {
        "hook_event_name": "PreToolUse",
        "tool_name": tool,
        "tool_input": tool_input,
        "cwd": str(root),
        "permission_mode": mode,
        "session_id": "s",
    }
    out = io.StringIO()
    hook_main(
        ["claude-code", "--load", str(path), "--policy", name, "--workspace", str(root), "--log", "off"],
        io.StringIO(json.dumps(payload)),
        out,
        io.StringIO(),
    )
    answer = json.loads(out.getvalue())["hookSpecificOutput"]
    return answer["permissionDecision"]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s["name"])
def test_import_and_hook_give_claude_codes_decision(places, shape):
    name = "cc-" + shape["name"]
    _, path = _import(places, shape["settings"], name)
    wrong = []
    for tool, tool_input, mode, expected, *deviation in shape["probes"]:
        if mode in ("bypassPermissions", "dontAsk", "auto") and expected == "ask":
            expected = "deny"  # the hook cannot prompt in these modes: an ask there is a denial (cli/hook.py)
        if deviation:  # documented: dshc stricter than Claude Code, never wider
            assert RANK[deviation[0]["dshc"]] > RANK[expected] or deviation[0]["dshc"] == expected, deviation
            expected = deviation[0]["dshc"]
        got = hook_decision(places, path, name, tool, tool_input, mode)
        if got != expected:
            wrong.append(f"{tool} {tool_input!r} in `{mode}`: expected {expected}, got {got}")
    assert not wrong, "\n".join(wrong)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s["name"])
def test_import_is_portable_and_passes_its_own_check(places, shape, cli):
    root, home, _ = places
    _, path = _import(places, shape["settings"], "cc")
    text = path.read_text()
    assert str(root) not in text and str(home) not in text
    checked = cli("check", str(path), "--json")
    # DSH308 only: web_fetch and skill are mounted by no shipped preset, and an agent composes its own tools
    found = [d for d in checked.json()["diagnostics"] if d["code"] != "DSH308"] if checked.code == 1 else []
    assert checked.code in (0, 1) and not found, checked.out + checked.err


def test_no_deny_or_ask_is_ever_dropped(places):
    """Every deny and ask rule of every shape leaves a rule in the policy (a `# permissions.deny: …` origin)."""
    for shape in SHAPES:
        result, _ = _import(places, shape["settings"], "cc")
        perms = shape["settings"]["permissions"]
        for effect in ("deny", "ask"):
            for rule in perms.get(effect, []):
                assert f"# permissions.{effect}: {rule}" in result.text, (shape["name"], rule, result.notes)


def test_default_mode_is_not_written_as_a_permanent_rule(places):
    result, _ = _import(places, {"permissions": {"defaultMode": "bypassPermissions"}}, "yolo")
    assert "default ask" in result.text and "default allow" not in result.text
    result, _ = _import(places, {"permissions": {"defaultMode": "dontAsk"}}, "quiet")
    assert "default ask" in result.text and "approval ask" in result.text


# --- a settings hierarchy: user < project < local < managed ---------------------------------------
def _write(path: Path, settings: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings))
    return path


def test_a_hierarchy_merges_rules_and_the_highest_scalar_wins(own_home, cli):
    root, home, folder = places = own_home
    user = _write(
        home / ".claude" / "settings.json",
        {"permissions": {"allow": ["Bash(git push:*)", "Bash(ls:*)"]}, "sandbox": {"enabled": True}},
    )
    project = _write(root / ".claude" / "settings.json", {"permissions": {"deny": ["Bash(git push:*)"]}})
    local = _write(
        root / ".claude" / "settings.local.json",
        {"permissions": {"allow": ["Bash(make:*)"]}, "sandbox": {"enabled": False}},
    )
    out = folder / "merged.dsh"
    folder.mkdir(exist_ok=True)
    done = cli("import", "claude-code", str(user), str(project), str(local), "--name", "merged", "-o", str(out))
    assert done.code == 0, done.err
    text = out.read_text()
    assert "sandbox danger-full-access" in text  # local's `enabled: false` outranks the user's `true`
    assert "(from .claude/settings.local.json)" in text and "(from ~/.claude/settings.json)" in text
    decide = lambda command: hook_decision(places, out, "merged", "Bash", command, "default")  # noqa: E731
    assert decide("git push origin main") == "deny"  # a deny in any file wins over an allow in another
    assert decide("make test") == "allow" and decide("ls -la") == "allow"
    assert decide("curl https://x.example") == "ask"


def test_hierarchy_flag_finds_the_projects_files(own_home, cli):
    root, home, folder = places = own_home
    _write(home / ".claude" / "settings.json", {"permissions": {"deny": ["Bash(curl:*)"]}})
    project = _write(root / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(ls:*)"]}})
    _write(root / ".claude" / "settings.local.json", {"permissions": {"ask": ["Bash(ls -R:*)"]}})
    folder.mkdir(exist_ok=True)
    out = folder / "found.dsh"
    done = cli("import", "claude-code", str(project), "--hierarchy", "--name", "found", "-o", str(out))
    assert done.code == 0, done.err
    decide = lambda command: hook_decision(places, out, "found", "Bash", command, "default")  # noqa: E731
    assert decide("curl https://x.example") == "deny" and decide("ls -la") == "allow" and decide("ls -R") == "ask"


# --- change review: `dshc diff` reads agent settings directly ---------------------------------------
def test_diff_fails_a_change_that_widens_claude_code_settings(tmp_path, cli):
    old = _write(
        tmp_path / "old" / ".claude" / "settings.json",
        {"permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Bash(sudo:*)"]}},
    )
    undenied = _write(
        tmp_path / "undenied" / ".claude" / "settings.json", {"permissions": {"allow": ["Bash(npm run test:*)"]}}
    )
    widened = cli("diff", str(old), str(undenied), "--fail-on-widen", "--json")
    assert widened.code == 1, widened.err
    assert any(c["witness"].get("command", "").startswith("sudo") for c in widened.json()["changes"] if c["widening"])


def test_diff_reads_a_codex_config_as_its_imported_policy(tmp_path):
    from dshc.cli.agent_settings import agent_source

    config = tmp_path / "config.toml"
    config.write_text('approval_policy = "never"\nsandbox_mode = "danger-full-access"\n')
    source = agent_source(str(config))
    assert source.path.endswith("(codex import)") and b"policy codex" in source.data
    (tmp_path / "notes.json").write_text("{}")
    assert agent_source(str(tmp_path / "notes.json")) is None  # neither agent's settings file name
