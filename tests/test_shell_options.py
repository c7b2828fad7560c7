"""Options understood per program (catalogs/shell/options.json, compiler/shell_options.py): a deny or ask
pattern written with options meets the same options in any order, cluster, alias or abbreviation, and the
index decides as the reference evaluator does. Public reports: kirodotdev/KiroCrew#8237 (`rm -fr`,
`rm -rfv`, `rm -r -f`, `rm --recursive --force` past an `rm -rf` deny), Estudely/riftor#109,
trailofbits/claude-code-config#33, omnigent-ai/omnigent#3570 (force pushes spelled `-f`)."""
from __future__ import annotations

import json
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.compiler.program import Program
from dshc.compiler.request import Request
from dshc.compiler.shell import analyse, with_options
from dshc.compiler.shell_data import knowledge
from dshc.compiler.shell_options import grammars, options_match, pattern_reading, read_options
from dshc.compiler.package_data import package_path

POLICY = '''policy p "Denies and asks written with options" {
  default allow
  deny bash when args.command matches "rm -rf /*"
  deny bash when args.command matches "git push --force *"
  deny bash when args.command matches "git reset --hard *"
  ask bash when args.command matches "git branch -D *"
  deny bash when args.command matches "git checkout --orphan=x* *"
  deny bash when args.command matches "chown -R root *"
}

policy allowing "An allow written with options is matched as text" {
  default deny
  allow bash when args.command matches "rm -rf build"
  allow write when args.file_path inside workspace
}
'''

# (command, effect under `p`)
CASES = [
    ("rm -rf /", "deny"), ("rm -fr /", "deny"), ("rm -rfv /", "deny"), ("rm -r -f /", "deny"),
    ("rm --recursive --force /", "deny"), ("rm -R -f /etc", "deny"), ("rm / -rf", "deny"),
    ("rm --rec --fo /", "deny"), ("rm -rf x / y", "deny"), ("./rm -fr /", "deny"), ("/usr/bin/rm -fr /", "deny"),
    ("rm -fr $DIR", "deny"), ("bash -c 'rm -fr /'", "deny"), ("sudo rm -r -f /", "deny"),
    ("rm -f /x", "allow"), ("rm -r /x", "allow"), ("rm -rf ./x", "allow"), ("rm -- -rf /x", "allow"),
    ("rm -f -- -r /x", "allow"),
    ("git push -f", "deny"), ("git push origin main --force", "deny"), ("git -C repo push -f origin", "deny"),
    ("git --git-dir=.git push --forc", "deny"), ("git push origin main", "allow"),
    ("git push --force-with-lease origin", "allow"), ("git push origin -- --force", "allow"),
    ("git reset HEAD --hard", "deny"), ("git reset --soft HEAD", "allow"),
    ("git branch -D main", "ask"), ("git branch --delete --force main", "ask"), ("git branch -df main", "ask"),
    ("git branch -d main", "allow"), ("git branch -f main HEAD", "allow"),
    ("git checkout --orphan xy main", "deny"), ("git checkout --orphan=xz", "deny"), ("git checkout --orphan yz", "allow"),
    ("chown --recursive root /srv", "deny"), ("chown root -R /srv", "deny"), ("chown root /srv", "allow"),
]


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"p.dsh": POLICY})


@pytest.mark.parametrize(("command", "effect"), CASES)
def test_a_pattern_with_options_meets_them_however_spelled(program, tmp_path, command, effect):
    request = Request(preset="standard", policy="p")
    args = {"command": command, "description": "d"}
    decided = program.decide(request, "bash", args, str(tmp_path))
    reference = program.decide_unindexed(request, "bash", args, str(tmp_path))
    assert (decided.effect, reference.effect) == (effect, effect), decided.reason
    assert decided.reason == reference.reason


@pytest.mark.parametrize("command", ["rm -rf build", "rm -fr build", "rm -r -f build"])
def test_an_allow_is_not_widened(program, tmp_path, command):
    """An allow covers the text it names only: the option reading is for denies and asks."""
    request = Request(preset="standard", policy="allowing")
    decided = program.decide(request, "bash", {"command": command, "description": "d"}, str(tmp_path))
    assert decided.effect == ("allow" if command == "rm -rf build" else "deny")


def test_the_reading_names_the_options_in_the_reason(program, tmp_path):
    decided = program.decide(Request(preset="standard", policy="p"), "bash",
                             {"command": "rm --force -R / ", "description": "d"}, str(tmp_path))
    assert decided.effect == "deny" and "read as `rm -f -r -- /`" in decided.reason


