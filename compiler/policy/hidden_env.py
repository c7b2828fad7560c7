"""The environment variables a policy forbids a shell line to read, for the sandbox to remove from the
environment of every process it starts (`python3 x.py` reads `os.environ` where no rule sees it); in: an
effective policy (and an environment), out: name patterns (and the names present that they match).

Only what the rule alone decides becomes a pattern, as for hidden paths (`protected.py`): a `deny` or `ask` (a
process cannot ask) or a guard on a shell tool whose whole condition is `args.command.env_read matches "P"`
or `args.command.env_read in ["NAME", …]`, or an `or` of such tests (each decides alone).
"""

from __future__ import annotations

TYPE_CHECKING = False  # collections.abc loads collections: a hook deciding a file tool imports neither
if TYPE_CHECKING:
    from collections.abc import Iterable

from .. import ast
from ..globs import glob_match

SHELLS = ("bash", "pwsh")  # the tools whose `args.command` is a shell line
PROCESS_RISK = "any-process"


def hidden_variables(policy) -> tuple[str, ...]:
    """The name patterns of the variables `policy` keeps from processes (a name of `in [...]` is its own
    pattern), in the order written."""
    found: dict[str, None] = {}
    for _, patterns in _hiding(policy):
        found.update(dict.fromkeys(patterns))
    return tuple(found)


def hiding_rules(policy) -> tuple:
    """The denies, asks and guards `hidden_variables` takes its patterns from."""
    return tuple(rule for rule, _ in _hiding(policy))


def env_tests(expr) -> list:
    """The leaf tests of a condition on `args.command.env_read`."""
    return [test for test in ast.atoms(expr) if _env_read(test)]


def present_names(patterns: Iterable[str], environ) -> tuple[str, ...]:
    """The names in `environ` (a mapping) a pattern matches, sorted."""
    patterns = tuple(patterns)
    return tuple(sorted(name for name in environ if any(glob_match(pattern, name) for pattern in patterns)))


def _hiding(policy):
    if policy is None:
        return
    for rule in [rule for rule in policy.rules if rule.effect in ("deny", "ask")] + list(policy.guards):
        if not any(_shell_target(target) for target in rule.targets):
            continue
        tests = ast.disjuncts(rule.condition)
        if tests and all(_env_read(test) and isinstance(test, (ast.Matches, ast.Member)) for test in tests):
            yield (
                rule,
                [
                    pattern
                    for test in tests
                    for pattern in ((test.pattern,) if isinstance(test, ast.Matches) else map(str, test.values))
                ],
            )


def _shell_target(target) -> bool:
    if target.kind == "tool":
        return any(glob_match(target.name.text, shell) for shell in SHELLS)
    return target.kind == "risk" and target.name.text == PROCESS_RISK


def _env_read(test) -> bool:
    path: tuple = getattr(getattr(test, "fact", None), "path", ())
    return len(path) == 3 and path[0] == "args" and path[1] == "command" and path[2] == "env_read"
