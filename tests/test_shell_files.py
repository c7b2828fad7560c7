"""compiler/shell/ on the files a file program writes (catalogs/shell/commands.json `written`,
`written_with`, `moves`, `into`, `written_assignments`): `cp x .claude/settings.json` met no
`deny write .claude/*` and `cp x /etc/passwd` no `ask write outside workspace`, as a redirection
`> .claude/settings.json` did. Each named file is now decided as a `write` call of it; one the
command cannot name (an expansion, a pattern, a source's name in a directory, a relative file after
`cd` but the one heading an `&&` chain, whose directory is known) is a write of a file pattern
(`compiler/file_pattern.py`): a deny whose glob may meet it applies, an allow only one covering all
of it. Bypass forms are in the corpus."""

import pytest

from dshc.compiler.shell import analyse


def writes(command):
    found = analyse(command)
    assert found is not None, command
    return sorted(f.path for f in found.files if f.kind == "write"), [s.hazard for s in found.segments if s.hazard]


@pytest.mark.parametrize(
    "command, paths",
    [
        ("cp a b", ["b", "b/a"]),
        ("cp -r a b dir/", ["dir/", "dir/", "dir/**", "dir/a", "dir/b"]),
        ("cp -t d a b", ["d/a", "d/b"]),
        ("cp --target-directory=d a", ["d/a"]),
        ("mv a b", ["a", "b", "b/a"]),
        ("mv -t d a", ["a", "d/a"]),
        ("install -m 644 a /etc/b", ["/etc/b", "/etc/b/644", "/etc/b/a"]),
        ("ln -sf t l", ["l", "l/t"]),
        ("rsync -a src/ dst/", ["dst/", "dst/src"]),
        ("scp h:x y", ["y", "y/h:x"]),
        ("dd if=a of=b bs=1M", ["b"]),
        ("sed -i 's/a/b/' f g", ["f", "g"]),
        ("sed --in-place -e 's/a/b/' f", ["f"]),
        ("sed -i.bak 's/a/b/' f", ["f"]),
        ("truncate -s 0 f", ["0", "f"]),
        ("touch a b", ["a", "b"]),
        ("rm -rf a b", ["a", "b"]),
        ("rmdir d", ["d"]),
        ("shred -u f", ["f"]),
        ("unlink f", ["f"]),
        ("mkdir -p a/b", ["a/b"]),
        ("chmod 600 f", ["600", "f"]),
        ("chown u:g f", ["f", "u:g"]),
        ("patch f p.diff", ["f"]),
        ("patch -o out f p.diff", ["f", "out"]),
        ("split -b 10 x pre", ["pre*"]),
        ("unzip -o z.zip -d out", ["out/**"]),
        ("tee a b", ["a", "b"]),
        ("cp -- -a b", ["b", "b", "b/**", "b/-a"]),
        # an environment prefix naming the file the program appends to (git's traces: an absolute path only)
        ("GIT_TRACE=/w/t.log git status", ["/w/t.log"]),
        ("SSLKEYLOGFILE=k.log curl https://x", ["k.log"]),
    ],
)
def test_a_file_program_names_the_files_it_writes(command, paths):
    named, hazards = writes(command)
    assert named == paths and not any("not known" in h or "directory" in h for h in hazards), (command, named, hazards)


@pytest.mark.parametrize("command", ["sed 's/a/b/' f", "sed -n 1p f", "cp", "cp a", "dd if=a", "unzip -l z.zip"])
def test_and_writes_none_where_it_writes_none(command):
    assert writes(command) == ([], []), command


@pytest.mark.parametrize("command", ["GIT_TRACE=1 git status", "GIT_TRACE2_PERF=2 git status", "GIT_TRACE= git status"])
def test_a_git_trace_to_stderr_or_a_descriptor_writes_no_file(command):
    assert writes(command)[0] == [], command


@pytest.mark.parametrize(
    "command, pattern",
    [
        ('cp "$f" backup/', "backup/*"),
        ("cp -t d *.py", "d/*.py"),
        ('mv "$a" b', "b/*"),
        ('mv "$a" b', "**"),
        ("rm -rf build/*", "build/*"),
        ("sed -i 's/a/b/' *.py", "*.py"),
        ('touch "$f"', "**"),
        ('dd of="$F"', "**"),
        ('unzip z -d "$D"', "**"),
        ('cp -- a "$D"', "**/a"),
        ('cp -- a "$D"', "**"),
        ('cp x src/"$f".bak', "src/**.bak"),
        ("cp a/b?.py d/", "d/b?.py"),
        ('sort -o "$f" x', "**"),
        ('curl -o "$f" u', "**"),
        ('cd "$D"; cp a b', "**b"),
        ('cd "$D"; touch a', "**a"),
        ('cp -r "$d" .claude', ".claude/*"),
        ("cp x[ab] out/", "out/x*"),
    ],
)
def test_a_file_it_cannot_name_is_a_write_of_a_file_pattern(command, pattern):
    # `*` a run within one name (a glob's, a copied file's unknown name), `?` one character, `**` any run
    # (a variable's value, which may hold `/` and `..`; a directory the line does not follow)
    found = analyse(command)
    assert pattern in [f.path for f in found.files if f.kind == "write" and f.pattern], (command, found)
    assert not any(s.opaque or "not known" in s.hazard for s in found.segments), (command, found)


def test_a_source_named_in_full_keeps_its_name():
    assert writes('cp "$d"/x.py out/')[0] == ["out/", "out/x.py"]


