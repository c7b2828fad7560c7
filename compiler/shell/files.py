"""File effects: the files a program reads or writes, by its catalog row, recorded on the walker as
`read`/`write` accesses of a name or of a file pattern when no word names the file."""

from __future__ import annotations

import posixpath

from ..file_pattern import ANY, DEEP, NAME, ONE, display
from ..shell_data import Program
from .records import _WalkState
from .words import _bracketed, _glob_shape, _unknown, _Word


def _rewrites_tree(row: Program, own: list[_Word], forced: bool, kept: bool, dashes: bool) -> bool:
    """Whether a `tree` command may rewrite its repository's files, by its row's mode (`Program.tree`);
    `own`: its operands after the subcommand, `dashes`: a `--` was given."""
    if kept or own and not own[0].dynamic and own[0].text in row.tree_keeping:
        return False
    if forced or row.tree == "always":
        return True
    if row.tree == "operand":
        return bool(own)
    return row.tree == "lone_operand" and len(own) == 1 and not dashes


def _clone_name(url: _Word) -> _Word:
    """The directory `git clone URL` makes: the URL's last name, `.git` (or `.bundle`) dropped (`host:a/b.git`
    -> `b`, `/srv/r/.git` -> `r`). One not known (an expansion) is the word itself: a file pattern."""
    if _unknown(url):
        return url
    text = url.text.rstrip("/")
    if text.endswith("/.git"):
        text = text[: -len("/.git")].rstrip("/")
    name = text.replace(":", "/").rsplit("/", 1)[-1]
    for suffix in (".git", ".bundle"):
        if name.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
    return _Word(name)


def _read_operands(row: Program, operands: list[_Word], pattern_given: bool, into: bool) -> list[_Word]:
    """The operands a program reads, by its row's `read` (`cp a b`: its sources; `dd if=f`: f)."""
    read = [
        _Word(word.text.partition("=")[2], word.dynamic, word.unsafe, word.glob)
        for word in operands
        if word.text.partition("=")[0] in row.read_assignments and "=" in word.text
    ]
    if row.read == "all" or row.read == "after_first" and pattern_given:
        read += operands
    elif row.read == "after_first":
        read += operands[1:]
    elif row.read == "first":
        read += operands[:1]
    elif row.read == "sources":  # `cp a b DIR`, `cp -t DIR a b`
        read += operands if into else operands[:-1]
    elif row.read == "revisions":  # `git show HEAD:.env`: the path in a revision; any other operand as a path
        read += [
            _Word(word.text.partition(":")[2] or ".", word.dynamic, word.unsafe, word.glob)
            if ":" in word.text
            else word
            for word in operands
        ]
    return read


def _local_repository(source: str) -> bool:
    """Whether `git clone SOURCE` names a repository on this machine: a path, or a `file://` URL; not another
    URL nor git's `[user@]host:path`, which have a colon before any slash."""
    if source.startswith("file://"):
        return True
    colon, slash = source.find(":"), source.find("/")
    return colon < 0 or 0 <= slash < colon


def _history_reads(
    row: Program, patch_given: bool, quiet_given: bool, operands: list[_Word], dashes_at: int | None
) -> list[_Word] | None:
    """The paths whose every file a git subcommand prints from the repository's history (`Program.history`;
    `operands`: the subcommand's, itself first): its `-- PATH…`, else its operands' paths when all are
    `REV:PATH` (a path may name a folder, or a tree), else [] (every file below the working directory: an
    operand before `--` may be a revision, `git show HEAD`, `git diff main`); None when it prints none."""
    own = operands[1:]
    if not (patch_given or row.history == "always" and not quiet_given):
        return None
    if row.history_verbs and (not own or not _unknown(own[0]) and own[0].text not in row.history_verbs):
        return None  # `git worktree list`: only `add` checks the files out
    if dashes_at is not None and len(operands) > dashes_at:
        return operands[dashes_at:]
    if own and all(":" in word.text and not _unknown(word) for word in own):
        if row.history_lists_trees:  # `git show HEAD:src` lists a tree's names: a blob's path is read as a path
            return None
        return [_Word(word.text.partition(":")[2] or ".", word.dynamic, word.unsafe, word.glob) for word in own]
    return []


def _name_globs(values: list) -> tuple:
    """The base-name globs a program reads below a directory (`--include='*.py'`), as file-pattern items;
    () when any is unknown or names a path, or none is given: then every file below is read. A negated
    one (`rg -g '!*.md'`) only excludes, so it restricts nothing."""
    globs = []
    for value in values:
        if value is None or _unknown(value) or "/" in value.text:
            return ()
        if not value.text.startswith("!"):
            globs.append(tuple(_bracketed(_glob_shape(value.text))))
    return tuple(globs)


