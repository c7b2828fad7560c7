"""The two ends of the exit-code contract no other test reaches: a request that composes nothing (DSH404,
exit 2 with the diagnostic) and a bug (exit 3: one line saying so, the traceback only with --debug)."""

from __future__ import annotations

import json

import pytest

from dshc.cli.commands import codes

BARE_HOST = 'host bare "No roster and no rows" {\n  platforms linux\n  provides fs\n}\n'


def test_a_host_without_a_default_preset_or_rows_of_its_own_composes_nothing(cli, tmp_path):
    (tmp_path / "bare.dsh").write_text(BARE_HOST)
    result = cli("compile", "--host", "bare", "--load", str(tmp_path / "bare.dsh"), "--json")
    assert result.code == 2
    (found,) = json.loads(result.out)["diagnostics"]
    assert found["code"] == "DSH404" and "`bare`" in found["message"] and found["help"] == "name a preset"
    assert found["path"].endswith("bare.dsh") and found["line"] == 1


def _broken(args, out, err):
    raise RuntimeError("a planted bug")


@pytest.mark.parametrize("argv", [["codes"], ["codes", "--json"]])
def test_a_bug_exits_3_and_says_so_without_a_traceback(cli, monkeypatch, argv):
    monkeypatch.setattr(codes, "run", _broken)
    result = cli(*argv)
    assert result.code == 3 and result.out == ""
    assert result.err == (
        "dshc: internal error: RuntimeError: a planted bug\n"
        "this is a bug in dshc; run again with --debug for a traceback\n"
    )


def test_debug_shows_the_bugs_traceback(cli, monkeypatch):
    monkeypatch.setattr(codes, "run", _broken)
    result = cli("--debug", "codes")
    assert result.code == 3
    assert result.err.startswith(
        "dshc: internal error: RuntimeError: a planted bug\nTraceback (most recent call last):"
    )
    assert "in _broken" in result.err and "--debug for a traceback" not in result.err


def test_a_bad_input_is_never_reported_as_a_bug(cli):
    """The control: an unknown preset is the input's fault (exit 2), even with --debug, and has no traceback."""
    result = cli("--debug", "compile", "no-such-preset")
    assert result.code == 2 and "DSH204" in result.err and "Traceback" not in result.err