def test_an_absolute_file_after_cd_is_still_named():
    assert writes("cd d && cp a /etc/x") == (["/etc/x", "/etc/x/a"], [])


@pytest.mark.parametrize(
    "command, paths",
    [
        ("cd frontend && npm run build > build.log", ["frontend/build.log"]),
        ("cd /srv/app && make > log.txt 2>&1", ["/srv/app/log.txt"]),
        ("cd src && cp a.py b.py && ls > files.txt", ["src/b.py", "src/b.py/a.py", "src/files.txt"]),
        ("cd .. && cp x ws2/", ["../ws2/", "../ws2/x"]),
        ("cd .claude && echo x > settings.json", [".claude/settings.json"]),
        ("cd d && cp a /etc/x", ["/etc/x", "/etc/x/a"]),
    ],
)
def test_after_a_leading_cd_in_an_and_chain_a_relative_file_is_that_directorys(command, paths):
    # bash: in `cd DIR && CMD`, CMD runs only once cd succeeded, in DIR
    found = analyse(command)
    assert sorted(f.path for f in found.files if f.kind == "write") == paths
    assert not any(s.opaque for s in found.segments), found


@pytest.mark.parametrize(
    "command, paths",
    [
        ("cd d; echo x > f", ["d/f", "f"]),
        ("cd d || echo x > f", ["d/f", "f"]),
        ("(cd d) && echo x > f", ["d/f", "f"]),
        ("cd a && cd b && echo x > f", ["a/b/f", "a/f", "b/f", "f"]),
        ("cd ~/d && echo x > f", ["f", "~/d/f"]),
        ("cd d && echo x > f &", ["d/f", "f"]),
        ("cd; echo x > f", ["f", "~/f"]),
        ("pushd a; popd; echo > f", ["a/f", "f"]),
        ("cd a; cd b; cd c; echo > f", ["a/b/c/f", "a/b/f", "a/c/f", "a/f", "b/c/f", "b/f", "c/f", "f"]),
        ("cd d && git -C e log > f", ["d/e/f", "d/f", "e/f", "f"]),  # `git -C DIR` counts as a change too
    ],
)
def test_literal_changes_of_directory_give_each_directory_a_file_may_be_in(command, paths):
    # a cd may fail (`;`, `||`), run in a subshell or a background job, or follow the file: any of them
    found = analyse(command)
    assert sorted(f.path for f in found.files if f.kind == "write") == paths


@pytest.mark.parametrize(
    "command",
    [
        'cd "$D" && echo x > f',
        "cd - && echo x > f",
        "for i in 1 2; do cd d; done; echo x > f",
        "until false; do cd d; break; done; echo x > f",
        "CDPATH=/etc cd d; echo x > f",
        "cd a; cd b; cd c; cd d; echo x > f",
        "while true; do cd d; break; done; echo x > f",
    ],
)
def test_any_other_change_of_directory_makes_a_relative_file_one_of_that_name_anywhere(command):
    found = analyse(command)
    assert "**f" in [f.path for f in found.files if f.pattern] and "f" not in [f.path for f in found.files], found
    assert not any(s.opaque for s in found.segments), (command, found)


@pytest.mark.parametrize(
    "command, paths",
    [
        ("find .claude -delete", [".claude", ".claude/**"]),
        ("find -delete", [".", "./**"]),
        ("find a b -name '*.o' -delete", ["a", "a/**", "b", "b/**"]),
        ("find . -name x", []),
        ("git restore --source=x .claude", [".claude", ".claude/**"]),
        ("git rm -r --cached a", ["a", "a/**"]),
        ("git mv a b", ["a", "a/**", "b", "b/**"]),
        ("git clean -fd", [".", "./**"]),
        ("git clean -fd build", ["build", "build/**"]),
        ("git checkout x -- .claude/s.json", [".claude/s.json", ".claude/s.json/**", "x", "x/**"]),
        ("git checkout -b feat", []),
        ("git status", []),
        ("git add a", []),
    ],
)
def test_a_path_written_with_every_file_below_it(command, paths):
    # find's `-delete` removes below each starting point; git's pathspecs restore, remove or move whole trees
    assert writes(command)[0] == paths


@pytest.mark.parametrize(
    "command, written",
    [
        ("gcc -fno-omit-frame-pointer -o app a.c", ["app"]),  # `-o` is not inside another option word
        ("gcc -oapp a.c", ["app"]),
        ("cc -Wl,-Bstatic -O2 -o bin/x a.c", ["bin/x"]),
        ("go test -cover -json ./...", []),
        ("go build -o bin/app .", ["bin/app"]),
        ("rm -rf x", ["x"]),  # a program whose one-letter flags cluster still reads `-rf` as `-r -f`
    ],
)
def test_a_program_with_whole_word_options_reads_no_cluster(command, written):
    found = analyse(command)
    assert not any(s.opaque for s in found.segments), found
    assert [f.path for f in found.files if f.kind == "write"] == written


@pytest.mark.parametrize(
    "command, written",
    [
        ("split -b 1 x .claude/", [".claude/*"]),
        ("split -l 100 big.log parts/p", ["parts/p*"]),
        ("split big.log", ["x*"]),  # no prefix: `xaa`, `xab` … here
    ],
)
def test_split_writes_files_named_by_its_prefix(command, written):
    assert [f.path for f in analyse(command).files if f.kind == "write"] == written
