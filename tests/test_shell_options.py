"""Options understood per program (catalogs/shell/options.json, compiler/shell_options.py): a deny or ask
pattern written with options meets the same options in any order, cluster, alias or abbreviation, and the
index decides as the reference evaluator does. Public reports: kirodotdev/KiroCrew#8237 (`rm -fr`,
`rm -rfv`, `rm -r -f`, `rm --recursive --force` past an `rm -rf` deny), Estudely/riftor#109,
trailofbits/claude-code-config#33, omnigent-ai/omnigent#3570 (force pushes spelled `-f`)."""

from __future__ import annotations

import json
import random
from unittest.mock import patch

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dshc.cli.main import main
from dshc.compiler.argclasses import argument_classes
from dshc.compiler.fmt import format_document
from dshc.compiler.program import Program, SourceFile, parse_files
from dshc.compiler.request import Request
from dshc.compiler.shell import analyse, with_options
from dshc.compiler.shell_data import knowledge
from dshc.compiler.shell_options import grammars, options_match, pattern_reading, read_options
from dshc.compiler.package_data import package_path
from dshc.compiler.policy.core import PolicyCore

POLICY = """policy p "Denies and asks written with options" {
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
"""

# (command, effect under `p`)
CASES = [
    ("rm -rf /", "deny"),
    ("rm -fr /", "deny"),
    ("rm -rfv /", "deny"),
    ("rm -r -f /", "deny"),
    ("rm --recursive --force /", "deny"),
    ("rm -R -f /etc", "deny"),
    ("rm / -rf", "deny"),
    ("rm --rec --fo /", "deny"),
    ("rm -rf x / y", "deny"),
    ("./rm -fr /", "deny"),
    ("/usr/bin/rm -fr /", "deny"),
    ("rm -fr $DIR", "deny"),
    ("bash -c 'rm -fr /'", "deny"),
    ("sudo rm -r -f /", "deny"),
    ("rm -f /x", "allow"),
    ("rm -r /x", "allow"),
    ("rm -rf ./x", "allow"),
    ("rm -- -rf /x", "allow"),
    ("rm -f -- -r /x", "allow"),
    ("git push -f", "deny"),
    ("git push origin main --force", "deny"),
    ("git -C repo push -f origin", "deny"),
    ("git --git-dir=.git push --forc", "deny"),
    ("git push origin main", "allow"),
    ("git push --force-with-lease origin", "allow"),
    ("git push origin -- --force", "allow"),
    ("git push origin +main", "deny"),
    ("git push -- origin +HEAD:main", "deny"),
    ("git push origin a+b", "allow"),
    ("git reset HEAD --hard", "deny"),
    ("git reset --soft HEAD", "allow"),
    ("git branch -D main", "ask"),
    ("git branch --delete --force main", "ask"),
    ("git branch -df main", "ask"),
    ("git branch -d main", "allow"),
    ("git branch -f main HEAD", "allow"),
    ("git checkout --orphan xy main", "deny"),
    ("git checkout --orphan=xz", "deny"),
    ("git checkout --orphan yz", "allow"),
    ("chown --recursive root /srv", "deny"),
    ("chown root -R /srv", "deny"),
    ("chown root /srv", "allow"),
]


@pytest.fixture(scope="module")
def program() -> Program:
    return Program.load(texts={"p.dsh": POLICY})


def _decided(program, command, tmp_path):
    """The decision under policy `p` by the index, and by the reference evaluator."""
    request = Request(preset="standard", policy="p")
    args = {"command": command, "description": "d"}
    return (
        program.decide(request, "bash", args, str(tmp_path)),
        program.decide_unindexed(request, "bash", args, str(tmp_path)),
    )


@pytest.mark.parametrize("command", ["rm -rf build", "rm -fr build", "rm -r -f build"])
def test_an_allow_is_not_widened(program, tmp_path, command):
    """An allow covers the text it names only: the option reading is for denies and asks."""
    request = Request(preset="standard", policy="allowing")
    decided = program.decide(request, "bash", {"command": command, "description": "d"}, str(tmp_path))
    assert decided.effect == ("allow" if command == "rm -rf build" else "deny")


def test_the_reading_names_the_options_in_the_reason(program, tmp_path):
    decided = program.decide(
        Request(preset="standard", policy="p"),
        "bash",
        {"command": "rm --force -R / ", "description": "d"},
        str(tmp_path),
    )
    assert decided.effect == "deny" and "read as `rm -f -r -- /`" in decided.reason


