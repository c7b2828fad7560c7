"""compiler/shell/ on the files a program reads (catalogs/shell/commands.json `read`, `read_patterns`,
`recursive`): `deny read when args.file_path matches "*.env"` stopped the read tool and `cat < .env`, but not
`cat .env`, `grep KEY .env`, `sed -n 1p .env` or `cat "$V"` (anthropics/claude-code#6002,
danielmiessler/LifeOS#1790, yulonglin/dotfiles#162). Each file a program reads is now decided as a `read`
call of it — where the policy has a rule or guard on `read` — and one it cannot name as a read of a file
pattern (`compiler/file_pattern.py`). Bypass forms are in the corpus."""

import pytest

from dshc.compiler.program import Program
from dshc.compiler.shell import analyse

from conftest import bash_by_both


def reads(command):
    found = analyse(command)
    assert found is not None, command
    return sorted(f.path for f in found.files if f.kind == "read")


@pytest.mark.parametrize(
    "command, paths",
    [
        ("cat a b", ["a", "b"]),
        ("cat - a", ["a"]),
        ("head -n 5 f", ["f"]),
        ("tail -n 2 -f log", ["log"]),
        ("grep -n KEY f g", ["f", "g"]),
        ("grep -e KEY f", ["f"]),
        ("grep --regexp=KEY -- f", ["f"]),
        ("grep KEY", []),
        ("sed -n 1p f", ["f"]),
        ("sed -e 1p f g", ["f", "g"]),
        ("jq .a f.json", ["f.json"]),
        ("jq -f prog.jq f.json", ["f.json", "prog.jq"]),
        ("sort -k 2 -t , f", ["f"]),
        ("cut -d , -f 1 f", ["f"]),
        ("diff a b", ["a", "b"]),
        ("wc -l a", ["a"]),
        ("base64 f", ["f"]),
        ("od -A x -t x1 f", ["f"]),
        ('cat "$V"', ["**"]),
        ("cat *.py", ["*.py"]),
        ("cat src/*", ["src/*"]),
        ("grep -r KEY src", ["src", "src/**"]),
        ("grep -rn KEY", [".", "./**"]),
        ("rg KEY", [".", "./**"]),
        ("rg KEY a b", ["a", "a/**", "b", "b/**"]),
        ("diff -r a b", ["a", "a/**", "b", "b/**"]),
        ("cd sub && cat .env", ["sub/.env"]),
        ("cd sub; cat .env", [".env", "sub/.env"]),
        ("cp a b c", ["a", "b"]),
        ("cp -t d a b", ["a", "b"]),
        ("mv a b", ["a"]),
        ("dd if=a of=b", ["a"]),
        ("uniq -c a b", ["a"]),
        ("xxd -r d o", ["d"]),
        ("zip -r x.zip src", ["src", "src/**"]),
        ("gzip -c f", ["f"]),
        ("awk 1 a b", ["a", "b"]),
        ("awk -f p.awk x=1 data.csv", ["data.csv", "p.awk"]),
        ("awk -F, '{print $1}' -", []),
        ('awk 1 "$f"', ["**"]),
        ("ln -s .env x", [".env"]),
        ("ln -t d a b", ["a", "b"]),
        # a script or program file is read; git reads the paths its subcommands name, `REV:PATH`'s path
        ("python3 -u run.py arg", ["run.py"]),
        ("bash -x s.sh a", ["s.sh"]),
        ("perl -w p.pl in.txt", ["p.pl"]),
        ("git show HEAD:a/b.py HEAD", [".", "./**", "HEAD", "a/b.py"]),
        ("git show HEAD:", ["."]),
        ("git cat-file -p :x.env", ["x.env"]),
        ("git blame -L 1,2 f.py", ["f.py"]),
        ("git grep -e K -- src", ["src", "src/**"]),
        ("git log -p -- d", ["d", "d/**"]),
        ("git status", []),
        ("git log --oneline", []),
        ("grep -rn K --include='*.py' src", ["src", "src/***.py"]),
        ("rg K -g '*.ts' -g '*.js'", [".", "./***.js", "./***.ts"]),
        ("rg K -g '!*.md' src", ["src", "src/**"]),
        ("rg K -g 'a/*.py' src", ["src", "src/**"]),
        ('grep -r K --include="$G" src', ["**"]),  # an option that is an expansion: any file
        ('cat -"$n" a', ["**"]),
    ],
)
def test_a_program_names_the_files_it_reads(command, paths):
    assert reads(command) == paths


