"""Random policies, requests and calls decided from many threads at once, against one thread's answers.

In: a seed. Out: the calls whose threaded answer differs from the single-threaded one (or raised). Used
by tests/test_threads.py in the test process and, run as a script, in fresh processes whose records and
caches start cold: `python tests/threaded_decisions.py SEED [SEED…]` prints one JSON line per seed.
"""

from __future__ import annotations

import json
import random
import sys
import threading

from dshc.compiler import compose, view
from dshc.compiler.lru import LRU
from dshc.compiler.policy import index
from dshc.compiler.program import Program
from dshc.compiler.request import Request

THREADS = 8
FACTS = [
    'platform == "linux"',
    'platform == "win32"',
    "plan_mode",
    "not plan_mode",
    "flag beta",
    "flag gamma",
    'scope == "child"',
    'mode == "code"',
    "has sandbox",
    'tool in ["read", "grep"]',
    'host == "web"',
]
GLOBS = {
    "bash": ("command", ["git *", "rm *", "ls*", "*push*", "cat .env", "echo *"]),
    "read": ("file_path", ["src/*", "*.env", "*.key", "/etc/*", "README*"]),
    "write": ("file_path", ["src/*", "*.lock", "tmp/*", "*.py"]),
    "edit": ("file_path", ["src/*", "*.md", "/etc/*"]),
    "grep": ("pattern", ["secret*", "*TODO*"]),
}
TARGETS = [*GLOBS, "glob", "web_search", "todo_write", "package(tool-fs)", "risk(file-mutation)", "*"]
COMMANDS = [
    "git status",
    "git push origin main",
    "rm -rf /tmp/x",
    "ls -la && echo done",
    "cat .env",
    "echo $(whoami)",
    "cd src && git log | head",
    "cat src/a.py > out.txt",
    "timeout 5 rm -rf /",
    "bash -c 'git push'",
    "echo 'unterminated",
    "env A=1 ls src",
    "find . -name '*.py' -delete",
]
PATHS = ["src/a.py", "README.md", ".env", "/etc/hosts", "tmp/x.lock", "deep/id.key", "../outside.py"]


def policy_text(rng: random.Random, policies: int = 3) -> str:
    """`policies` random policies p0…: fact conditions, argument globs, guards, each with a default."""
    blocks = []
    for number in range(policies):
        lines = [f"policy p{number} {{", f"  default {rng.choice(['allow', 'ask', 'deny'])}"]
        for _ in range(rng.randint(3, 12)):
            effect, target = rng.choice(["allow", "ask", "deny"]), rng.choice(TARGETS)
            parts = [rng.choice(FACTS)] if rng.random() < 0.6 else []
            if target in GLOBS and rng.random() < 0.7:
                field, globs = GLOBS[target]
                parts.append(f'args.{field} matches "{rng.choice(globs)}"')
            if target in ("read", "write", "edit") and rng.random() < 0.2:
                parts.append(f"args.file_path {rng.choice(['inside', 'outside'])} workspace")
            lines.append(f"  {effect} {target}" + (f" when {' and '.join(parts)}" if parts else ""))
        if rng.random() < 0.5:
            lines.append(f'  guard g{number}: deny bash when args.command matches "{rng.choice(GLOBS["bash"][1])}"')
        blocks.append("\n".join(lines) + "\n}\n")
    return "\n".join(blocks)


def requests(rng: random.Random, policies: int, count: int) -> list[Request]:
    return [
        Request(
            preset=rng.choice(["standard", None]),
            host="web",
            platform=rng.choice(["linux", "darwin"]),
            scope=rng.choice(["root", "child"]),
            plan=rng.random() < 0.3,
            flags=frozenset(rng.sample(["beta", "gamma", "delta"], rng.randint(0, 2))),
            policy=f"p{rng.randrange(policies)}",
        )
        for _ in range(count)
    ]


def call(rng: random.Random) -> tuple[str, dict]:
    tool = rng.choice([*GLOBS, "glob", "web_search", "todo_write", "invented_tool"])
    if tool == "bash":
        return tool, {"command": rng.choice(COMMANDS), "description": "d"}
    if tool in ("read", "write", "edit"):
        return tool, {"file_path": rng.choice(PATHS), "content": "x", "old_string": "a", "new_string": "b"}
    if tool == "grep":
        return tool, {"pattern": rng.choice(["secretKey", "a TODO here", "x"]), "path": rng.choice(PATHS)}
    return tool, {"pattern": "**/*.py", "query": "q"}


def jobs(seed: int, count: int = 240) -> tuple[str, list]:
    """(the program's text, [(request, tool, args)…]): few requests, so threads share deciders and indexes."""
    rng = random.Random(seed)
    text = policy_text(rng)
    asked = requests(rng, 3, 12)
    return text, [(rng.choice(asked), *call(rng)) for _ in range(count)]


def shrink_caches(assign=setattr) -> None:
    """Every cache on the decide path holds one entry, so threads evict what others are reading.
    `assign`: how a module attribute is set (a test passes monkeypatch.setattr, which undoes it)."""
    for module, name in (
        (compose, "_SHAPES"),
        (compose, "_LAYERS"),
        (compose, "_ROWS"),
        (compose, "_FLAGS_NAMED"),
        (view, "_PARAMETER_TEXT"),
    ):
        assign(module, name, LRU(1))
    for name in ("SEGMENT_CACHE", "NAME_CACHE", "GROUP_CACHE", "DECIDED_CACHE"):
        assign(index, name, 1)


def racing(threads: int, work) -> None:
    """`work(number)` on `threads` threads started together, switching between nearly any two bytecodes."""
    start = threading.Barrier(threads)
    previous = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        running = [threading.Thread(target=lambda n=n: (start.wait(), work(n))) for n in range(threads)]
        for thread in running:
            thread.start()
        for thread in running:
            thread.join()
    finally:
        sys.setswitchinterval(previous)


def answer(program: Program, request: Request, tool: str, args: dict, workspace: str) -> tuple:
    """What a decision says, or the exception it raised: comparable across threads."""
    try:
        decision = program.decide(request, tool, args, workspace)
        return decision.effect, decision.reason, decision.gate, tuple(rule for rule, _ in decision.deciding)
    except Exception as exc:  # noqa: BLE001 - a raise is an answer to compare, and the race's symptom
        return "raised", type(exc).__name__, str(exc)[:200]


def race(seed: int, workspace: str = "/ws", threads: int = THREADS) -> list:
    """[(job number, expected answer, threaded answer)] for every threaded answer that differs."""
    text, todo = jobs(seed)
    single = Program.load(texts={"p.dsh": text}, shipped=True)
    expected = [answer(single, request, tool, args, workspace) for request, tool, args in todo]
    shared = Program(single.resolved, single.sources, cache_size=1)  # the parse is shared, no cache entry
    found, lock = [], threading.Lock()

    def worker(number: int) -> None:
        order = list(range(len(todo)))
        random.Random(seed * 100 + number).shuffle(order)
        mine = [(i, answer(shared, *todo[i], workspace)) for i in order]
        with lock:
            found.extend((i, expected[i], got) for i, got in mine if got != expected[i])

    racing(threads, worker)
    return sorted(found, key=lambda item: item[0])


if __name__ == "__main__":
    shrink_caches()
    for seed in map(int, sys.argv[1:]):
        print(json.dumps({"seed": seed, "differ": race(seed)[:5]}), flush=True)
