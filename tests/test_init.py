"""`dshc init`: a project under `guarded` whose own tests pass, the hook merged into Claude Code's settings
without losing a key, and no file overwritten without --force."""

from __future__ import annotations

import json


def test_init_in_an_empty_project_gives_a_hook_setup_whose_tests_pass(cli, tmp_path):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "model": "opus",
                "permissions": {"deny": ["Read(./.env)"]},
                "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify"}]}]},
            }
        )
    )
    result = cli("init", str(tmp_path), "--claude-code", "--json")
    assert result.code == 0, result.err
    assert result.json()["written"] == [".dshc", "team.dsh", "team.test.toml", ".claude/settings.json"]
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert settings["model"] == "opus" and settings["permissions"] == {"deny": ["Read(./.env)"]}
    assert settings["hooks"]["Stop"] == [{"hooks": [{"type": "command", "command": "notify"}]}]
    for event in ("PreToolUse", "PostToolUse"):
        assert settings["hooks"][event] == [
            {"matcher": "*", "hooks": [{"type": "command", "command": "dshc hook claude-code"}]}
        ]
    tested = cli("test", str(tmp_path / "team.test.toml"))
    assert tested.code == 0, tested.out
    assert "2 passed, 0 failed" in tested.out


def test_init_refuses_to_overwrite_without_force_and_never_registers_the_hook_twice(cli, tmp_path):
    assert cli("init", str(tmp_path), "--claude-code").code == 0
    (tmp_path / "team.dsh").write_text("# mine\n")
    refused = cli("init", str(tmp_path), "--json")
    assert refused.code == 2 and refused.json()["diagnostics"][0]["code"] == "DSH405"
    assert (tmp_path / "team.dsh").read_text() == "# mine\n"
    assert cli("init", str(tmp_path), "--claude-code", "--force").code == 0
    settings = json.loads((tmp_path / ".claude" / "settings.json").read_text())
    assert len(settings["hooks"]["PreToolUse"]) == 1
    assert "extends guarded" in (tmp_path / "team.dsh").read_text()


def test_init_from_claude_code_keeps_the_projects_denies_and_asks_on_top_of_guarded(cli, tmp_path):
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(
        json.dumps(
            {
                "permissions": {
                    "deny": ["Bash(curl:*)", "Read(./secrets/**)"],
                    "ask": ["Bash(terraform apply:*)"],
                    "allow": ["Bash(npm run test:*)"],
                    "defaultMode": "bypassPermissions",
                }
            }
        )
    )
    (tmp_path / ".claude" / "settings.local.json").write_text(json.dumps({"permissions": {"deny": ["Bash(wget:*)"]}}))
    result = cli("init", str(tmp_path), "--from-claude-code", "--claude-code", "--json")
    assert result.code == 0, result.err
    assert result.json()["written"] == [
        ".dshc",
        "team.dsh",
        "claude-code.dsh",
        "team.test.toml",
        ".claude/settings.json",
    ]
    assert "include claude-code" in (tmp_path / "team.dsh").read_text()
    tested = cli("test", str(tmp_path / "team.test.toml"))
    assert tested.code == 0 and "2 passed, 0 failed" in tested.out, tested.out
    flags = ("--load", str(tmp_path / "team.dsh"), "--load", str(tmp_path / "claude-code.dsh"), "--policy", "team")

    def decided(command):
        return cli("decide", "bash", "--args", json.dumps({"command": command, "description": "d"}), *flags).out

    assert decided("curl https://example.org").startswith("deny")  # the project's deny
    assert decided("wget https://example.org").startswith("deny")  # the local settings' too
    assert decided("terraform apply").startswith("ask")
    assert decided("cat ~/.aws/credentials").startswith("deny")  # guarded's guard still stands
    # the imported sandbox and mode lines are the import's own: team keeps guarded's sandbox, not bypass
    assert decided("rm -rf ~").startswith("deny")


def test_init_from_claude_code_without_settings_says_so(cli, tmp_path):
    result = cli("init", str(tmp_path), "--from-claude-code")
    assert result.code == 2 and "no .claude/settings.json" in result.err and "Traceback" not in result.err
    assert not (tmp_path / ".dshc").exists()


def test_init_on_bad_input_reports_dsh405_with_a_help_not_an_internal_error(cli, tmp_path):
    missing = cli("init", str(tmp_path / "missing"), "--json")
    assert missing.code == 2 and missing.json()["diagnostics"][0]["code"] == "DSH405"
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text("{not json")
    unreadable = cli("init", str(tmp_path), "--from-claude-code", "--json")
    assert unreadable.code == 2 and unreadable.json()["diagnostics"][0]["help"]
    (tmp_path / ".claude" / "settings.json").write_text('{"hooks": {"PreToolUse": {}}}')
    not_a_list = cli("init", str(tmp_path), "--claude-code", "--json")
    assert not_a_list.code == 2 and "is not a list" in not_a_list.json()["diagnostics"][0]["message"]
