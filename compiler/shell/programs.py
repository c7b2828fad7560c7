"""A program's own options and operands, read from its catalog row (`Program`): what it runs, which
settings it takes, the files it reads and writes, and the hazard no pattern can see."""

from __future__ import annotations

from ..file_pattern import ANY, display
from ..globs import glob_match
from ..patterns import compiled
from ..shell_data import Program
from .files import _file_shape, _history_reads, _local_repository, _name_globs, _read_operands, _rewrites_tree
from .options import _getopt, _option_words, _patch_option, _uses, option_hit
from .records import _Opaque, _WalkState
from .words import _filled, _may_be_option, _names_stdin, _unknown, _Word


class _Programs(_WalkState):
    """The walker's reading of a program's arguments (mixed into `walk._Walker`)."""

    def remote(
        self, name: str, row: Program, words: list[_Word], argv, depth: int, order, hazard: str, literal
    ) -> bool:
        """`ssh [options] HOST CMD…`: the words after the host are joined into a command line the remote
        user's shell runs (this machine's, for localhost), read as `sh -c` reads it. False: no command."""
        at, _ = _getopt(words, 1, row.remote_command, name)  # type: ignore[arg-type]  # `simple` checks it is set
        if at + 1 >= len(words):
            return False
        command = words[at + 1 :]
        if any(map(_unknown, command)):  # expanded here, run there: any text
            raise _Opaque(f"`{name}` runs a remote command line that holds an expansion or a pattern")
        hazard = hazard or self.program_hazard(name, words[: at + 1], order, depth)  # `-o ProxyCommand=…`
        self.emit(order, argv, hazard=hazard, literal=literal, wraps=at + 1)
        self.nested_shell(" ".join(w.text for w in command), depth, (*order, at + 1))
        return True

    def program_hazard(self, name: str, words: list[_Word], order, depth: int) -> str:
        """Options that run code or write files, read from the program's data row."""
        row = self.data.programs.get(name)
        if row is None:
            return ""
        if row.hazard_always:
            return row.hazard_always
        hazard = ""
        operands_seen = False
        verb = False  # the first operand named the subcommand (`git show`): no file it reads
        # after `--` every word is an operand (a script, a file written); one that looks like an option is
        # read as one too: find's `-exec` and `-delete` follow its `--` and still run, and an option read
        # where the program meant a name can only add a hazard (refuse an allow), never hide one
        options_done = False
        script_given = False
        scripts: list[str] = []
        operands: list[_Word] = []  # its operands but a script (`sed SCRIPT FILE`): for the files it writes
        into: list[_Word] = []  # directories an option names for it to write into (`cp -t DIR`)
        written_with = False  # one of `written_with` is given (`sed -i`)
        pattern_given = False  # one of `read_patterns` is given (`grep -e P`): the first operand is a file too
        archived = {"creates": False, "extracts": "*" in row.extracts, "lists": False, "anywhere": False}
        archives: list[_Word] = []  # `tar -f A`
        member_dir: _Word | None = _Word(".")  # where members land and operands are read (`tar -C DIR`)
        if row.bundled_first and len(words) > 1 and not words[1].text.startswith("-") and not _unknown(words[1]):
            words = [words[0], _Word("-" + words[1].text), *words[2:]]  # `tar xzf a.tgz` is `tar -xzf a.tgz`
        recursive = "*" in row.recursive  # a directory operand is read with every file below it (`grep -r`)
        names_read: list[_Word | None] = []  # `grep --include=GLOB`: the base names read below a directory
        starts: list[_Word] = []  # the operands before its first option (find's starting points)
        option_seen = removing = False  # `removing`: a `removes_below` option is given (`find -delete`)
        first_row = row  # the row before a subcommand's (whose first operand is the subcommand)
        tree_forced = tree_kept = False  # a `tree_options` / `tree_keeping` option is given
        patch_given = quiet_given = False  # a `history_patch` / `history_quiet` option is given
        dashes_at: int | None = None  # how many operands came before `--`
        index = 1
        while index < len(words):
            word = words[index]
            text = word.text
            if word.dynamic and (options_done or not text.startswith("-")):
                operands_seen = True
            if text == "--" and not options_done and not row.options_after_dashes:
                options_done = True
                dashes_at = len(operands)
                index += 1
                continue
            if word.optionable and not options_done and not text.startswith("-") and row.options_matter:
                # `tar cf x.tar *` with a file named `--checkpoint-action=exec=sh x`: the word may be an option
                remedy = "" if row.options_after_dashes else f"; `./{text}` or `-- {text}` cannot be"
                if row.runs_commands_after(row.global_only if operands_seen else frozenset()):
                    raise _Opaque(
                        f"`{name}` argument {_may_be_option(word)}, and some of its options run commands{remedy}"
                    )
                if row.writes:  # as a redirection to an expansion: a write no rule can place
                    raise _Opaque(
                        f"`{name}` argument {_may_be_option(word)}, and some of its options write a file{remedy}"
                    )
                hazard = hazard or f"`{name}` argument {_may_be_option(word)}{remedy}"
            if options_done or not text.startswith("-") or text == "-":
                if not operands_seen and not options_done and not word.dynamic and row.subcommands:
                    # `git clone -u CMD`: the subcommand's own options; an unknown one (an alias) keeps all
                    row, verb = row.subcommands.get(text, row), True
                    recursive = recursive or "*" in row.recursive  # `git grep`: every file below, always
                    if row.settings:  # `git config KEY VALUE`: a setting later git commands run
                        self.settings_written(name, row, text, words[index + 1 :], depth, (*order, index + 1))
                elif row.runs_rest_after and text == row.runs_rest_after and not word.dynamic:
                    if row.runs_rest_as_argv:  # `git bisect run CMD ARG…`: run as given
                        if index + 1 < len(words):
                            self.simple(words[index + 1 :], depth, (*order, index + 1))
                    else:
                        self.rest_command_line(f"{name} {text}", words[index + 1 :], depth, (*order, index + 1))
                    if row.tree:  # `git bisect run CMD`: each commit tested is checked out
                        self.tree_rewritten(words, order)
                    return hazard or f"`{name} {text}` runs a command"
                if row.first_operand_script and not operands_seen and not script_given:
                    scripts.append(text)
                    script_given = True
                elif row.command_operands and word.dynamic and (":" not in text or "$" in text.partition(":")[0]):
                    # `socat - "$ADDR"`: an address whose type is not written may be `EXEC:`
                    raise _Opaque(f"`{name}` operand is an expansion that may be a command address")
                elif row.command_operands and text.lower().startswith(row.command_operands):
                    # `socat - EXEC:"rm x",pty`: the line up to the address's own options
                    kind, _, line = text.partition(":")
                    self.command_line_value(
                        f"{name} {kind}:",
                        _Word(line.split(",", 1)[0], word.dynamic, word.unsafe),
                        depth,
                        (*order, index),
                    )
                    hazard = hazard or f"`{name} {kind}:` runs a command"
                else:
                    operands.append(word)
                    if not option_seen:
                        starts.append(word)
                operands_seen = True
                if not (options_done and text.startswith("-") and text != "-" and not word.dynamic):
                    index += 1
                    continue
            option_seen = True
            removing = removing or _uses(text, row.removes_below, row.clusters)
            tree_forced = tree_forced or _uses(text, row.tree_options, row.clusters)
            tree_kept = tree_kept or _uses(text, row.tree_keeping, row.clusters)
            if row.history:  # a quiet option counts as the whole word only: `-Ssecret` is no `-s`
                patch_given = patch_given or _patch_option(text, row)
                quiet_given = quiet_given or text.partition("=")[0] in row.history_quiet
            if word.dynamic:
                if row.runs_commands:  # `--to-command="$C"` runs what $C holds
                    raise _Opaque(f"`{name}` option is an expansion, and some of its options run commands")
                # it may be any option, and change which operands are files (`cp -"$X" a b` with X=t writes
                # a/b): a program that reads or writes files may then read or write any
                for kind in ("read",) * row.reads_files + ("write",) * row.writes_files:
                    self.files.append((kind, display((ANY,)), order, (ANY,)))
                return "an option is an expansion"
            for option in row.exec:
                if text == option:
                    rest = []
                    index += 1
                    while index < len(words) and words[index].text not in (";", "+"):
                        rest.append(words[index])
                        index += 1
                    if rest:  # `{}` is each file found: a word holding it is unknown (`-exec sh -c 'cat {}'`)
                        # each path found starts with a starting point, read above: never an option
                        self.simple(_filled(rest, ("{}",), optionable=False), depth, (*order, index))
                    hazard = hazard or f"`{name} {option}` runs a command"
                    break
            for option in row.opaque:
                if option_hit(text, option, row.clusters) is not None:
                    raise _Opaque(f"`{name} {option}` runs code the rules cannot read")
            skip = row.global_only if operands_seen else frozenset()
            # a word may read as several options (`--exec` is also `--exec-cmd` abbreviated): each takes
            # the same value word, and the index moves past it once, below
            commands, command_value = _option_words(text, row.commands - skip, words, index, row.clusters)
            for option, line in commands:
                self.command_line_value(f"{name} {option}", line or _Word(""), depth, (*order, index))
                hazard = hazard or f"`{name} {option}` runs a command"
            for option, value in _option_words(text, row.program_files, words, index, row.clusters)[0]:
                if value is not None and (value.text == "-" or _names_stdin(value.text)):
                    raise _Opaque(f"`{name} {option}` reads its program from stdin")
            settings, setting_value = _option_words(text, row.config - skip, words, index, row.clusters)
            for option, value in settings:
                # an expansion names no harmless key: opaque
                self.config_setting(name, row, option, value.text if value else "", depth, (*order, index))
            for option in row.hazard - skip:
                if option_hit(text, option, row.clusters) is not None:
                    hazard = hazard or f"`{name} {option}` runs code or changes files"
            written_with = written_with or _uses(text, row.written_with, row.clusters)
            pattern_given = pattern_given or _uses(text, row.read_patterns, row.clusters)
            for key, options in (
                ("creates", row.creates),
                ("extracts", row.extracts),
                ("lists", row.lists),
                ("anywhere", row.members_anywhere),
            ):
                archived[key] = archived[key] or _uses(text, options, row.clusters)
            recursive = recursive or _uses(text, row.recursive, row.clusters)
            names_read += [
                value for _, value in _option_words(text, row.read_only_names, words, index, row.clusters)[0]
            ]
            written, written_value = _option_words(
                text, (row.writes | row.chdir | row.into | row.archive) - skip, words, index, row.clusters
            )
            for option, value in written:
                if option in row.into:
                    into.append(value or _Word(""))
                elif option in row.archive:
                    archives.append(value or _Word(""))
                elif option in row.chdir and (row.creates or row.extracts):  # its own, not the shell's
                    member_dir = value if value is not None and not _unknown(value) else None
                elif option in row.chdir:  # (`git -C DIR`: relative paths are DIR's, or where the line is)
                    self.changes_directory(None if value is None or _unknown(value) else value.text)
                elif value is not None and value.text:  # `-o "$f"`: a write of a file pattern
                    self.files.append(("write", value.text, order, _file_shape(value) if _unknown(value) else ()))
                else:
                    hazard = hazard or f"`{name} {option}` writes a file that is not known"
            read_options, read_value = _option_words(text, row.reads - skip, words, index, row.clusters)
            for option, value in read_options:  # `grep -f .env x`, `du --files0-from=.env`
                if value is not None and value.text:
                    self.files.append(("read", value.text, order, _file_shape(value) if _unknown(value) else ()))
                else:
                    hazard = hazard or f"`{name} {option}` reads a file that is not known"
            at_options, at_value = (
                _option_words(text, row.reads_at.keys() - skip, words, index, row.clusters)
                if row.reads_at  # (curl's and wget's: no other program pays for the lookup)
                else ((), index)
            )
            for option, value in at_options:  # `curl -d @.env`, `-F f=@.env;type=x`, `--data-urlencode n@.env`
                named = _at_file(value, row.reads_at[option]) if value is not None else ""
                if named is None:  # `-d "$D"`: $D may be `@~/.ssh/id_rsa`
                    self.files.append(("read", display((ANY,)), order, (ANY,)))
                elif named and named != "-":
                    self.files.append(("read", named, order, ()))
            value_at = max(command_value, written_value, setting_value, read_value, at_value)  # `git -c K=V`
            took_value = value_at > index  # the next word was this option's value: it is no operand
            if took_value:
                index = value_at
            for option in row.script:
                value = option_hit(text, option, row.clusters)
                if value is not None:
                    if not value and index + 1 < len(words):
                        index += 1
                        value = words[index].text
                    scripts.append(value or "")
                    script_given = True
            if not took_value and any(option_hit(text, option, row.clusters) == "" for option in row.values):
                index += 1  # the option's value is the next word, not an operand (`sed -l 5 SCRIPT`)
            index += 1
        if row.tree and _rewrites_tree(
            row, operands if row is first_row else operands[1:], tree_forced, tree_kept, options_done
        ):
            self.tree_rewritten(words, order)
        if row.written or row.written_assignments or into:
            unknown = self.written_files(name, row, operands, into, written_with, order, recursive)
            hazard = hazard or unknown
        if removing:  # `find DIR -delete`: every starting point (`.` when none) and every file below it
            for point in starts or [_Word(".")]:
                self.written_below(point, order)
        if row.creates or row.extracts:
            if row.archive_first:  # `7z a ARCHIVE FILES…`: the archive, then what goes in it
                archives, operands = [*archives, *operands[:1]], operands[1:]
            self.archive_files(row, archived, archives, operands, member_dir, order)
        if row.read or row.read_assignments:
            self.read_files(
                _read_operands(row, operands[verb:], pattern_given, bool(into)),
                recursive,
                order,
                _name_globs(names_read),
                tree=True,
            )
        if (
            row.read == "clone_source"
            and len(operands) > 1
            and (_unknown(operands[1]) or _local_repository(operands[1].text))
        ):
            source = operands[1]  # `git clone . /tmp/c`: every file of it is copied
            if source.text.startswith("file://") and not _unknown(source):
                source = _Word(source.text[len("file://") :])
            self.read_files([source], True, order)
        history = _history_reads(row, patch_given, quiet_given, operands, dashes_at) if verb else None
        if history is not None:  # every file below each, as the repository's history holds them
            start = len(self.files)
            # what the work tree, the index and HEAD hold (`git diff`, no revision named) is all the sandbox
            # must hide (`gitstore`); any other history may print a file deleted long ago
            revisions = operands[1:dashes_at] if dashes_at is not None else operands[1:]
            self.read_files(history, True, order, tree=row.history_worktree and not revisions)
            read = set(self.files[:start])  # what its operands' reads named already is not a second part
            self.files[start:] = [access for access in self.files[start:] if access not in read]
        if row.safe_script:
            for script in scripts:
                if not row.safe(script):
                    if row.opaque_script and compiled(row.opaque_script).search(script):
                        raise _Opaque(f"`{name}` script may run a command")
                    hazard = hazard or f"`{name}` script may write or read files"
        return hazard

    def settings_written(self, name: str, row: Program, subcommand: str, words: list[_Word], depth: int, order) -> None:
        """`git config [--global] KEY VALUE`: a setting every later git command reads, checked as `git -c
        KEY=VALUE` is (a command line is read as one, a key not known to be harmless is opaque). Reading,
        listing or removing one writes nothing that runs."""
        settings, operands, index = row.settings, [], 0
        while index < len(words):
            word = words[index]
            if word.text in settings.get("opaque", ()) or word.text.split("=")[0] in settings.get("opaque", ()):
                raise _Opaque(f"`{name} {subcommand} {word.text}` may change what runs")
            if not word.dynamic and (
                word.text in settings.get("reads", ()) or word.text.split("=")[0] in settings.get("reads", ())
            ):
                return
            if word.text.startswith("-") and not word.dynamic:
                index += 2 if word.text in settings.get("values", ()) else 1
                continue
            operands.append(word)
            index += 1
        if operands and operands[0].text in settings.get("verbs", ()):
            operands = operands[1:]  # `git config set KEY VALUE` (git 2.46)
        if len(operands) < 2:
            return  # `git config KEY`: reads it
        key, value = operands[0], operands[1]
        if _unknown(key):
            raise _Opaque(f"`{name} {subcommand}` sets a key that is an expansion")
        self.config_setting(name, row, subcommand, f"{key.text}={value.text}", depth, order)

    def rest_command_line(self, what: str, words: list[_Word], depth: int, order) -> None:
        """`git submodule foreach [--recursive] CMD…`: after its options, the words are one command line."""
        while words and words[0].text.startswith("-") and not words[0].dynamic:
            words = words[1:]
        if any(map(_unknown, words)):
            raise _Opaque(f"`{what}` runs a command line that holds an expansion or a pattern")
        self.command_line_value(what, _Word(" ".join(w.text for w in words)), depth, order)

    def config_setting(self, name: str, row: Program, option: str, setting: str, depth: int, order) -> None:
        """`git -c KEY=VALUE`, `ssh -o KEY=VALUE`: a key whose value is a command line is read as one; a key
        not known to be harmless may run anything (an alias renames a subcommand, a hook path runs its
        files): opaque."""
        split = compiled(r"\s*=\s*|\s+").search(setting)  # `KEY=VALUE`, or ssh's `KEY VALUE` too
        value: str | None
        key, value = (setting[: split.start()], setting[split.end() :]) if split else (setting, "")
        key = key.lower()  # git's and ssh's key names are case-insensitive
        if option in row.config_from_env:  # `--config-env=KEY=VAR`: the value is not in the command
            value = None
        if any(glob_match(glob, key) for glob in row.config_commands):
            if value is None:
                raise _Opaque(f"`{name} {option}` sets `{key}` from the environment: a command line not in the text")
            self.command_line_value(key, _Word(value), depth, order)
        elif not any(glob_match(glob, key) for glob in row.config_harmless):
            raise _Opaque(f"`{name} {option} {key}=…` may change what runs")


def _at_file(value: _Word, form: str) -> str | None:
    """The file an option value names in curl's forms, "" when the value is content, None when an expansion
    may make it either. `form`: "leading" (`-d @FILE`), "form" (`-F NAME=@FILE;type=…`, `NAME=<FILE`),
    "named" (`--data-urlencode @FILE`, `NAME@FILE`; `NAME=…` is content)."""
    text = value.text
    if _unknown(value):  # content only when the literal text before the first expansion settles it
        lead = text.split("$", 1)[0].split("`", 1)[0]
        if form == "leading":
            return "" if lead and not lead.startswith("@") else None
        name, equals, rest = lead.partition("=")
        if form == "form":
            return "" if equals and rest and rest[0] not in "@<" else None
        return "" if equals and "@" not in name else None
    if form == "leading":
        return text[1:] if text.startswith("@") else ""
    name, equals, rest = text.partition("=")
    if form == "form":
        return rest[1:].split(";", 1)[0] if equals and rest[:1] in ("@", "<") else ""
    if equals and "@" not in name:  # `name=content`
        return ""
    return text.partition("@")[2] if "@" in text else ""
