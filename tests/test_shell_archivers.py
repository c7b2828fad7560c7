"""7z, unrar and ar extract every member of an archive, below the folder they are given (7z's `-o{Dir}`) or
the working directory: a write of every file there, which `deny write .claude/*` meets. Their command is a
letter (`7z x`, `ar x`), read as tar's is (`bundled_first`)."""

from __future__ import annotations

import pytest

from dshc.compiler.shell import analyse


def _writes(command):
    return {f.path for f in analyse(command).files if f.kind == "write"}


@pytest.mark.parametrize(
    "command, written",
    [
        ("7z x evil.7z -o.claude", ".claude/**"),
        ("7za e a.7z -oout", "out/**"),
        ("7z x a.7z", "./**"),
        # `-aoa` (overwrite mode) and `-t7z` (archive type) start like other commands' letters: still an extraction
        ("7z x evil.7z -aoa -o.claude", ".claude/**"),
        ("7z x -t7z a.7z -oout", "out/**"),
        ("unrar x a.rar dest/", "./**"),
        ("ar x lib.a", "./**"),
        ("ar xv lib.a", "./**"),
    ],
)
def test_an_extraction_writes_every_member_below_its_folder(command, written):
    assert written in _writes(command)


@pytest.mark.parametrize("command", ["7z l a.7z", "unrar l a.rar", "unrar lt a.rar", "ar t lib.a", "ar rcs lib.a x.o"])
def test_a_listing_or_an_archive_update_extracts_nothing(command):
    assert not any(path.endswith("**") for path in _writes(command))


def test_7z_a_reads_every_file_it_packs():
    assert "src/**" in {f.path for f in analyse("7z a /tmp/x.7z src").files if f.kind == "read"}


@pytest.mark.parametrize(
    "command, archive",
    [("7z a .claude/settings.json src", ".claude/settings.json"), ("7z u -t7z out.7z src", "out.7z")],
)
def test_7z_a_writes_its_archive_its_first_operand(command, archive):
    assert archive in _writes(command)


def test_7z_x_reads_its_archive_and_extracts_nothing_into_it():
    found = analyse("7z x secrets.env.7z -oout")
    assert ("read", "secrets.env.7z") in {(f.kind, f.path) for f in found.files}
    assert "secrets.env.7z/**" not in _writes("7z x secrets.env.7z -oout")
