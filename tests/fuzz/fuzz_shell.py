"""Long fuzz of the shell analysis: random and shell-shaped text → `analyse` never raises, never hangs,
never kills the process (tree-sitter is native code: a crash is a process death, not an exception).

Run from a clone:  python tests/fuzz/fuzz_shell.py [--inputs 100000] [--seed 1]
Batches run in child processes; a batch whose child dies is halved until the inputs are named.
Prints the counts and exits 1 if any input crashed, raised or took longer than a second.
The suite runs a bounded version (tests/test_shell.py, hypothesis).
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys

PIECES = list("ab -c|&;()<>{}$`'\"\\\n#*?[]=~!%^:,.") + [
    "sh",
    "bash -c ",
    "env ",
    "timeout 5 ",
    "xargs ",
    "$(",
    "${",
    "<<",
    "<<-",
    "<<<",
    "sudo ",
    "find -exec ",
    "[[ ",
    "]]",
    "if ",
    "then ",
    "fi",
    "do ",
    "done",
    "for ",
    "in ",
    "eval ",
    "case ",
    "esac",
    "coproc ",
    "((",
    "))",
    "$((",
    "${x@P}",
    "${!v}",
    "2>&1",
    ">&-",
    "3<",
    "function ",
    "alias ",
    "\u00e9",
    "\U0001f600",
    "\U000e751e",
    "\ue000",
    "\x1f",
    "\r",
    "\t",
    "git -c ",
    "sed -i ",
    "EOF\n",
    "exec ",
    "watch ",
    "flock x -c ",
]

CHILD = r"""
import json, sys, time
from dshc.compiler.shell import analyse
slow = []
for line in sys.stdin:
    text = json.loads(line)
    start = time.perf_counter()
    analyse(text)
    if time.perf_counter() - start > 1.0:
        slow.append(text[:200])
print(json.dumps({"slow": slow}))
"""


def inputs(count: int, seed: int):
    rng = random.Random(seed)
    for index in range(count):
        if index % 3 == 0:
            yield "".join(
                chr(rng.choice((rng.randint(0, 127), rng.randint(0, 0x10FFFF)))) for _ in range(rng.randint(0, 40))
            ).replace("\ud800", "")
        else:
            yield "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 30)))


def run(batch: list[str]):
    """(returncode, slow inputs) of one child over the batch."""
    text = "\n".join(json.dumps(t) for t in batch) + "\n"
    done = subprocess.run([sys.executable, "-c", CHILD], input=text, capture_output=True, text=True, timeout=600)
    slow = json.loads(done.stdout.strip().splitlines()[-1])["slow"] if done.returncode == 0 and done.stdout else []
    return done.returncode, slow


def crashers(batch: list[str]) -> list[str]:
    """The inputs of a batch that kill a child, found by halving."""
    if run(batch)[0] == 0:
        return []
    if len(batch) == 1:
        return batch
    middle = len(batch) // 2
    return crashers(batch[:middle]) + crashers(batch[middle:])


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--inputs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--batch", type=int, default=5_000)
    opts = parser.parse_args()
    all_inputs = [t.encode("utf-8", "surrogatepass").decode("utf-8", "replace") for t in inputs(opts.inputs, opts.seed)]
    crashed, slow = [], []
    for at in range(0, len(all_inputs), opts.batch):
        batch = all_inputs[at : at + opts.batch]
        code, found = run(batch)
        slow += found
        if code != 0:
            crashed += crashers(batch)
    print(f"inputs: {len(all_inputs)}  crashed: {len(crashed)}  slower than 1 s: {len(slow)}")
    for text in crashed[:10] + slow[:10]:
        print("  ", repr(text[:120]))
    return 1 if crashed or slow else 0


if __name__ == "__main__":
    sys.exit(main())
