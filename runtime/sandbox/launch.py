"""Child-side entry, run as `python -I -S launch.py SPEC -- ARGV…` (stdlib only, no package
import): confine this process as SPEC says, then supervise ARGV. In: the JSON spec; out: the
command's exit status, or status 125 and a reason on the report fd when confinement failed."""
from __future__ import annotations

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import landlock  # noqa: E402 - a sibling file, found through the path set just above
import netns  # noqa: E402
import supervise  # noqa: E402

CONFINE_FAILED = 125


def confine(spec: dict) -> None:
    if not spec.get("network", True):
        netns.isolate_network()
    if spec.get("landlock"):
        landlock.restrict_writes(list(spec.get("write", ())), deny_tcp=not spec.get("network", True))


def probe() -> int:
    """Exit 0 when a user + network namespace can be entered here."""
    try:
        netns.isolate_network()
    except OSError:
        return 1
    return 0


def main(argv: list[str]) -> int:
    if argv[1:] == ["--probe-netns"]:
        return probe()
    spec = json.loads(argv[1])
    command = argv[3:] if argv[2:3] == ["--"] else []
    report = spec.get("report_fd")
    if report is not None:
        os.set_inheritable(report, False)
    try:
        if not command:
            raise ValueError("no command to run")
        confine(spec)
    except Exception as exc:   # noqa: BLE001 - whatever stops confinement, the command must not run
        if report is not None:
            os.write(report, f"cannot confine the command: {exc}".encode())
        return CONFINE_FAILED
    return supervise.run(command, report)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
