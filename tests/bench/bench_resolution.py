"""Scaling of the compiler front end: deep extends/parent chains, the shadowed-rule lint, a long file.

Run from a clone:  python tests/bench/bench_resolution.py [--quick]
Prints each measurement, the growth ratio between the small and the large size against the
linear ratio, and each target as met / not met. Sizes: chains of 4,000 and 50,000 declarations
per kind (preset extends, scope extends + parent, policy extends); 4,000 and 40,000 glob rules.
"""

from __future__ import annotations

import argparse
import gc
import sys
import time
from pathlib import Path

from dshc.compiler.catalog import load_catalog
from dshc.compiler.checks import check_shadowed_rules
from dshc.compiler.diagnostics import DshError
from dshc.compiler.program import Program, SourceFile, parse_files, shipped_sources
from dshc.compiler.resolve import resolve

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the tests folder, for the shared generator
from test_malformed import ten_thousand_lines_with_one_mistake  # noqa: E402

GROWTH_SLACK = 2.0  # "about linear": the time ratio may be at most twice the size ratio


def chains(n: int) -> str:
    """Three chains n deep: presets by `extends`, scopes by `extends` and `parent`, policies by `extends`."""
    parts = ["preset c0 { mount tool-fs }", "scope s0 { parent root\n hide web_* }", "policy q0 { allow read }"]
    for i in range(1, n):
        parts.append(f"preset c{i} extends c{i - 1} {{ }}")
        parts.append(f"scope s{i} extends s{i - 1} {{ parent s{i - 1} }}")
        parts.append(f"policy q{i} extends q{i - 1} {{ }}")
    return "\n".join(parts) + "\n"


def glob_rules(n: int) -> str:
    """One policy of n rules over tool globs; a third unconditional, the rest on one of 50 flags."""
    names = sorted(load_catalog().shipped_names)
    effects = ("allow", "ask", "deny")
    lines = ["policy many {"]
    for i in range(n):
        name = names[i % len(names)]
        target = f"{name[: 1 + i % 3]}*" if i % 2 else name
        condition = "" if i % 3 == 0 else f" when flag f{i % 50}"
        lines.append(f"  {effects[i % 3]} {target}{condition}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def timed(fn):
    gc.collect()
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def chain_times(n: int) -> tuple[float, float]:
    catalog = load_catalog()
    files = shipped_sources() + [SourceFile("chains.dsh", chains(n).encode("utf-8"))]
    parse_s, (documents, diags) = timed(lambda: parse_files(files))
    assert not diags, diags[:3]
    resolve_s, resolved = timed(lambda: resolve(tuple(documents), catalog))
    assert len(resolved.policies[f"q{n - 1}"].rules) == 1 and resolved.scopes[f"s{n - 1}"].parent == f"s{n - 2}"
    return parse_s, resolve_s


def lint_time(n: int) -> tuple[float, int]:
    program = Program.load(texts={"many.dsh": glob_rules(n)})
    seconds, found = timed(lambda: list(check_shadowed_rules(program)))
    return seconds, len(found)


def ten_thousand_lines() -> float:
    text, _ = ten_thousand_lines_with_one_mistake()
    seconds, raised = timed(lambda: _load_expecting_error(text))
    assert raised, "the mistake was not reported"
    return seconds


def _load_expecting_error(text: str) -> bool:
    try:
        Program.load(texts={"big.dsh": text}, shipped=False)
    except DshError as exc:
        return [d.code for d in exc.diagnostics] == ["DSH201"]
    return False


def growth(label: str, small: int, large: int, t_small: float, t_large: float) -> bool:
    linear = large / small
    ratio = t_large / t_small if t_small > 0 else float("inf")
    ok = ratio <= linear * GROWTH_SLACK
    print(
        f"  {label}: ×{ratio:.1f} for ×{linear:.1f} more input (linear ×{linear:.1f}, allowed ×{linear * GROWTH_SLACK:.1f})"
        f" — {'met' if ok else 'not met'}"
    )
    return ok


def main() -> int:
    args = argparse.ArgumentParser(description=__doc__).parse_args() if "--quick" not in sys.argv else None
    quick = args is None
    small_chain, large_chain = (400, 5_000) if quick else (4_000, 50_000)
    small_rules, large_rules = (400, 4_000) if quick else (4_000, 40_000)
    results = []

    print(f"chains of {small_chain:,} and {large_chain:,} declarations per kind (preset, scope, policy)")
    (parse_small, resolve_small), (parse_large, resolve_large) = chain_times(small_chain), chain_times(large_chain)
    print(f"  parse {parse_small:.2f} s / {parse_large:.2f} s; resolve {resolve_small:.2f} s / {resolve_large:.2f} s")
    results.append(growth("resolve", small_chain, large_chain, resolve_small, resolve_large))
    results.append(growth("parse", small_chain, large_chain, parse_small, parse_large))
    in_seconds = resolve_large <= 10
    print(
        f"  resolving the {large_chain:,}-deep chains in ≤ 10 s: {resolve_large:.2f} s — {'met' if in_seconds else 'not met'}"
    )
    results.append(in_seconds)

    print(f"shadowed-rule lint on {small_rules:,} and {large_rules:,} glob rules")
    (lint_small, found_small), (lint_large, found_large) = lint_time(small_rules), lint_time(large_rules)
    print(f"  {lint_small:.2f} s ({found_small:,} shadowed) / {lint_large:.2f} s ({found_large:,} shadowed)")
    results.append(growth("lint", small_rules, large_rules, lint_small, lint_large))

    seconds = ten_thousand_lines()
    print(f"10,000-line file with one mistake on line 9,876: reported in {seconds:.2f} s (no target; was a unit test)")

    print("all targets met" if all(results) else "some targets not met")
    return 0 if all(results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
