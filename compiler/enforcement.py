"""The enforcement map: for each deny, ask and guard of a policy that concerns files, commands or the network
(and its writable roots and network line), which layer holds it for a process the agent starts — the OS
(a hidden or read-only mount, Landlock, the network namespace), dshc's own file tools and the lines that name
the file, or the rules on a command's text alone — with a witness call for each gap. In: an effective policy
and the host's sandbox mechanism (`cli` probes it: this layer reads no host); out: `Row`s.

A rule the OS holds cannot be walked around by another spelling; one on a command's text can
(anthropics/claude-code#45200, #32226: file-tool rules and the Bash sandbox disagreed)."""

from __future__ import annotations

from . import ast
from ._base.frozen import record
from .globs import glob_match
from .policy.core import rule_id
from .policy.hidden_env import env_tests, hiding_rules
from .policy.protected import fixed_folder, literal_path, sandbox_hides

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from .source import Span

OS, WORKSPACE, FILE_TOOLS, RULES = "os", "os-in-workspace", "file-tools", "rules"
# the layers, strongest first (`dshc verify --enforcement --require` accepts these)
LAYERS = (OS, WORKSPACE, FILE_TOOLS, RULES)
# programs whose whole point is the network: a rule on their text is the network namespace's where it is off
NETWORK_PROGRAMS = frozenset(
    {
        "curl",
        "wget",
        "nc",
        "ncat",
        "netcat",
        "ssh",
        "scp",
        "sftp",
        "rsync",
        "ftp",
        "telnet",
        "socat",
        "http",
        "https",
        "xh",
        "aria2c",
    }
)
# mechanism → (can it mount what a rule hides or keeps, can it turn the network off)
MECHANISMS = {
    "landlock+mounts": (True, True),
    "landlock": (False, False),
    "bwrap": (True, True),
    "seatbelt": (True, True),
    "none": (False, False),
}


@record
class Row:
    rule: str  # the rule's id, or `POLICY/writable`, `POLICY/network`
    span: object  # where it is written
    concerns: str  # `read of *.env`, `write of protected/*`, `command text curl *`, …
    layer: str  # one of LAYERS
    how: str  # what holds it
    witness: str = ""  # a call the layer does not stop, when it is weaker than the OS

    def to_json(self) -> dict:
        return {
            "rule": self.rule,
            "source": str(self.span) if self.span else None,
            "concerns": self.concerns,
            "layer": self.layer,
            "how": self.how,
            "witness": self.witness or None,
        }


def enforcement_map(policy, mechanism: str) -> tuple[Row, ...]:
    """The rows of `policy` (an EffectivePolicy) on a host whose sandbox mechanism is `mechanism`."""
    confined = sandbox_hides(policy)
    mounts, netns = MECHANISMS.get(mechanism, (False, False))
    rows: list[Row] = []
    for item in [rule for rule in policy.rules if rule.effect in ("deny", "ask")] + list(policy.guards):
        row = _row(policy, item, confined, mounts)
        if row is not None:
            rows.append(row)
    for root in policy.writable:
        rows.append(
            Row(
                f"{policy.name}/writable",
                root.span,
                f"writes below `{root.text}`",
                OS if confined else RULES,
                "a Landlock write root" if confined else "no confining sandbox",
            )
        )
    network = network_state(policy)
    if confined and network != "on":
        listed = network == "listed"
        # host lists need a proxy into a network namespace, which only Landlock with user namespaces gives
        able = netns and (not listed or mechanism == "landlock+mounts")
        span = getattr(policy.network, "span", None) or (policy.network_allow[0][0].span if listed else None)
        what = (
            "on for the listed hosts only: a proxy outside the namespace is its one way out"
            if listed
            else "off: a network namespace with loopback only"
        )
        hosts = [host.text for level in getattr(policy, "network_allow", ()) for host in level]
        denied = [host.text for host in getattr(policy, "network_deny", ())]
        concerns = (
            "the network"
            + (f": {', '.join(hosts)}" if hosts else "")
            + (f"; never {', '.join(denied)}" if listed and denied else "")
        )
        rows.append(
            Row(
                f"{policy.name}/network",
                span,
                concerns,
                OS if able else RULES,
                what
                if able
                else f"{what.split(':')[0]}, which `{mechanism}` cannot keep here: every command is refused",
            )
        )
    return tuple(rows)


