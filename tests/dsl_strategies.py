"""Hypothesis strategies that write random but well-formed `.dsh` text from the grammar's shapes."""

from __future__ import annotations

import json

from hypothesis import strategies as st

KEYWORDS = {
    "preset",
    "host",
    "scope",
    "policy",
    "mount",
    "as",
    "when",
    "disabled",
    "present",
    "provides",
    "platforms",
    "flags",
    "roster",
    "default",
    "rows",
    "parent",
    "approval",
    "only",
    "hide",
    "own",
    "sandbox",
    "guard",
    "deny",
    "allow",
    "ask",
    "package",
    "risk",
    "extends",
    "and",
    "or",
    "not",
    "in",
    "matches",
    "inside",
    "outside",
    "has",
    "flag",
    "true",
    "false",
    "commands",
    "is",
    "except",
}

names = st.from_regex(r"[a-z][a-z0-9_\-]{0,8}", fullmatch=True).filter(lambda n: n not in KEYWORDS)
tools = st.sampled_from(
    ["bash", "read", "write", "edit", "glob", "grep", "web_search", "todo_write", "skill", "*", "job_*"]
)
packages = st.sampled_from(["tool-fs", "tool-bash", "tool-web", "tool-todo", "tool-jobs", "plan-mode"])
strings = st.text(alphabet=st.characters(blacklist_categories=("Cs", "Cc")), max_size=12).map(json.dumps)
scalars = st.one_of(strings, st.integers(-999, 999).map(str), st.sampled_from(["true", "false"]))
values = st.one_of(scalars, st.lists(scalars, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"))
comments = st.one_of(st.just(""), st.text(alphabet='abc xyz#"{}', max_size=10).map(lambda t: "  # " + t))
facts = st.sampled_from(["platform", "host", "scope", "mode", "plan_mode", "args.command", "args.file_path"])


def _atom():
    return st.one_of(
        st.builds(lambda f, op, v: f"{f} {op} {v}", facts, st.sampled_from(["==", "!="]), scalars),
        st.builds(lambda f, vs: f"{f} in [{', '.join(vs)}]", facts, st.lists(scalars, min_size=1, max_size=3)),
        st.builds(lambda f, p: f"{f} matches {p}", facts, strings),
        st.builds(
            lambda f, p, xs: f"{f} matches {p} except {', '.join(xs)}",
            facts,
            strings,
            st.lists(strings, min_size=1, max_size=3),
        ),
        st.builds(lambda f, w: f"{f} {w} workspace", facts, st.sampled_from(["inside", "outside"])),
        st.builds(lambda n: f"has {n}", st.sampled_from(["attachments", "web", "args.command"])),
        st.builds(lambda n: f"flag {n}", names),
        st.just("args.command is readonly"),
        facts,
    )


conditions = st.recursive(
    _atom(),
    lambda inner: st.one_of(
        st.builds(lambda a, b: f"{a} and {b}", inner, inner),
        st.builds(lambda a, b: f"{a} or {b}", inner, inner),
        st.builds(lambda a: f"not {a}", inner),
        st.builds(lambda a: f"({a})", inner),
    ),
    max_leaves=6,
)

when = st.one_of(st.just(""), conditions.map(lambda c: f" when {c}"))
config = st.one_of(
    st.just(""),
    st.lists(st.builds(lambda k, v: f"{k} = {v}", names, values), min_size=1, max_size=3).map(
        lambda es: " { " + ", ".join(es) + " }"
    ),
)
mounts = st.builds(
    lambda p, a, c, w, d, cm: f"mount {p}{a}{c}{w}{d}{cm}",
    packages,
    st.one_of(st.just(""), names.map(lambda n: f" as {n}")),
    config,
    when,
    st.sampled_from(["", " disabled"]),
    comments,
)
targets = st.lists(
    st.one_of(
        tools, packages.map(lambda p: f"package({p})"), st.sampled_from(["risk(file-mutation)", "risk(any-process)"])
    ),
    min_size=1,
    max_size=3,
)
rules = st.builds(
    lambda e, ts, w, cm: f"{e} {', '.join(ts)}{w}{cm}",
    st.sampled_from(["allow", "ask", "deny"]),
    targets,
    when,
    comments,
)
guards = st.builds(lambda n, ts, w: f"guard {n}: deny {', '.join(ts)}{w}", names, targets, when)


def _block(kind, items):
    return st.builds(
        lambda n, title, body, sep: f"{kind} {n}{title} {{{sep}" + sep.join(body) + f"{sep}}}",
        names,
        st.one_of(st.just(""), strings.map(lambda s: " " + s)),
        items,
        st.sampled_from(["\n", " ;\n", "\n\n  "]),
    )


presets = _block(
    "preset", st.lists(st.one_of(mounts, st.sampled_from(["present code", "provides web, fs"])), max_size=4)
)
scopes = _block(
    "scope",
    st.lists(
        st.sampled_from(["parent root", "approval never", "hide schedule_*", "only bash, read*", "own report"]),
        max_size=3,
        unique=True,
    ),
)
policies = _block(
    "policy", st.lists(st.one_of(rules, guards, st.sampled_from(["default deny", "sandbox read-only"])), max_size=4)
)
documents = st.lists(st.one_of(presets, scopes, policies), min_size=1, max_size=3).map("\n\n".join)


# a request's facts for policies decided call by call: `Request(preset="standard", host="web", policy=…, **facts)`
request_facts = st.fixed_dictionaries(
    {
        "platform": st.sampled_from(["linux", "darwin"]),
        "plan": st.booleans(),
        "flags": st.sets(st.sampled_from(["beta"])).map(frozenset),
    }
)
