"""The peer benchmark's two workloads, as data every engine reads: dshc text, Cedar text, the plain evaluator.

`project`: the catalog's tools and packages, request facts and prefix/suffix globs on string arguments.
`independent`: other shapes — path globs over many folders, shell-command patterns over many programs,
URL patterns, the rules spread down a chain of eight `extends`. Both draw their calls from their rules
(a call aims at one rule's effect, then whatever every rule says is the answer), so the allow / ask /
deny mix stays about the same at every N; `mix` reports it.
"""

from __future__ import annotations

import random

from dshc.compiler.catalog import load_catalog

SCOPES = {"depth0": 0, "depth1": 1, "depth2": 2}
PLATFORMS = ("linux", "darwin", "win32")
TIERS = ("allow", "ask", "deny")
EFFECTS = ("deny",) * 2 + ("ask",) * 3 + ("allow",) * 5  # the rules: 20 % deny, 30 % ask, 50 % allow
# scopes without an approval pin, so an ask stays an ask on every engine
SCOPES_TEXT = "".join(
    f'scope {name} "Depth {depth}" {{\n' + (f"  parent depth{depth - 1}\n" if depth else "") + "}\n\n"
    for name, depth in SCOPES.items()
)
# argument words by the effect whose rules name them: a call aimed at an allow carries none of a deny's
PREFIXES = {
    "allow": ("src", "docs", "test", "lib", "cfg", "bin"),
    "ask": ("build", "out", "tmp"),
    "deny": ("etc", "home"),
}
SUFFIXES = {"allow": (".py", ".md", ".json", ".txt"), "ask": (".lock", ".sh", ".log"), "deny": (".env", ".key", ".pem")}
MIDDLES = ("core", "util", "app", "data", "main", "x")
HIT = 0.85  # how often a call satisfies the rule it aims at
# a deny or ask rule with no argument to test holds in one corner of the request facts (1/9, 1/6 of calls)
FACT_CORNER = {"deny": (("depth", 2), ("platform", "win32")), "ask": (("plan", True), ("platform", "darwin"))}


class Workload:
    """Rules `(effect, (kind, name), conditions)` with kind `tool` or `package` and conditions
    `("depth", n)`, `("platform", p)`, `("plan", b)`, `("glob", field, pattern)`; the dshc sources;
    the tools calls go to; calls drawn from the rules."""

    def __init__(self, name: str, rules: list, sources: dict, tools: list, make_call):
        self.name, self.rules, self.sources, self.tools, self._make_call = name, rules, sources, tools, make_call

    def calls(self, count: int, seed: int = 11) -> list:
        """(tool definition, args, scope, platform, plan) per call."""
        rng = random.Random(seed)
        return [self._make_call(rng, rng.choice(self.rules)) for _ in range(count)]


def catalog_tools():
    """One definition per name: the persistent-PTY `bash` shares its name with the one-shot one."""
    return sorted(
        (t for t in load_catalog().definitions.values() if t.definition != "tool-bash-persistent/bash"),
        key=lambda t: t.definition,
    )


def string_fields(tool) -> list[str]:
    fields = [name for name, spec in tool.parameters.get("properties", {}).items() if spec.get("type") == "string"]
    if "any-process" in tool.risk:
        fields = [f for f in fields if f not in ("command", "workdir", "cwd")]  # segment semantics, a folder
    return fields


def _policy_text(name: str, rules: list, header: str = "") -> str:
    lines = [
        f"  {effect} {_dsh_target(target)}" + (f" when {' and '.join(map(_dsh_condition, conds))}" if conds else "")
        for effect, target, conds in rules
    ]
    return f'policy {name} "{name}" {header}{{\n' + "".join(line + "\n" for line in lines) + "}\n"


def _dsh_target(target) -> str:
    return f"package({target[1]})" if target[0] == "package" else target[1]


def _dsh_condition(cond) -> str:
    kind = cond[0]
    if kind == "depth":
        return f'scope == "depth{cond[1]}"'
    if kind == "platform":
        return f'platform == "{cond[1]}"'
    if kind == "plan":
        return "plan_mode" if cond[1] else "not plan_mode"
    return f'args.{cond[1]} matches "{cond[2]}"'