def network_state(policy) -> str:
    """ "off", "on" (every host) or "listed" (`network allow "HOST", …`)."""
    if getattr(policy, "network_allow", ()):
        return "listed"
    return "on" if policy.network is not None and policy.network.text == "allow" else "off"


def _row(policy, item, confined: bool, mounts: bool) -> Row | None:
    tests = ast.disjuncts(item.condition)
    fields = {ast.argument_field(test) for test in ast.atoms(item.condition) if hasattr(test, "fact")}
    ident, span = rule_id(policy, item), item.span
    targets = [target.name.text for target in item.targets if target.kind == "tool"]
    reads = any(glob_match(target, "read") for target in targets)
    writes = any(glob_match(target, "write") for target in targets)
    pure = all(isinstance(test, ast.Matches) and ast.argument_field(test) == "file_path" for test in tests)
    patterns = ", ".join(f"`{test.pattern}`" for test in ast.atoms(item.condition) if isinstance(test, ast.Matches))
    if "file_path" in fields and (reads or writes):
        kind = "read" if reads else "write"
        concerns = f"{kind} of {patterns or 'a file'}"
        example = _example(next((t.pattern for t in ast.atoms(item.condition) if isinstance(t, ast.Matches)), "x"))
        program = f"`python3 x.py`, a script that {'reads' if reads else 'writes'} `{example}`"
        if not confined:
            return Row(
                ident,
                span,
                concerns,
                FILE_TOOLS,
                "dshc's file tools and the lines that name the file; the policy declares no confining sandbox",
                program,
            )
        if not pure:
            return Row(
                ident,
                span,
                concerns,
                FILE_TOOLS,
                "dshc's file tools and the lines that name the file: a condition beyond the path cannot be a mount",
                program,
            )
        if not mounts:
            return Row(ident, span, concerns, OS, "a mount this host cannot make: every command is refused")
        if reads:
            if all(map(literal_path, tests)):
                return Row(ident, span, concerns, OS, "hidden from every process (a mount over each path)")
            return Row(
                ident,
                span,
                concerns,
                WORKSPACE,
                "hidden from every process inside the workspace (found when "
                "a command starts, links followed); elsewhere the lines that name the file",
                f"`python3 x.py`, a script that reads `/elsewhere/{example.rsplit('/', 1)[-1]}`",
            )
        if all(literal_path(test) or fixed_folder(test) for test in tests):
            return Row(
                ident,
                span,
                concerns,
                OS,
                "read-only to every process (a read-only mount over each path; Landlock outside the write roots)",
            )
        return Row(
            ident,
            span,
            concerns,
            FILE_TOOLS,
            "dshc's file tools and the lines that name the file: a glob with no folder names no path to keep read-only",
            program,
        )
    if (named := env_tests(item.condition)) and not _negates(item.condition):
        names = list(_names(named))
        patterns = ", ".join(f"`{name}`" for name in names)
        if confined and item in hiding_rules(policy):
            # a confined process cannot read another's environment either (Landlock's ptrace rule, bubblewrap's
            # own pid namespace, Seatbelt's default deny): only its own, where they are not
            return Row(
                ident,
                span,
                f"variables read {patterns}",
                OS,
                "removed from the environment of every process (those set when it starts)",
            )
        return Row(
            ident,
            span,
            f"variables read {patterns}",
            RULES,
            "the line's text: a script reading its "
            "environment is not stopped by it" + ("" if confined else "; the policy declares no confining sandbox"),
            f'`python3 x.py`, a script that reads `os.environ["{_example(names[0] if names else "X")}"]`',
        )
    if "command" in fields:
        if _negates(item.condition):  # `ask bash when not args.command is readonly`: any other program meets it
            return None
        written = [
            test.pattern
            for test in ast.atoms(item.condition)
            if isinstance(test, (ast.Matches, ast.MatchesExcept)) and ast.argument_field(test) == "command"
        ]
        if not written:
            return None
        patterns = ", ".join(f"`{text}`" for text in written)
        programs = {text.split(" ")[0] for text in written}
        if confined and network_state(policy) == "off" and programs and programs <= NETWORK_PROGRAMS:
            return Row(
                ident,
                span,
                f"command text {patterns}",
                OS,
                "the network is off: what the command is for cannot happen, however it is spelled",
            )
        first = written[0] if written else ""
        witness = (
            f"`python3 x.py`, a script that opens `x{first.strip('*').split('*')[0]}`"
            if _names_files(first)
            else f"`python3 x.py`, a script that does what `{first}` does"
        )
        return Row(
            ident,
            span,
            f"command text {patterns}",
            RULES,
            "the command's text: another program, or a script, doing the same is not stopped by it",
            witness,
        )
    return None


