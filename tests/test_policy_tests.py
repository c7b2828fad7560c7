"""`dshc test`: the shipped test files pass with full coverage; failures, bad files and coverage
gaps are reported at their line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

DSH = Path(__file__).parent / "dsh"

REVIEWER = """\
preset reviewer "Code reviewer" {
  mount tool-fs
  mount tool-fs-search { sampleOverCapGlobResults = false }
  mount tool-web { fetch = false }
}
scope review-child "A child that only reads" {
  parent root
  only read, grep, glob
}
policy review-only "Reviewers never write" extends workspace-write {
  deny write, edit
  guard no-secrets: deny read when args.file_path matches "*.env"
}
"""


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.write_text(textwrap.dedent(text))
    return path


def write_call_test(folder: Path, expect: str, more: str = "") -> Path:
    """r.test.toml: one reviewer case whose first call (line 8) writes a file and expects `expect`."""
    return write(
        folder,
        "r.test.toml",
        textwrap.dedent(f"""\
        load = ["reviewer.dsh"]

        [[test]]
        name = "reviewers cannot write"
        preset = "reviewer"
        policy = "review-only"

        [[test.call]]
        tool = "write"
        args = {{ file_path = "a.md", content = "x" }}
        expect = "{expect}"
        """)
        + textwrap.dedent(more),
    )


@pytest.fixture
def project(tmp_path) -> Path:
    write(tmp_path, "reviewer.dsh", REVIEWER)
    return tmp_path


def test_the_shipped_declarations_pass_their_tests_with_every_item_exercised(cli):
    result = cli("test", str(DSH), "--coverage", "--cover-shipped", "--json")
    assert result.code == 0, result.out + result.err
    data = result.json()
    assert data["failed"] == 0 and data["passed"] >= 20
    report = data["coverage"]
    assert report["uncovered"] == [] and report["items"] == report["exercised"] >= 50
    assert {"policies/permissions.dsh", "policies/plan.dsh", "presets/standard.dsh", "presets/scopes.dsh"} <= set(
        report["files"]
    )


def test_a_wrong_expectation_fails_with_the_line_and_the_deciding_rule(cli, project):
    write_call_test(
        project,
        "allow",
        """
        [[test.call]]
        tool = "read"
        args = { file_path = "a.md" }
        expect = "allow"
        """,
    )
    result = cli("test", str(project / "r.test.toml"))
    assert result.code == 1
    assert f"FAIL {project / 'r.test.toml'}:3  reviewers cannot write" in result.out
    assert f"{project / 'r.test.toml'}:8:1: call write" in result.out
    assert "expected allow, got deny" in result.out
    assert f"review-only/deny@11 at {project / 'reviewer.dsh'}:11:3" in result.out
    assert "1 passed" not in result.out and "0 passed, 1 failed" in result.out


def test_views_gates_and_calls_all_checked(cli, project):
    write(
        project,
        "r.test.toml",
        """\
        load = ["reviewer.dsh"]
        [context]
        preset = "reviewer"
        policy = "review-only"

        [[test]]
        name = "the reviewer's view"
        view = ["edit", "glob", "grep", "read", "read_image", "web_search", "write"]
        excludes = ["bash"]
        [test.explain]
        web_fetch = "registered"
        write = "allowed"

        [[test]]
        name = "a review child sees three tools"
        scope = "review-child"
        view = ["glob", "grep", "read"]
        [test.explain]
        write = "visible"

        [[test]]
        name = "secrets are guarded"
        [[test.call]]
        tool = "read"
        args = { file_path = "prod.env" }
        expect = "deny"
        by = "review-only/guard:no-secrets"
        gate = "allowed"
        """,
    )
    result = cli("test", str(project), "--json")
    assert result.code == 0, result.out + result.err
    assert [t["passed"] for t in result.json()["tests"]] == [True, True, True]
    # each kind of expectation can fail
    broken = (
        (project / "r.test.toml")
        .read_text()
        .replace('"web_search", "write"]', '"write"]')
        .replace('write = "visible"', 'write = "registered"')
        .replace('expect = "deny"', 'expect = "ask"')
    )
    (project / "r.test.toml").write_text(broken)
    result = cli("test", str(project), "--json")
    assert result.code == 1
    failures = [f for t in result.json()["tests"] for f in t["failures"]]
    messages = " | ".join(f["message"] for f in failures)
    assert "view: not expected `web_search`" in messages
    assert (
        "`write`: expected registered, got visible (gate `visible` fails: scope `review-child` allows only" in messages
    )
    assert "expected ask, got deny" in messages
    assert [f["source"].rsplit(":", 2)[1] for f in failures] == ["8", "19", "23"]


def test_coverage_names_what_no_test_exercised_with_its_span(cli, project):
    write_call_test(project, "deny")
    result = cli("test", str(project), "--coverage", "--json")
    assert result.code == 0
    report = result.json()["coverage"]
    assert report["files"] == [str(project / "reviewer.dsh")]
    uncovered = {item["id"]: item for item in report["uncovered"]}
    # the one call exercised the deny rule and the write tool's row; nothing else
    assert "review-only/deny@11" not in uncovered and "reviewer/mount:tool-fs" not in uncovered
    assert uncovered["review-only/guard:no-secrets"]["source"] == f"{project / 'reviewer.dsh'}:12:3"
    assert uncovered["review-only/guard:no-secrets"]["text"].startswith("guard no-secrets: deny read")
    assert {"reviewer/mount:tool-web", "review-child/only:read", "review-child/only:grep"} <= set(uncovered)
    text = cli("test", str(project), "--coverage").out
    assert f"not exercised: {project / 'reviewer.dsh'}:12:3  guard review-only/guard:no-secrets:" in text


@pytest.mark.parametrize(
    "body, where, message",
    [
        ('[[test]]\nname = "x"\npreset = \n', "3:10", "not valid TOML"),
        ('[[test]]\nname = "x"\nprest = "standard"\nincludes = ["read"]\n', "3:1", "unknown key `prest`"),
        ('[[test]]\nname = "x"\npreset = "standrd"\nincludes = ["read"]\n', "3:1", "unknown preset `standrd`"),
        ('[[test]]\nname = "x"\npreset = "standard"\nincludes = ["raed"]\n', "4:1", "unknown tool `raed`"),
        ('[[test]]\nname = "x"\n\n[[test.call]]\ntool = "read"\nexpect = "yes"\n', "6:1", "`expect` is one of"),
        ('[[test]]\nname = "x"\npreset = "standard"\n', "1:1", "expects nothing"),
        ('[context]\nplan = "yes"\n[[test]]\nname = "x"\nincludes = ["read"]\n', "2:1", "`plan` takes a boolean"),
    ],
)
def test_a_bad_test_file_exits_2_at_its_line(cli, tmp_path, body, where, message):
    path = write(tmp_path, "bad.test.toml", body)
    result = cli("test", str(path))
    assert result.code == 2, result.out + result.err
    assert f"{path}:{where}: error[" in result.err and message in result.err
    assert "Traceback" not in result.err
    data = cli("test", str(path), "--json").json()["diagnostics"][0]
    assert f"{data['line']}:{data['col']}" == where


def test_no_test_files_is_a_usage_error(cli, tmp_path):
    result = cli("test", str(tmp_path))
    assert result.code == 2 and "no *.test.toml test files" in result.err