def _cedar_condition(cond) -> str:
    kind = cond[0]
    if kind == "depth":
        return f"principal.depth == {cond[1]}"
    if kind == "platform":
        return f'context.platform == "{cond[1]}"'
    if kind == "plan":
        return f"context.plan == {'true' if cond[1] else 'false'}"
    return f'context.args has {cond[1]} && context.args.{cond[1]} like "{cond[2]}"'


def cedar_text(rules) -> tuple[str, list[str]]:
    """One Cedar policy per rule (ids `policy0`, `policy1`, … in order): allow and ask permit, deny forbids.
    One query per decision: Cedar's forbid-wins makes any deny the answer; an Allow's determining
    policies say whether an ask rule matched (ask > allow); no permit matching is Cedar's default deny."""
    out = []
    for effect, (kind, name), conds in rules:
        target = f'resource in Package::"{name}"' if kind == "package" else f'resource == Tool::"{name}"'
        when = f" when {{ {' && '.join(map(_cedar_condition, conds))} }}" if conds else ""
        out.append(
            f'{"forbid" if effect == "deny" else "permit"}(principal, action == Action::"call", {target}){when};'
        )
    return "\n".join(out), [effect for effect, _, _ in rules]


def mix(effects) -> dict[str, float]:
    """Share of each tier among decisions (a `conditional` decision counts as deny: nothing runs unasked)."""
    effects = ["deny" if e == "conditional" else e for e in effects]
    return {tier: effects.count(tier) / max(len(effects), 1) for tier in TIERS}


# --- the project's shape ---------------------------------------------------------------------
def project(n: int, seed: int = 7) -> Workload:
    """N rules over the catalog's ~50 tools in 24 packages: 30 % on a package, request facts, and on tools
    with string arguments mostly a prefix or suffix glob. A deny's or an ask's glob is drawn from words
    of its own tier (`.env`, `build/`…); one with no argument to test holds in its tier's `FACT_CORNER`."""
    rng = random.Random(seed)
    tools = catalog_tools()
    packages = sorted({t.package for t in tools})
    by_package = {p: [t for t in tools if t.package == p] for p in packages}
    rules = []
    for _ in range(n):
        effect = rng.choice(EFFECTS)
        if rng.random() < 0.3:
            target, fields = ("package", rng.choice(packages)), []
        else:
            tool = rng.choice(tools)
            target, fields = ("tool", tool.name), string_fields(tool)
        conds = []
        if fields and (effect != "allow" or rng.random() < 0.7):
            field = rng.choice(fields)
            if rng.random() < 0.5:
                conds.append(("glob", field, rng.choice(PREFIXES[effect]) + rng.choice(["", "/", "-"]) + "*"))
            else:
                conds.append(("glob", field, "*" + rng.choice(SUFFIXES[effect])))
        elif effect != "allow":  # one fixed corner of the request facts per tier: it stays that size at any N
            conds += list(FACT_CORNER[effect])
        if not any(c[0] != "glob" for c in conds):  # request facts besides, as real rules have them
            if rng.random() < 0.3:
                conds.append(("depth", rng.choice(list(SCOPES.values()))))
            if rng.random() < 0.3:
                conds.append(("platform", rng.choice(PLATFORMS)))
            if rng.random() < 0.2:
                conds.append(("plan", rng.random() < 0.5))
        rules.append((effect, target, tuple(conds)))

    def make_call(rng, rule):
        effect, (kind, name), conds = rule
        tool = rng.choice(by_package[name]) if kind == "package" else next(t for t in tools if t.name == name)
        hit = rng.random() < HIT
        facts = {
            "depth": rng.choice(list(SCOPES.values())),
            "platform": rng.choice(PLATFORMS),
            "plan": rng.random() < 0.5,
        }
        args = {field: _word(rng, "allow", "allow") for field in string_fields(tool) if rng.random() < 0.8}
        for cond in conds:
            if cond[0] == "glob":
                pattern = cond[2]
                if hit:  # the rule's own words, the rest an allow's
                    args[cond[1]] = (
                        pattern[:-1] + _word(rng, None, "allow")
                        if pattern.endswith("*")
                        else _word(rng, "allow", None) + pattern[1:]
                    )
            elif hit:
                facts[cond[0]] = cond[1]
        scope = next(s for s, d in SCOPES.items() if d == facts["depth"])
        return tool, args, scope, facts["platform"], facts["plan"]

    text = _policy_text("bench", rules, "").replace("{\n", "{\n  approval ask\n  default deny\n", 1)
    return Workload("project", rules, {"bench.dsh": text, "scopes.dsh": SCOPES_TEXT}, tools, make_call)