def _negates(expr) -> bool:
    """Whether the condition holds a `not`: a rule that meets what is *not* named is no gap another spelling
    opens (an unknown program is outside every class)."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Not):
            return True
        if isinstance(node, (ast.And, ast.Or)):
            stack.extend(node.items)
    return False


def _names(tests):
    """The patterns (or names) the tests of a condition on variables name."""
    for test in tests:
        yield from (test.pattern,) if isinstance(test, ast.Matches) else map(str, test.values)


def _example(pattern: str) -> str:
    """A file a glob matches, for a witness (`*.env` → `x.env`)."""
    return pattern.replace("**", "x").replace("*", "x").replace("?", "x") or "x"


def gaps(rows, required: set[str]) -> list[Row]:
    """The rows a required rule id (or `*`, every row) names that the OS does not hold everywhere."""
    return [row for row in rows if (row.rule in required or "*" in required) and row.layer != OS]


def text_deny_hints(policy) -> list[tuple[Span | None, str, str]]:
    """(span, what, the sandbox's way) for each deny or guard on a command's text whose resource the sandbox
    could hold: a network program's text while the network is on, a path glob in a command pattern (`*.env*`)
    that a rule on reads or writes would hide or keep read-only for every process (`dshc check`, DSH317)."""
    found = []
    network_on = network_state(policy) == "on"
    for item in [rule for rule in policy.rules if rule.effect == "deny"] + list(policy.guards):
        texts = [
            test
            for test in ast.atoms(item.condition)
            if isinstance(test, ast.Matches) and ast.argument_field(test) == "command"
        ]
        if not texts or len(texts) != len(list(ast.atoms(item.condition))):
            continue
        words = [test.pattern.split(" ")[0] for test in texts]
        if network_on and all(word in NETWORK_PROGRAMS for word in words):
            found.append(
                (
                    item.span,
                    f"`{texts[0].pattern}` is held by the command's text only",
                    "with the network off (no `network allow` line) the sandbox's network namespace holds it "
                    "for every program",
                )
            )
        elif all(_names_files(test.pattern) for test in texts):
            found.append(
                (
                    item.span,
                    f"`{texts[0].pattern}` names files by a command's text",
                    "`deny read when args.file_path matches …` (or `write`) is also held by the sandbox for "
                    "every process",
                )
            )
    return found


def _names_files(pattern: str) -> bool:
    """A command pattern that is about files, not a program: it starts with `*` and holds a path's shape."""
    return pattern.startswith("*") and any(mark in pattern for mark in ("/.", ".env", ".ssh", ".pem", ".key"))
