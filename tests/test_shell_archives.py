"""compiler/shell/ on archivers (catalogs/shell/commands.json `archive`, `creates`, `extracts`, `lists`,
`members_anywhere`, `bundled_first`): `tar -xf a.tar -C .claude` wrote below .claude unseen, `tar czf out.tgz
.env` read .env unseen, and `tar cf .claude/x.tar …` wrote its archive unseen. An extraction now writes every
member below the directory it extracts into (`DIR/**`, a file pattern), a creation reads each operand with
every file below it and writes its archive. Bypass forms are in the corpus."""

import pytest

from dshc.compiler.shell import analyse


def files(command):
    found = analyse(command)
    assert found is not None and not any(s.opaque for s in found.segments), (command, found)
    return sorted((f.kind, f.path) for f in found.files)


@pytest.mark.parametrize(
    "command, expected",
    [
        ("tar xzf a.tgz", [("read", "a.tgz"), ("write", "./**")]),
        ("tar -xf a.tar -C .claude", [("read", "a.tar"), ("write", ".claude/**")]),
        ("tar --extract --file=a.tar --directory=build", [("read", "a.tar"), ("write", "build/**")]),
        ("tar -x -P -f a.tar", [("read", "a.tar"), ("write", "**")]),
        ('tar -xf a.tar -C "$D"', [("read", "a.tar"), ("write", "**")]),
        ("tar czf out.tgz .env", [("read", ".env"), ("read", ".env/**"), ("write", "out.tgz")]),
        ("tar -C src -cf x.tar .", [("read", "src/."), ("read", "src/./**"), ("write", "x.tar")]),
        ("tar -cf - config", [("read", "config"), ("read", "config/**")]),
        ("tar tf a.tar", []),
        ("tar -tvf a.tar", []),
        ("unzip a.zip", [("write", "./**")]),
        ("unzip -o z.zip -d out", [("write", "out/**")]),
        ("unzip -l a.zip", []),
        ("unzip -p a.zip x", []),
        ("patch -p1 < fix.diff", [("read", "fix.diff"), ("write", "./**")]),
        ("patch -d sub -p1 -i x.diff", [("write", "sub/**")]),
        ("patch f < x.diff", [("read", "x.diff"), ("write", "f")]),
        ("patch --dry-run -p1 < x.diff", [("read", "x.diff")]),
    ],
)
def test_an_archiver_names_what_it_reads_and_writes(command, expected):
    assert files(command) == expected


def test_tar_s_directory_is_its_own_not_the_shell_s():
    # `tar -C d …` changes tar's directory only: a later relative file is still the shell's
    assert ("write", "log") in files("tar -C d -xf a.tar && echo done > log")
