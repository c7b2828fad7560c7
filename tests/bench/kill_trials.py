"""Kill trials at scale: N `dshc run`s over a mixed batch (20 MB records, slow shell calls), each
killed with SIGKILL 1–3 times at random delays and restarted, then checked. Prints the figures.

    python tests/bench/kill_trials.py [--trials 100] [--big-mb 20] [--seed 7]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
import crash_trials  # noqa: E402 - the shared trial code lives beside the tests


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--big-mb", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--max-delay", type=float, default=3.0, help="latest kill, seconds after start")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    crash_trials.warm()
    totals = {
        "trials": 0,
        "kills": 0,
        "torn_records": 0,
        "replay_nonzero": 0,
        "duplicated_effects": 0,
        "calls_without_one_outcome": 0,
        "interrupted_markers": 0,
        "survivors_after_kill": 0,
        "survivors_after_grace": 0,
        "survivors_final": 0,
        "torn_tails_repaired": 0,
        "failed_trials": 0,
    }
    started = time.monotonic()
    for number in range(args.trials):
        folder = Path(tempfile.mkdtemp(prefix="dshc-kill-"))
        try:
            result = crash_trials.run_trial(folder, rng, args.big_mb * 1024 * 1024, rng.randint(1, 3), args.max_delay)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        totals["trials"] += 1
        totals["kills"] += result.kills
        totals["torn_records"] += result.torn_records
        totals["replay_nonzero"] += int(result.replay_exit != 0)
        totals["duplicated_effects"] += result.duplicated_effects
        totals["calls_without_one_outcome"] += len(result.calls_without_one_outcome)
        totals["interrupted_markers"] += result.interrupted
        totals["survivors_after_kill"] += result.survivors_after_kill
        totals["survivors_after_grace"] += result.survivors_after_grace
        totals["survivors_final"] += result.survivors_final
        totals["torn_tails_repaired"] += int(result.torn_repaired)
        totals["failed_trials"] += int(not result.ok)
        if not result.ok:
            print(f"trial {number} failed: {result}", file=sys.stderr)
    totals["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(totals, indent=2))
    return 1 if totals["failed_trials"] else 0


if __name__ == "__main__":
    sys.exit(main())