def _grammar(name):
    return grammars()[name]


def test_clusters_values_and_the_end_of_options():
    push = _grammar("git push")
    assert read_options(["-fuo", "ci.skip", "origin"], push) == (
        frozenset({"--force", "--set-upstream", "--push-option"}), (("--push-option", "ci.skip"),), "origin")
    assert read_options(["--push-option=x", "--", "-f"], push) == (
        frozenset({"--push-option"}), (("--push-option", "x"),), "-f")
    branch = _grammar("git branch")
    assert read_options(["-D", "x"], branch)[0] == frozenset({"--delete", "--force"})


def test_an_ambiguous_abbreviation_names_every_option_it_may_be():
    """git refuses `--forc` only when ambiguous; naming each candidate errs on the deny side only."""
    options = read_options(["--force-"], _grammar("git push"))[0]
    assert options == frozenset({"--force-with-lease", "--force-if-includes"})
    assert read_options(["--unknown-thing"], _grammar("rm"))[0] == frozenset({"--unknown-thing"})


def test_a_non_permuting_grammar_ends_its_options_at_the_first_operand():
    no_permute = _grammar("rm").__class__(**{**_grammar("rm").__dict__, "permutes": False})
    assert read_options(["x", "-rf"], no_permute) == (frozenset(), (), "x -rf")


def test_patterns_read_only_with_an_option_and_a_grammar():
    assert pattern_reading("rm -rf /*").options == frozenset({"-r", "-f"})
    assert pattern_reading("rm *") is None  # no option: matched as text alone
    assert pattern_reading("ls -la *") is None  # no grammar
    assert pattern_reading("git * --force") is None
    assert pattern_reading("rm -r* /") is None  # a glob word is an operand, not an option


def test_opaque_and_unknown_programs_get_no_reading():
    segments = analyse("ls -la && rm -fr / && eval \"$X\"").segments
    readings = [with_options(s) for s in segments]
    assert [r is not None for r in readings] == [False, True, False]
    assert readings[1].deny_only and readings[1].options.text == "rm -f -r -- /"


SPELLINGS = {"-r": ["-r", "-R", "--recursive", "--recu"], "-f": ["-f", "--force", "--forc"],
             "-v": ["-v", "--verbose"], "-i": ["-i"], "-d": ["-d", "--dir"]}


@settings(max_examples=50, deadline=None)
@given(st.sets(st.sampled_from(sorted(SPELLINGS)), min_size=1), st.randoms(use_true_random=False),
       st.booleans())
def test_any_spelling_order_or_cluster_of_rm_options_reads_the_same(chosen, rng: random.Random, cluster):
    """`rm` with the options `chosen`, each spelled any way, clustered or not, before or after the operand:
    read as exactly those options, and matched by a pattern naming any subset of them."""
    words = [rng.choice(SPELLINGS[option]) for option in sorted(chosen)]
    shorts = [w for w in words if not w.startswith("--")]
    if cluster and len(shorts) > 1:
        words = [w for w in words if w.startswith("--")] + ["-" + "".join(w[1] for w in shorts)]
    words.append("/srv")
    rng.shuffle(words)
    found = analyse("rm " + " ".join(words))
    reading = with_options(found.segments[0]).options
    assert reading.options == frozenset(chosen) and reading.operands == "/srv"
    subset = sorted(chosen)[: rng.randint(1, len(chosen))]
    assert options_match(reading, "rm " + " ".join(subset) + " /*")
    missing = sorted(set(SPELLINGS) - set(chosen))
    if missing:
        assert not options_match(reading, f"rm {missing[0]} /*")


def test_every_grammar_is_a_known_program_and_spells_each_option_once():
    with open(f"{package_path('dshc.catalogs')}/shell/options.json", encoding="utf-8") as handle:
        rows = {k: v for k, v in json.load(handle).items() if not k.startswith("$")}
    programs = knowledge().programs
    for name, row in rows.items():
        program, _, subcommand = name.partition(" ")
        assert programs.get(program) is not None, name
        if subcommand:
            assert programs.get(program).leading is not None, name  # its subcommand is found after those
        spellings = [s for canonical, others in row["options"].items() for s in (canonical, *others)]
        spellings += list(row.get("expands", {}))
        assert len(spellings) == len(set(spellings)), name
        assert all(s.startswith("-") and s != "--" for s in spellings), name
        named = set(row["options"])
        assert set(row.get("values", ())) <= named and set(row.get("optional_values", ())) <= named, name
        assert all(set(parts) <= named for parts in row.get("expands", {}).values()), name