@pytest.mark.parametrize("command, written", [("uniq a b", ["b"]), ("uniq a", []), ("xxd d o", ["o"]), ("xxd d", [])])
def test_a_second_operand_is_written_where_the_program_writes_it(command, written):
    assert sorted(f.path for f in analyse(command).files if f.kind == "write") == written


@pytest.mark.parametrize("command", ["ls -la", "echo x", "git status", "find . -name x", "cat <<< hi"])
def test_and_reads_none_where_it_reads_none(command):
    assert reads(command) == []


POLICY = """
policy secrets "deny-list on reads" {
  default allow
  deny read when args.file_path matches "*.env"
  ask read when args.file_path outside workspace
}
policy silent "no rule on reads" {
  default ask
  allow bash when args.command is readonly
}
policy placed "reads asked outside the workspace" {
  default allow
  ask read when args.file_path outside workspace
}
policy read-guard "a guard on reads" {
  default allow
  guard secrets: deny read when args.file_path matches "*.env"
}
"""

CASES = [
    ("secrets", "cat .env", "deny"),
    ("secrets", "grep KEY .env", "deny"),
    ("secrets", 'cat "$V"', "deny"),
    ("secrets", "cat README.md", "allow"),
    ("secrets", "head -n 5 README.md", "allow"),
    ("secrets", "cat *.py", "allow"),
    ("secrets", "cat *", "deny"),
    ("secrets", "cat /etc/hosts", "ask"),
    ("secrets", "grep -r KEY src", "deny"),  # src/x.env may be below
    ("secrets", "grep KEY -- src/a.py", "allow"),
    ("secrets", "cd sub && cat .env", "deny"),
    ("silent", "cat .env", "allow"),
    ("silent", 'cat "$V"', "allow"),
    ("silent", "cat < .env", "allow"),
    ("read-guard", "cat .env", "deny"),
    ("read-guard", 'cat "$V"', "deny"),
    ("read-guard", "cat a.py", "allow"),
]


@pytest.fixture(scope="module")
def program():
    return Program.load(texts={"p.dsh": POLICY})


@pytest.mark.parametrize("policy, command, effect", CASES)
def test_a_read_is_decided_by_the_read_rules(program, policy, command, effect):
    indexed, reference = bash_by_both(program, policy, command)
    assert (indexed.effect, reference.effect) == (effect, effect), (command, indexed, reference)


FILE_ONLY = Program.load(
    texts={
        "f.dsh": """policy files "files only" {
  default allow
  deny read when args.file_path matches "*.env"
  deny write when args.file_path matches ".claude/*"
}
policy nothing "no rule on files" { default allow }
policy reads "reads only" {
  default allow
  deny read when args.file_path matches "*.env"
}
policy writes "writes only" {
  default allow
  deny write when args.file_path matches ".claude/*"
}"""
    }
)


@pytest.mark.parametrize("policy", ["reads", "writes"])
def test_each_kind_of_access_it_may_make_is_a_part(policy):
    # what it hides may read .env under the first policy, write .claude under the second
    decided = bash_by_both(FILE_ONLY, policy, 'eval "$CMD"')[0]
    assert decided.effect == "deny" and decided.reason.startswith(policy[:-1] + " of `**`"), decided


@pytest.mark.parametrize(
    "command, effect",
    [
        ('eval "cat .env"', "deny"),
        ("cat $(echo .env)", "deny"),
        ("python3 -c 'print(open(\".env\").read())'", "deny"),
        ('echo x > "$f"', "deny"),
        ("cat .env; echo 'open", "deny"),
        ('cp -"$X" a .claude/s', "deny"),
        ("ls -la", "allow"),
        ("python3 x.py", "allow"),
        ("grep -rn K --include='*.py' src", "allow"),
    ],
)
def test_a_command_that_hides_what_it_runs_may_read_and_write_any_file(command, effect):
    indexed, reference = bash_by_both(FILE_ONLY, "files", command)
    assert (indexed.effect, reference.effect) == (effect, effect), (command, indexed, reference)
    # where no rule is on files, what it may touch is no part
    assert bash_by_both(FILE_ONLY, "nothing", command)[0].effect == "allow"


def test_a_recursive_read_stays_in_its_directory(program):
    for command, effect in (("grep -r KEY src", "allow"), ("grep -r KEY /etc", "ask"), ('grep -r KEY "$D"', "ask")):
        decided = bash_by_both(program, "placed", command)[0]
        assert decided.effect == effect, (command, decided)
