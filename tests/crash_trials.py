"""Kill trials for `dshc run`: a mixed batch killed with SIGKILL at random moments and restarted,
then the final log, replay, side effects and processes checked. Used by the suite (a few
trials) and by tests/bench/kill_trials.py (100+).

`dshc run` is started by fork from a process that already loaded the program, so a trial
costs the run itself rather than interpreter start-up; the kill is a real SIGKILL of it.
"""

from __future__ import annotations

import io
import json
import os
import random
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import psutil

from dshc.cli.main import main
from dshc.compiler.program import Program
from dshc.runtime.events import read_log
from dshc.runtime.orphans import LOG_VAR

EFFECTS = "effects.txt"


def mixed_batch(big_bytes: int) -> list[dict]:
    """Two large writes, slow shell calls with side effects (before and after their sleep), a parallel batch."""

    def bash(call_id: str, command: str) -> dict:
        return {"id": call_id, "name": "bash", "arguments": {"command": command, "description": call_id}}

    return [
        {"id": "big-1", "name": "write", "arguments": {"file_path": "big1.txt", "content": "A" * big_bytes}},
        bash("fx-1", f"echo fx-1 >> {EFFECTS}; sleep 0.3"),
        {
            "batch": [
                {"id": "grep-1", "name": "grep", "arguments": {"pattern": "fx-[0-9]", "path": EFFECTS}},
                {"id": "glob-1", "name": "glob", "arguments": {"pattern": "*.txt"}},
            ]
        },
        bash("fx-2", f"sleep 0.4; echo fx-2 >> {EFFECTS}"),
        {"id": "big-2", "name": "write", "arguments": {"file_path": "big2.txt", "content": "B" * big_bytes}},
        bash("fx-3", f"echo fx-3 >> {EFFECTS}; sleep 0.2 & wait"),
        bash("fx-4", f"echo fx-4 >> {EFFECTS}"),
    ]


def call_ids(batch: list[dict]) -> list[str]:
    return [c["id"] for item in batch for c in (item["batch"] if "batch" in item else [item])]


def warm() -> None:
    """Load what every run needs once, so forked runs start warm."""
    Program.load()


def spawn_run(argv: list[str], err_path: Path | None = None) -> int:
    pid = os.fork()
    if pid == 0:  # the child: one `dshc run`, then out without running the parent's exit handlers
        code = 99
        try:
            sink = open(os.devnull, "w")
            err = open(err_path, "w") if err_path else sink
            os.dup2(err.fileno(), 2)  # a traceback from anywhere in the child lands there too
            code = main(argv, sink, err)
            err.flush()
        finally:
            os._exit(code)
    return pid


def wait_exit(pid: int, limit_s: float) -> int | None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return None


def marked_processes(log: Path) -> list[psutil.Process]:
    """Processes started by runs over `log` (they carry its path in their environment)."""
    found = []
    for proc in psutil.process_iter():
        try:
            if proc.environ().get(LOG_VAR) == str(log):
                found.append(proc)
        except (psutil.Error, OSError):
            continue
    return found


def end_processes(procs: list[psutil.Process]) -> None:
    for proc in procs:
        try:
            proc.kill()
        except psutil.Error:
            pass


@dataclass
class TrialResult:
    kills: int = 0
    exit_code: int | None = None
    torn_records: int = 0
    replay_exit: int | None = None
    duplicated_effects: int = 0
    calls_without_one_outcome: list = field(default_factory=list)
    interrupted: int = 0
    survivors_after_kill: int = 0  # alive 50 ms after a kill, before the restart
    survivors_after_grace: int = 0  # still alive 1 s after it: the sandbox supervisor polls its parent every 0.1 s
    survivors_final: int = 0
    torn_repaired: bool = False
    final_stderr: str = ""

    @property
    def ok(self) -> bool:
        return (
            self.exit_code in (0, 1)
            and self.torn_records == 0
            and self.replay_exit == 0
            and self.duplicated_effects == 0
            and not self.calls_without_one_outcome
            and self.survivors_final == 0
        )


def run_trial(folder: Path, rng: random.Random, big_bytes: int, kills: int, max_delay_s: float) -> TrialResult:
    workspace = folder / "ws"
    workspace.mkdir(parents=True)
    calls, log = folder / "calls.jsonl", folder / "events.jsonl"
    batch = mixed_batch(big_bytes)
    calls.write_text("".join(json.dumps(item) + "\n" for item in batch))
    argv = [
        "run",
        str(calls),
        "--workspace",
        str(workspace),
        "--log",
        str(log),
        "--approve",
        "once",
        "--json",
        "--timeout",
        "30",
    ]
    result = TrialResult()
    for _ in range(kills):
        pid = spawn_run(argv)
        time.sleep(rng.uniform(0, max_delay_s))
        if os.waitpid(pid, os.WNOHANG)[0]:
            break  # it finished before the kill: nothing left to interrupt
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        result.kills += 1
        time.sleep(0.05)
        result.survivors_after_kill += len(marked_processes(log))
        grace_ends = time.monotonic() + 0.95
        while marked_processes(log) and time.monotonic() < grace_ends:
            time.sleep(0.05)  # the tree is gone once the supervisor noticed: no need to sit out the second
        result.survivors_after_grace += len(marked_processes(log))
    result.exit_code = wait_exit(spawn_run(argv, folder / "final.err"), 120)
    result.final_stderr = (folder / "final.err").read_text()[-2000:]
    time.sleep(0.05)
    left = marked_processes(log)
    result.survivors_final = len(left)
    end_processes(left)  # ours; counted above
    _check(result, log, workspace, call_ids(batch))
    return result


def _check(result: TrialResult, log: Path, workspace: Path, ids: list[str]) -> None:
    if not log.exists():
        result.calls_without_one_outcome = list(ids)
        return
    read = read_log(str(log), resolve_blobs=False)
    result.torn_records = len(read.problems) + int(read.torn_tail)
    result.torn_repaired = Path(str(log) + ".torn").stat().st_size > 0  # the marker is made empty with the log
    out, err = io.StringIO(), io.StringIO()
    result.replay_exit = main(["replay", str(log), "--policy", "workspace-write"], out, err)
    effects = Counter((workspace / EFFECTS).read_text().split()) if (workspace / EFFECTS).exists() else Counter()
    result.duplicated_effects = sum(count - 1 for count in effects.values() if count > 1)
    outcomes = Counter(
        r["callId"]
        for r in read.records
        if r.get("type") in ("tool/result", "tool/interrupted") and not r.get("parent")
    )
    result.calls_without_one_outcome = [call_id for call_id in ids if outcomes[call_id] != 1]
    result.interrupted = sum(1 for r in read.records if r.get("type") == "tool/interrupted")