RUNNER = """policy p "A runner allowed, its command denied by options, under a default deny" {
  default deny
  allow bash when args.command matches "uv run *"
  allow write
  deny bash when args.command matches "rm -rf /*"
}
"""


@pytest.mark.parametrize(
    ("command", "effect"), [("uv run rm -fr /", "deny"), ("uv run rm -r -f /x", "deny"), ("uv run rm -f /x", "allow")]
)
def test_a_runners_command_is_read_by_its_options(tmp_path, command, effect):
    """A runner's command is deny-only: its text meeting no rule counts for nothing, so its option
    reading is weighed against nothing, not against the default deny it was not counted with."""
    decided, reference = _decided(Program.load(texts={"p.dsh": RUNNER}), command, tmp_path)
    assert (decided.effect, reference.effect) == (effect, effect), decided.reason


@pytest.mark.parametrize(
    ("command", "effect"), [("rm -fr /", "deny"), ("ls && rm -r -f /x", "deny"), ("rm -f /x", "allow")]
)
def test_a_guard_written_with_options_fires_however_they_are_spelled(tmp_path, command, effect):
    guarded = Program.load(
        texts={
            "p.dsh": 'policy p "P" {\n  default allow\n  guard g: deny bash when args.command matches "rm -rf /*"\n}\n'
        }
    )
    decided, reference = _decided(guarded, command, tmp_path)
    assert (decided.effect, reference.effect) == (effect, effect), decided.reason
    assert decided.reason == reference.reason


def _grammar(name):
    return grammars()[name]


def test_clusters_values_and_the_end_of_options():
    push = _grammar("git push")
    assert read_options(["-fuo", "ci.skip", "origin"], push) == (
        frozenset({"--force", "--set-upstream", "--push-option"}),
        (("--push-option", "ci.skip"),),
        "origin",
    )
    assert read_options(["--push-option=x", "--", "-f"], push) == (
        frozenset({"--push-option"}),
        (("--push-option", "x"),),
        "-f",
    )
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
    segments = analyse('ls -la && rm -fr / && eval "$X"').segments
    readings = [with_options(s) for s in segments]
    assert [r is not None for r in readings] == [False, True, False]
    assert readings[1].deny_only and readings[1].options.text == "rm -f -r -- /"


SPELLINGS = {
    "-r": ["-r", "-R", "--recursive", "--recu"],
    "-f": ["-f", "--force", "--forc"],
    "-v": ["-v", "--verbose"],
    "-i": ["-i"],
    "-d": ["-d", "--dir"],
}


@settings(max_examples=50, deadline=None)
@given(st.sets(st.sampled_from(sorted(SPELLINGS)), min_size=1), st.randoms(use_true_random=False), st.booleans())
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
        assert set(row.get("values", ())) <= named, name
        assert all(set(parts) <= named for parts in row.get("expands", {}).values()), name
        assert all(set(given) <= named for given in row.get("operand_options", {}).values()), name


EXCEPT = """policy p "An allow with options it does not admit" {
  default deny
  allow bash when args.command matches "git branch *" except "-D", "--delete"
  deny bash when args.command matches "rm *" except "-i"
}
"""

# (command, effect): `except` names options however spelled; an expansion may be one of them
EXCEPT_CASES = [
    ("git branch", "allow"),
    ("git branch -a --list", "allow"),
    ("git branch -- -D", "allow"),
    ("git branch -D main", "deny"),
    ("git branch -d main", "deny"),
    ("git branch --del main", "deny"),
    ("git branch -fd main", "deny"),
    ("git branch main -D", "deny"),
    ("git branch $FLAG main", "deny"),
    ("git branch && git branch -D x", "deny"),
    ("bash -c 'git branch -D x'", "deny"),
    ("rm x", "deny"),
    ("rm -ri x", "deny"),
    ("rm $X", "deny"),
]


@pytest.fixture(scope="module")
def excepting() -> Program:
    return Program.load(texts={"p.dsh": EXCEPT})


