"""Files dshc writes for the user are replaced whole: a failed write keeps the old file, links and modes stay."""

from __future__ import annotations

import io
import os
import stat

import pytest

from dshc.cli import output_file
from dshc.cli.main import main
from dshc.compiler.diagnostics import DshError

UNFORMATTED = "policy mine extends workspace-write {\ndeny    bash\n}\n"


def _fmt(path) -> tuple[int, str]:
    err = io.StringIO()
    return main(["fmt", str(path)], io.StringIO(), err), err.getvalue()


def test_fmt_that_cannot_finish_its_write_keeps_the_original(tmp_path, monkeypatch):
    source = tmp_path / "p.dsh"
    source.write_text(UNFORMATTED)

    def no_space(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(output_file.os, "fsync", no_space)
    code, err = _fmt(source)
    assert code == 2 and "No space left" in err and "internal error" not in err
    assert source.read_text() == UNFORMATTED
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.dsh"]  # no temp file left behind


def test_fmt_keeps_a_symlink_a_link_and_the_file_mode(tmp_path):
    real = tmp_path / "real.dsh"
    real.write_text(UNFORMATTED)
    os.chmod(real, 0o640)
    link = tmp_path / "link.dsh"
    link.symlink_to(real)
    assert _fmt(link)[0] == 0
    assert link.is_symlink() and "deny bash" in real.read_text()
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640


def test_a_new_file_gets_the_usual_mode_and_a_missing_folder_is_a_diagnostic(tmp_path):
    output_file.replace_file(str(tmp_path / "new.txt"), "x", "the export")
    assert stat.S_IMODE(os.stat(tmp_path / "new.txt").st_mode) == output_file.NEW_FILE_MODE
    with pytest.raises(DshError) as caught:
        output_file.replace_file(str(tmp_path / "missing" / "new.txt"), "x", "the export")
    assert "cannot write the export" in caught.value.diagnostics[0].message