def _word(rng, prefix_tier, suffix_tier) -> str:
    """An argument value: a prefix of one tier's words, a middle, a suffix of another's (None: left off)."""
    head = rng.choice(PREFIXES[prefix_tier]) + rng.choice(["/", "-"]) if prefix_tier else ""
    tail = rng.choice(SUFFIXES[suffix_tier]) if suffix_tier else ""
    return head + rng.choice(MIDDLES) + rng.choice(["", "/" + rng.choice(MIDDLES)]) + tail


# --- an independent shape --------------------------------------------------------------------
CHAIN = 8  # policies in the extends chain the rules are spread down
FILE_TOOLS = ("read", "write", "edit")
EXTENSIONS = ("py", "md", "json", "env", "pem", "lock", "yaml", "rs", "go", "ts")


def independent(n: int, seed: int = 7) -> Workload:
    """N rules: 50 % path globs on read/write/edit (a folder's files, a name anywhere, a kind of file in
    a folder), 35 % shell-command patterns on bash (`prog12 sub3 *`), 15 % URL patterns on web_fetch;
    folders, programs and hosts number about N / 4, so the patterns multiply with N. No request
    facts. Rule i sits in policy i mod 8 of a chain `bench extends chain1 … extends chain7`."""
    rng = random.Random(seed)
    catalog = {t.name: t for t in catalog_tools()}
    width = max(4, n // 4)
    rules = []
    for _ in range(n):
        effect = rng.choice(EFFECTS)
        draw = rng.random()
        if draw < 0.5:
            folder, ext = f"pkg{rng.randrange(width)}", rng.choice(EXTENSIONS)
            pattern = rng.choice(
                [f"{folder}/*", f"*/{folder}/*.{ext}", f"{folder}/*.{ext}", f"*/{folder}{rng.randrange(10)}.{ext}"]
            )
            rules.append((effect, ("tool", rng.choice(FILE_TOOLS)), (("glob", "file_path", pattern),)))
        elif draw < 0.85:
            program = f"prog{rng.randrange(width)}"
            pattern = rng.choice(
                [
                    f"{program} *",
                    f"{program} sub{rng.randrange(8)} *",
                    f"{program} sub{rng.randrange(8)} --opt{rng.randrange(4)} *",
                ]
            )
            rules.append((effect, ("tool", "bash"), (("glob", "command", pattern),)))
        else:
            pattern = f"https://host{rng.randrange(width)}.example/{rng.choice(['*', 'api/*', 'docs/*'])}"
            rules.append((effect, ("tool", "web_fetch"), (("glob", "url", pattern),)))

    def make_call(rng, rule):
        _, (_, name), ((_, field, pattern),) = rule
        if rng.random() >= HIT:  # a value no rule was written for
            pattern = {"file_path": "elsewhere/*", "command": "unlisted *", "url": "https://unlisted.example/*"}[field]
        value = pattern
        while "*" in value:
            value = value.replace("*", rng.choice(["a", "lib/a", "v2", "x.md", "sub1", "ab/cd"]), 1)
        return catalog[name], {field: value}, rng.choice(list(SCOPES)), rng.choice(PLATFORMS), rng.random() < 0.5

    sources = {"scopes.dsh": SCOPES_TEXT}
    for level in range(CHAIN):
        name = "bench" if level == 0 else f"chain{level}"
        parent = f"extends chain{level + 1} " if level + 1 < CHAIN else ""
        text = _policy_text(name, rules[level::CHAIN], parent)
        if level == 0:
            text = text.replace("{\n", "{\n  approval ask\n  default deny\n", 1)
        sources[f"chain{level}.dsh"] = text
    tools = [catalog[name] for name in (*FILE_TOOLS, "bash", "web_fetch")]
    return Workload("independent", rules, sources, tools, make_call)


WORKLOADS = {"project": project, "independent": independent}
