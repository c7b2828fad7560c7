"""DSH405: each way a command's own arguments can be unusable says so, with help, exit 2."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(
    "argv, message, help_mentions",
    [
        (["decide"], "required: TOOL", "dshc decide --help"),  # argparse usage
        (["bogus"], "invalid choice", "dshc --help"),
        (["decide", "bash", "--args", "{not json"], "--args is not valid JSON", "--args '{"),
        (["decide", "bash", "--args", "[1]"], "must be a JSON object", "--args '{"),
        (["explain"], "needs a TOOL", "--all"),
        (["fmt"], "needs PATH arguments", "--check"),
        (["diff", "platfrom=linux", "platform=win32"], "neither a path nor a context", "context keys"),
        (["diff", "@shipped", "platform=win32"], "must both be sources or both contexts", "policy=read-only"),
        (["diff", "plan=maybe", "platform=linux"], "invalid context", "true or false"),
    ],
)
def test_each_invalid_request_says_what_would_work(cli, argv, message, help_mentions):
    text = cli(*argv)
    assert text.code == 2 and "Traceback" not in text.err
    assert "error[DSH405]: " in text.err and message in text.err and "help: " in text.err and help_mentions in text.err
    if argv[0] != "fmt":  # fmt has no --json
        (diag,) = cli(*argv, "--json").json()["diagnostics"]
        assert diag["code"] == "DSH405" and message in diag["message"] and help_mentions in diag["help"]