@pytest.mark.parametrize(
    ("text", "command", "effect"), [(POLICY, *case) for case in CASES] + [(EXCEPT, *case) for case in EXCEPT_CASES]
)
def test_options_match_however_spelled(program, excepting, tmp_path, text, command, effect):
    """A deny or ask written with options meets them however spelled; `except` names options an allow or
    deny does not admit, however spelled. The index decides as the reference evaluator."""
    decided, reference = _decided(program if text is POLICY else excepting, command, tmp_path)
    assert (decided.effect, reference.effect) == (effect, effect), decided.reason
    assert decided.reason == reference.reason


def test_a_deny_with_except_spares_only_commands_giving_the_option(excepting, tmp_path):
    """`deny … "rm *" except "-i"`: `rm -ri x` is not denied by it (the policy's default decides)."""
    assert "default" in _decided(excepting, "rm -ri x", tmp_path)[0].reason
    assert "rule `deny`" in _decided(excepting, "rm x", tmp_path)[0].reason


@pytest.mark.parametrize(
    ("condition", "message"),
    [
        ('args.command matches "ls *" except "-l"', "no option grammar reads `ls *`"),
        ('args.command matches "git branch *" except "-Z"', "`-Z` is not an option of `git branch`"),
        ('args.command matches "git branch *" except "D"', "`D` is not an option"),
        ('args.description matches "*" except "-x"', "`except` names options of a shell command"),
    ],
)
def test_check_refuses_an_except_it_cannot_read(tmp_path, capsys, condition, message):
    source = tmp_path / "p.dsh"
    source.write_text(f"policy p {{\n  default deny\n  allow bash when {condition}\n}}\n")
    assert main(["check", str(source), "--json"]) == 2
    out = capsys.readouterr().out
    assert '"DSH109"' in out and message in out and '"line": 3' in out


def _parsed(text: str):
    (document,), diagnostics, _ = parse_files([SourceFile("p.dsh", text.encode("utf-8"))])
    assert not diagnostics
    return document


def test_except_formats_and_parses_back():
    document = _parsed(EXCEPT)
    formatted = format_document(document)
    assert 'matches "git branch *" except "-D", "--delete"' in formatted
    assert _parsed(formatted) == document


def test_the_verifier_does_not_claim_a_proof_over_option_patterns():
    rule = Program.load(texts={"p.dsh": EXCEPT}).resolved.tables["policy"]["p"].rules[0]
    found = argument_classes([rule.condition], shell_tool=True)
    assert not found.exact and any("option grammar" in note for note in found.notes)
    assert any(w.get("command") == "git branch x -D" for w in found.witnesses)
    found = argument_classes(
        [Program.load(texts={"p.dsh": POLICY}).resolved.tables["policy"]["p"].rules[0].condition], shell_tool=True
    )
    assert not found.exact and any(w.get("command") == "rm -f -r -- /x" for w in found.witnesses)


WORDS = {
    "rm": ["-r", "-f", "-rf", "-R", "--force", "--recursive", "--rec", "-v", "-i", "-Z"],
    "git push": ["-f", "--force", "--forc", "-u", "--force-with-lease", "-o", "+main", "origin"],
    "git branch": ["-D", "-d", "-f", "--delete", "--del", "-a", "main"],
    "chown": ["-R", "--recursive", "root", "-h"],
    "ls": ["-la", "-R"],
}
_LOADED: dict = {}  # policy text -> its Program, loaded once across examples


@settings(max_examples=50, deadline=None)
@given(
    st.sampled_from(sorted(WORDS)).flatmap(
        lambda name: st.tuples(
            st.just(name), st.lists(st.sampled_from(WORDS[name] + ["/", "/srv", "x", "--", "$V"]), max_size=5)
        )
    ),
    st.sampled_from([POLICY, EXCEPT]),
)
def test_readings_decide_alike_indexed_or_not_and_only_where_they_can_matter(command, text):
    """The index decides as the reference; reading every program's commands by options, not only those some
    pattern names with options (`PolicyCore.option_programs`), changes no decision."""
    program = _LOADED.get(text) or _LOADED.setdefault(text, Program.load(texts={"p.dsh": text}))
    line = " ".join([command[0], *command[1]])
    decided, reference = _decided(program, line, "/ws")
    with patch.object(PolicyCore, "option_programs", lambda self: None):
        every = _decided(program, line, "/ws")[1]
    assert decided.effect == reference.effect == every.effect, line
    assert decided.reason == reference.reason == every.reason, line