def _below(word: _Word) -> tuple:
    """The file pattern of every file below a path (`src/**`)."""
    return (*(_file_shape(word) if _unknown(word) else (word.text.rstrip("/") or "/",)), "/", DEEP)


def _file_shape(word: _Word) -> tuple:
    """A written word that is not one known name, as file-pattern items: its shape, or ANY when it has
    none or cannot be read whole (a substitution, a brace, `$'…'`)."""
    if word.unsafe or not word.shape:
        return (ANY,)
    return word.shape


def _base_name(source: _Word | None) -> tuple:
    """The items of the name a source keeps in a directory: its last component; NAME when it is not
    known (no source, or an expansion in it, whose value may hold `/`)."""
    if source is None:
        return (NAME,)
    if not _unknown(source):
        return (posixpath.basename(source.text.rstrip("/")) or NAME,)
    items = [char for item in _file_shape(source) for char in ((item,) if item in (NAME, ONE, ANY) else item)]
    while items and items[-1] == "/":
        items.pop()
    last = max((i for i, item in enumerate(items) if item == "/"), default=-1)
    name = items[last + 1 :]
    return (NAME,) if not name or ANY in name else tuple(name)


class _FileEffects(_WalkState):
    """The walker's recording of file accesses (mixed into `walk._Walker`)."""

    def written_files(
        self,
        name: str,
        row: Program,
        operands: list[_Word],
        into: list[_Word],
        written_with: bool,
        order,
        recursive: bool = False,
    ) -> str:
        """The files a file program writes, decided as `write` calls of them (`cp x .claude/s`, `sed -i … f`,
        `dd of=f`). One it cannot name (an expansion, a pattern, a source's name in a directory) is a write
        of a file pattern (`file_pattern`): a deny whose glob may meet it applies, an allow only one that
        surely covers it. Copying `recursive`ly (`cp -r SRC DIR`), DIR is written with every file below it:
        `SRC/.` copies SRC's contents into DIR, and a DIR that does not exist becomes the copy itself."""
        targets: list[_Word] = []
        sources: list[_Word] = []
        if row.written_assignments:  # `dd if=a of=b`
            for word in operands:
                variable, equals, value = word.text.partition("=")
                if equals and variable in row.written_assignments:
                    targets.append(_Word(value, word.dynamic, word.unsafe, word.glob))
        elif row.written == "all":
            targets = operands
        elif row.written == "first":
            targets = operands[:1]
        elif row.written == "second":  # `uniq IN OUT`, `xxd IN OUT`
            targets = operands[1:2]
        elif row.written in ("rest", "rest_or_here"):  # `git restore PATH…`: all but the subcommand
            targets = operands[1:] or ([_Word(".")] if row.written == "rest_or_here" else [])  # `git clean`
        elif row.written == "after_verb":  # `git worktree add PATH`: all but the subcommand and its verb
            targets = operands[2:]
        elif row.written == "clone":  # `git clone URL [DIR]`: DIR, else the name git gives it
            targets = operands[2:3] or [_clone_name(word) for word in operands[1:2]]
        elif row.written == "prefix":  # `split FILE PREFIX`: PREFIXaa, PREFIXab … (`xaa` … with no PREFIX)
            prefix = operands[1] if len(operands) > 1 else _Word("x")
            items = (*(_file_shape(prefix) if _unknown(prefix) else (prefix.text,)), NAME)
            self.files.append(("write", display(items), order, items))
        elif row.written == "destination":
            if into:  # `cp -t DIR SRC…`: each source, into DIR
                sources = operands
            elif len(operands) > 1:
                targets, sources = operands[-1:], operands[:-1]
                into = targets  # `cp a b DIR`: DIR may be a directory, each source keeps its name in it
        if row.written_with and not written_with:
            return ""
        if row.moves:
            targets = targets + sources
        if row.written_recursive:  # `git rm -r PATH`: each with every file below it
            for target in targets:
                self.written_below(target, order)
            targets = []
        written = [(target.text, _file_shape(target) if _unknown(target) else ()) for target in targets]
        for directory in into:  # each source keeps its name there (`cp -t DIR`, `cp a b DIR`)
            for source in sources or (None,):
                kept = _base_name(source)
                if _unknown(directory) or NAME in kept or ONE in kept:
                    home = _file_shape(directory) if _unknown(directory) else (directory.text.rstrip("/") or "/",)
                    items = (*home, "/", *kept)
                    written.append((display(items), items))
                else:
                    written.append((posixpath.join(directory.text, "".join(kept)), ()))
        if recursive and row.written == "destination":
            for directory in into:
                self.written_below(directory, order)
        hazard = ""
        for path, items in written:
            if not path:
                hazard = hazard or f"`{name}` writes a file with an empty name"
            else:
                self.files.append(("write", path, order, items))
        return hazard

    def archive_files(
        self,
        row: Program,
        archived: dict,
        archives: list[_Word],
        operands: list[_Word],
        member_dir: _Word | None,
        order,
    ) -> None:
        """An archiver's files: `tar -c` writes its archive and reads each operand with every file below it
        (relative to `-C DIR`); `tar -x`, `unzip`, `patch` write every member below the directory they
        extract into (`DIR/**`), or anywhere (`tar -P`, a directory not known). The archive of `tar -x` is
        read."""

        def placed(word: _Word) -> _Word:
            if member_dir is None:
                return _Word(word.text, True)  # below a directory not known: any file
            if member_dir.text == "." or posixpath.isabs(word.text):
                return word
            return _Word(
                posixpath.join(member_dir.text, word.text),
                word.dynamic,
                word.unsafe,
                word.glob,
                False,
                (member_dir.text, "/", *word.shape) if word.shape else (),
            )

        if archived["creates"]:
            for archive in archives:
                if archive.text and archive.text != "-":
                    self.files.append(("write", archive.text, order, _file_shape(archive) if _unknown(archive) else ()))
            self.read_files([placed(word) for word in operands], True, order, tree=True)
        # both, where one word may read as either (`7z x a.7z -aoa`: `-aoa` is an overwrite mode, not `a`)
        if archived["extracts"] and not archived["lists"] and not (row.written and operands):
            # (`patch FILE < x.diff` writes FILE, its `written` operand; with none, the files its diff names)
            self.read_files([archive for archive in archives if archive.text], False, order)
            if archived["anywhere"] or member_dir is None or _unknown(member_dir):
                items: tuple = (ANY,)
            else:
                items = (member_dir.text.rstrip("/") or "/", "/", DEEP)
            self.files.append(("write", display(items), order, items))

    def read_files(self, operands: list[_Word], recursive: bool, order, names: tuple = (), tree: bool = False) -> None:
        """The files a program reads, decided as `read` calls of them (`cat .env`, `grep KEY .env`); one it
        cannot name is a read of a file pattern. Read recursively, a directory is itself and every file
        below it (`src/**`), or each file below it whose base name one of `names` matches (`src/**.py`,
        `grep -r --include='*.py'`); with no operand, the working directory's. `tree`: the files below are read
        because they are there, not named (`FileAccess.tree`)."""
        if recursive and not operands:
            operands = [_Word(".")]
        for word in operands:
            if word.text == "-" and not _unknown(word):
                continue  # stdin
            items = _file_shape(word) if _unknown(word) else ()
            if word.text:
                self.files.append(("read", word.text, order, items))
            if recursive:
                for name in names or ((),):  # `DEEP` may end in `/`: `src/` + `**` + `*.py` is any depth
                    below = (*_below(word), *name)
                    self.files.append(("read", display(below), order, below))
                    if tree:
                        self.trees.add(self.files[-1])

    def tree_rewritten(self, words: list[_Word], order) -> None:
        """A command that may rewrite any file of its repository (`git checkout BRANCH`, `git merge`): a write
        of any file, as the repository's root may be any directory above the working one."""
        self.written_anywhere(f"`{' '.join(w.text for w in words)}` may rewrite any file of its repository", order)
        self.trees.add(self.files[-1])  # whichever files differ, none named: the sandbox keeps what it protects

    def env_file_written(self, variable: str, value: _Word, order) -> None:
        """`GIT_TRACE=/x git status`: the program appends to the file the variable names (for git's traces only
        an absolute path is a file: `1`, `true`, `2` mean stderr or a descriptor)."""
        if _unknown(value):
            self.written_anywhere(f"`{variable}=` names a file the program writes, which the rules cannot read", order)
        elif value.text and (self.data.env_written[variable] == "any" or value.text.startswith("/")):
            self.files.append(("write", value.text, order, ()))

    def written_anywhere(self, why: str, order) -> None:
        """A write of any file, for the reason `why` (no word of the line names the file)."""
        self.file_reasons[len(self.files)] = why
        self.files.append(("write", display((ANY,)), order, (ANY,)))

    def written_below(self, word: _Word, order) -> None:
        """A path written with every file below it (`find DIR -delete`, `git restore DIR`)."""
        if word.text:
            self.files.append(("write", word.text, order, _file_shape(word) if _unknown(word) else ()))
        below = _below(word)
        self.files.append(("write", display(below), order, below))
