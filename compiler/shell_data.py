"""catalogs/shell/*.json → the shell analysis's knowledge: wrappers, per-program options, hazards.

Data, not code: a wrapper or a dangerous option is added by editing JSON, never this module.
"""

from __future__ import annotations

import os
from _collections_abc import Mapping  # collections.abc's own source, loaded at start-up

from ..common import json_io
from ._base.frozen import field, record, replace
from ._base.memo import cached_property, once
from .patterns import compiled
from .package_data import package_path


@record(slots=False)
class OptionSpec:
    """getopt-like option syntax of one program (what takes a value, what does not)."""

    flags: str = ""
    values: str = ""
    optional: str = ""
    long_flags: frozenset = frozenset()
    long_values: frozenset = frozenset()
    long_optional: frozenset = frozenset()


@record(slots=False)
class Wrapper:
    options: OptionSpec
    positional: int = 0
    no_run: frozenset = frozenset()
    stdin_shell: frozenset = frozenset()
    stdin_shell_always: bool = False
    opaque: frozenset = frozenset()
    opaque_always: str = ""
    string: frozenset = frozenset()
    joins: bool = False
    no_join: frozenset = frozenset()
    stop_at: frozenset = frozenset()
    writes: frozenset = frozenset()
    chdir: frozenset = frozenset()
    assignments: bool = False
    default: str = ""
    numeric_option: bool = False
    dash_is_flag: bool = False
    coproc: bool = False
    replaces: frozenset = frozenset()  # options whose value (`{}` when none) is replaced by input (`xargs -I`)
    placeholders: tuple = ()  # texts always replaced by input in the wrapped command (parallel's `{`)
    appends: bool = False  # with no replacement string in the command, input is appended as its arguments
    subcommands: frozenset = frozenset()  # it wraps only through one of these (`uv run`, `bundle exec`)
    runner: bool = False  # what it runs is decided for denies and asks only: an allow of its line covers it
    # options, a user, then arguments to the user's shell (`su root -c CMD`); with one of `command_options`
    # (`runuser -u USER CMD…`) a command run directly
    user_shell: bool = False
    command_options: frozenset = frozenset()
    permutes: bool = False  # options may follow its positional words (`kubectl exec POD -c C -- CMD`)
    each_string: bool = False  # every word after its options is a shell command line (`hyperfine 'make' 'ls'`)
    # its operands are files it writes, never a command, and options may follow them; it runs its `string`
    # option's command line, else a shell that reads stdin (`script [-c CMD] [FILE]`)
    operands_written: bool = False
    # it runs nothing but through subcommands not among these (`tmux ls`): with any other, or a `;` chaining
    # another, it is opaque (`tmux new 'cmd'`, `tmux send-keys`)
    harmless_subcommands: frozenset = frozenset()
    # it changes nothing of what it runs (`timeout 30 CMD`): the allow of what it runs covers its line, its own
    # segment is decided for denies and asks only; with `transparent_options`, only when it is given no
    # option but these (None: any), and never with an assignment (`env X=1 CMD`)
    transparent: bool = False
    transparent_options: frozenset | None = None


@record(slots=False)
class Program:
    exec: frozenset = frozenset()
    hazard: frozenset = frozenset()
    hazard_always: str = ""
    writes: frozenset = frozenset()
    reads: frozenset = frozenset()  # options whose value is a file read (`grep -f PATTERNS`, `du --files0-from`)
    # options whose value names a file in curl's forms: option -> "leading" (`-d @FILE`), "form" (`-F
    # NAME=@FILE`, `NAME=<FILE`) or "named" (`--data-urlencode @FILE`, `NAME@FILE`)
    reads_at: dict = field(default_factory=dict)
    chdir: frozenset = frozenset()
    global_only: frozenset = frozenset()
    script: frozenset = frozenset()
    first_operand_script: bool = False
    safe_script: str = ""  # a regular expression every script must match from its start ("": none)
    leading: OptionSpec | None = None  # options before a subcommand (`git -C DIR push`)
    # those of them that only move where it runs or change nothing it does (`git -C DIR`, `--no-pager`)
    transparent_leading: frozenset = frozenset()
    values: frozenset = frozenset()  # other options whose value may be the next word (`sed -l N`)
    opaque_script: str = ""  # a regular expression: a script that is not safe and holds it may run commands
    commands: frozenset = frozenset()  # options whose value is a shell command line (`tar --to-command`)
    opaque: frozenset = frozenset()  # options whose value is code the rules cannot read (`make --eval`)
    program_files: frozenset = frozenset()  # options whose value is a program file (`make -f`): stdin is opaque
    config: frozenset = frozenset()  # options whose value is a setting KEY=VALUE (`git -c`)
    config_from_env: frozenset = frozenset()  # of those, the ones whose value comes from a variable
    config_commands: tuple = ()  # globs of keys whose value is a shell command line (`core.pager`)
    config_harmless: tuple = ()  # globs of keys that change no program run (`user.name`)
    options_after_dashes: bool = False  # `--` does not end its options (find's expression follows it)
    # its options (getopt syntax), after which one word names a host and the rest are a shell command line
    # run there (`ssh HOST CMD…`)
    remote_command: OptionSpec | None = None
    # which operands it writes: "all" (`touch`, `rm`), "destination" (`cp`, `mv`: the last, and as it may be
    # a directory each source's name in it), "prefix" (`split FILE PREFIX`: PREFIX and more), "first" (`patch
    # FILE`), "second" (`uniq IN OUT`), "rest" (`git restore PATH…`: all but the subcommand; "rest_or_here":
    # `.` when none, `git clean`), "after_verb" (`git worktree add PATH`), "clone" (`git clone URL [DIR]`); with
    # `written_with`, only when one of those options is given (`sed -i`)
    written: str = ""
    written_with: frozenset = frozenset()
    moves: bool = False  # its sources are removed too (`mv`)
    into: frozenset = frozenset()  # options whose value is a directory it writes into (`cp -t`, `unzip -d`)
    written_assignments: frozenset = frozenset()  # operands `NAME=FILE` naming a file written (`dd of=`)
    written_recursive: bool = False  # each written operand with every file below it (`git rm -r DIR`)
    removes_below: frozenset = frozenset()  # options that remove every file below its starting points (`find -delete`)
    # it may rewrite any file of the repository it runs in, which may hold the working directory (a branch
    # switch, merge, stash, patch): "always"; "operand": with an operand (`git switch B`, not `git switch -c
    # NEW`); "lone_operand": with one operand and no `--` (`git checkout B`, not `git checkout B -- FILE`);
    # "options": with one of `tree_options` (`git reset --hard`), which also force the others (`--orphan`).
    # Never when a `tree_keeping` option is given or is its first operand (`git apply --check`, `git stash list`)
    tree: str = ""
    tree_options: frozenset = frozenset()
    tree_keeping: frozenset = frozenset()
    clusters: bool = True  # one-letter options may be clustered (`-rf`); False: every option is a whole word (gcc)
    # which operands it reads: "all" (`cat`, `head`), "first" (`uniq IN OUT`), "sources" (`cp`: all but the
    # destination), "revisions" (`git show HEAD:.env`: a `REV:PATH` operand reads PATH, any other operand is
    # read as a path too), "after_first" (`grep PATTERN FILE…`: the first too when a
    # `read_patterns` option gives the pattern, `grep -e P FILE`); with a `recursive` option (or "*": always,
    # `rg`) a directory is read with every file below it, and no operand reads the working directory
    # an archiver (`tar`, `unzip`, `patch`): `archive` options name the archive file; with a `creates` option it
    # writes the archive and reads its operands recursively (`tar -c`); with an `extracts` one ("*": unless a
    # `lists` option is given) it writes every member below the working directory, or below its `chdir`
    # option's directory (`tar -x -C DIR`), anywhere with a `members_anywhere` one (`tar -P`); with
    # `bundled_first` a first word without `-` is a cluster of short options (`tar xzf`)
    archive: frozenset = frozenset()
    creates: frozenset = frozenset()
    extracts: frozenset = frozenset()
    lists: frozenset = frozenset()
    members_anywhere: frozenset = frozenset()
    bundled_first: bool = False
    archive_first: bool = False  # its first operand is the archive (`7z a ARCHIVE FILES…`)
    read: str = ""
    read_assignments: frozenset = frozenset()  # operands `NAME=FILE` naming a file read (`dd if=`)
    # it prints the content of the repository's files from git's objects, which no sandbox mount hides
    # (`git log -p`, `git show HEAD`): "always", unless a `history_quiet` option is given (`--stat`); "patch":
    # with a `history_patch` option only. Read as every file below the working directory unless `-- PATH…`
    # or only `REV:PATH` operands name what it prints (`Walk.history_read`)
    history: str = ""
    history_patch: frozenset = frozenset()
    history_quiet: frozenset = frozenset()
    history_verbs: frozenset = frozenset()  # only with one of these first operands (`git worktree add`)
    history_lists_trees: bool = False  # a `REV:PATH` naming a tree is listed, not printed (`git show HEAD:src`)
    # with no revision named it prints only what the work tree, the index and HEAD hold (`git diff`)
    history_worktree: bool = False
    read_patterns: frozenset = frozenset()
    recursive: frozenset = frozenset()
    read_only_names: frozenset = frozenset()  # options whose glob limits the base names read below (`--include`)
    # subcommand -> this row with its own `commands`, `writes`, `values`, `read` and `reads` (`git clone -u`,
    # `git log --output`, `git log -S TEXT`; none for `git add`); a subcommand not named keeps every command
    # and write option (it may be an alias of any)
    subcommands: Mapping = field(default_factory=dict, hash=False, compare=False)
    runs_rest_after: str = ""  # in a subcommand's row: the word after which the rest is a command line
    # operand prefixes after which the operand is a command line it runs (socat's `EXEC:cmd`, `SYSTEM:cmd`)
    command_operands: tuple = ()
    # (`git submodule foreach CMD…`), or with `runs_rest_as_argv` a command run as given (`git bisect run CMD…`)
    runs_rest_as_argv: bool = False
    # in a subcommand's row: it writes settings (`git config KEY VALUE`), each checked as `config` options' are;
    # {"reads": options or words after which it only reads, "opaque": …, "values": options taking a value,
    # "verbs": a first operand that is not the key (`git config set KEY VALUE`)}
    settings: Mapping = field(default_factory=dict, hash=False, compare=False)

    @property
    def runs_commands(self) -> bool:
        """Whether some option of it runs a command or code (`find -exec`, `tar --to-command`, `git -c`)."""
        return bool(self.exec or self.commands or self.opaque or self.config)

    @property
    def writes_named_files_only(self) -> bool:
        """Whether all it knows of the program is which operands it writes (`cp`, `rm`, `touch`): a command
        of plain literal words then names every file it writes, and is no hazard."""
        return not (
            self.hazard_always
            or self.hazard
            or self.writes
            or self.chdir
            or self.commands
            or self.opaque
            or self.exec
            or self.config
            or self.script
            or self.program_files
            or self.subcommands
            or self.command_operands
            or self.remote_command
            or self.leading
            or self.safe_script
            or self.global_only
        )

    def runs_commands_after(self, skipped: frozenset) -> bool:
        """`runs_commands`, its `skipped` options aside (git's own options, after the subcommand)."""
        return bool(
            self.exec
            or self.commands - skipped
            or self.opaque - skipped
            or self.config - skipped
            or self.runs_rest_after
        )

    @property
    def reads_files(self) -> bool:
        """Whether it reads files its words name (`cat F`, `dd if=F`, `tar -c F`)."""
        return bool(self.read or self.read_assignments or self.creates or self.reads)

    @property
    def writes_files(self) -> bool:
        """Whether it writes files its words name (`cp A B`, `sort -o F`, `tar -x`, `find -delete`)."""
        return bool(
            self.written
            or self.written_assignments
            or self.into
            or self.writes
            or self.extracts
            or self.creates
            or self.removes_below
            or self.tree
        )

    @cached_property  # asked per segment with an expansion word (command classes): answered once per row
    def reads_only(self) -> bool:
        """Whether all it knows of the program is which operands it reads (`cat`, `head -n N`)."""
        return (
            bool(self.read)
            and replace(
                self,
                read="",
                read_patterns=frozenset(),
                recursive=frozenset(),
                read_assignments=frozenset(),
                read_only_names=frozenset(),
                values=frozenset(),
            )
            == _NOTHING_KNOWN
        )

    @property
    def options_matter(self) -> bool:
        """Whether some option of it runs code, writes, reads a program or changes directory: a word
        that may expand to an option may then hide one."""
        return bool(
            self.runs_commands
            or self.hazard
            or self.writes
            or self.chdir
            or self.script
            or self.program_files
            or self.into
        )

    def safe(self, script: str) -> bool:
        """Whether `script` matches `safe_script` from its start."""
        return compiled(self.safe_script).match(script) is not None


_NOTHING_KNOWN = Program()


@record(slots=False)
class Interpreter:
    """A program that runs code in its own language (python, node, perl, awk, …)."""

    options: OptionSpec
    language: str
    code: frozenset = frozenset()  # options whose value is program text (`-c`, `-e`, `--eval`)
    code_operand: bool = False  # the first operand is program text when no program option is given (awk)
    program: frozenset = frozenset()  # options whose value is a program file (`awk -f`): a program is given
    ends: frozenset = frozenset()  # options after which the rest are operands (`python -m MODULE ARGS`)
    stdin: frozenset = frozenset()  # options that make it read code from stdin (`python -i`)
    info: frozenset = frozenset()  # options after which no program is read (`--version`)
    # its operands after the program are files it reads, but `NAME=VALUE` assignments and `-` (awk)
    reads_operands: bool = False
    hazard: frozenset = frozenset()  # options that write files or load code (`perl -i`, `awk -l`)
    code_subcommands: frozenset = frozenset()  # first operands that read code from the line or stdin (`deno eval`)
    stdin_subcommands: frozenset = (
        frozenset()
    )  # first operands that read the program from stdin given `-` (`deno run -`)
    bare_reads_stdin: bool = True  # with no program given, it reads one from stdin
    attached_long: bool = False  # any `--name=value` is an option
    single_dash_long: bool = False  # `-name` is the long option `--name` (sqlite3)
    code_operands_from: int | None = None  # operands from this one on are code (`sqlite3 DB SQL…`: 1)
    operands_not_program: bool = False  # its operands name no program file (`psql DB`): without code it reads stdin
    unclear_optional: bool = False  # an attached optional value may end before the word does (`perl -0e`)
    permutes: bool = False  # options may follow operands (`psql DB -c SQL`)
    unsafe_code: str = ""  # a regular expression: code is opaque where it is found ("": all code is)
    writing_code: str = ""  # a regular expression: code where it is found may write a file
    # modules run with the `ends` option (`python -m venv DIR`) that write every file below each operand
    tree_writing_modules: frozenset = frozenset()


class _Rows(Mapping):
    """name -> record, each made from its JSON row when first asked for: a hook analyses one command,
    which names one or two of the ~130 programs, wrappers and interpreters, and making them all cost ~2 ms
    of it (when there were ~60)."""

    _made: dict  # name -> the record made

    def __init__(self, rows: dict, make) -> None:
        self._rows, self._make, self._made = rows, make, {}

    def __getitem__(self, name: str):
        found = self._made.get(name)
        if found is None:
            found = self._made[name] = self._make(self._rows[name])  # KeyError: not a known name
        return found

    def get(self, name, default=None):  # Mapping's own goes through an exception for an unknown name
        return self[name] if name in self._rows else default

    def __contains__(self, name) -> bool:
        return name in self._rows

    def __iter__(self):
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)


@record(slots=False)
class Knowledge:
    wrappers: Mapping  # name -> Wrapper
    programs: Mapping  # name -> Program
    opaque_builtins: dict
    chdir_programs: frozenset
    assigning_programs: frozenset
    shells: frozenset
    transparent_shell_flags: frozenset  # a shell given only these one-letter options and `-c` is transparent
    trusted_dirs: frozenset
    harmless_files: frozenset
    env_hazard_prefixes: tuple
    env_hazard_names: frozenset
    env_command_names: frozenset  # variables whose value a program runs as a command line (`PAGER`)
    # variables whose value names a file the program writes: "absolute" (`GIT_TRACE=/x`: `1` means stderr) or "any"
    env_written: Mapping
    env_code_names: frozenset  # variables whose value is code or options the rules do not read (`LUA_INIT`)
    env_code_prefixes: tuple
    interpreters: Mapping  # name -> Interpreter
    variable_names: Mapping  # builtin -> options whose value names a variable ("*": every argument does)

    def interpreter(self, name: str) -> Interpreter | None:
        """The interpreter `name` runs: by its name, or with a version after it (`python3.11`, `lua5.4`)."""
        found = self.interpreters.get(name)
        if found is None and (name[-1:].isdigit() or name[-2:-1].isdigit()):
            versioned = compiled(r"([A-Za-z]+?)[0-9][0-9.]*[mtd]?").fullmatch(
                name
            )  # python3.13t, python3.6m, python3.12d
            if versioned is not None:
                found = self.interpreters.get(versioned[1])
        return found

    def env_hazard(self, name: str) -> bool:
        """An environment variable that changes what a command runs or reads as code."""
        return name in self.env_hazard_names or name.startswith(self.env_hazard_prefixes) or self.env_code(name)

    def env_code(self, name: str) -> bool:
        """An environment variable whose value is code or options a program reads and the rules do not."""
        return name in self.env_code_names or name.startswith(self.env_code_prefixes)


def _options(row: dict) -> OptionSpec:
    return OptionSpec(
        row.get("flags", ""),
        row.get("values", ""),
        row.get("optional", ""),
        frozenset(row.get("long_flags", ())),
        frozenset(row.get("long_values", ())),
        frozenset(row.get("long_optional", ())),
    )


def _wrapper(row: dict) -> Wrapper:
    spec = _options(row)
    sets = {
        key: frozenset(row.get(key, ()))
        for key in (
            "no_run",
            "stdin_shell",
            "opaque",
            "string",
            "no_join",
            "stop_at",
            "writes",
            "chdir",
            "replaces",
            "subcommands",
            "harmless_subcommands",
            "command_options",
        )
    }
    return Wrapper(
        spec,
        positional=row.get("positional", 0),
        stdin_shell_always=row.get("stdin_shell_always", False),
        opaque_always=row.get("opaque_always", ""),
        joins=row.get("joins", False),
        assignments=row.get("assignments", False),
        default=row.get("default", ""),
        numeric_option=row.get("numeric_option", False),
        dash_is_flag=row.get("dash_is_flag", False),
        coproc=row.get("coproc", False),
        placeholders=tuple(row.get("placeholders", ())),
        appends=row.get("appends", False),
        runner=row.get("runner", False),
        each_string=row.get("each_string", False),
        permutes=row.get("permutes", False),
        user_shell=row.get("user_shell", False),
        operands_written=row.get("operands_written", False),
        transparent=row.get("transparent", False),
        transparent_options=frozenset(row["transparent_options"]) if "transparent_options" in row else None,
        **sets,
    )


def _program(row: dict) -> Program:
    base = _program_row(row)
    if "subcommands" not in row:
        return base
    plain: list = []  # the one record every plain subcommand shares, made when first asked for

    def subcommand(own: dict | None) -> Program:
        if own is None:
            if not plain:
                plain.append(replace(base, commands=frozenset(), writes=frozenset(), tree="", history=""))
            return plain[0]
        config = frozenset(own.get("config", ()))  # `git clone -c K=V`: clone's own, not git's skipped one
        return replace(
            base,
            commands=frozenset(own.get("commands", ())),
            writes=frozenset(own.get("writes", ())),
            opaque=base.opaque | frozenset(own.get("opaque", ())),
            config=base.config | config,
            global_only=base.global_only - config,
            tree=own.get("tree", ""),
            tree_options=frozenset(own.get("tree_options", ())),
            tree_keeping=frozenset(own.get("tree_keeping", ())),
            runs_rest_after=own.get("runs", ""),
            values=base.values | frozenset(own.get("values", ())),
            runs_rest_as_argv=own.get("argv", False),
            written=own.get("written", base.written),
            written_recursive=own.get("written_recursive", base.written_recursive),
            read=own.get("read", base.read),
            recursive=base.recursive | frozenset(own.get("recursive", ())),
            history=own.get("history", ""),
            history_patch=frozenset(own.get("history_patch", base.history_patch)),
            history_verbs=frozenset(own.get("history_verbs", ())),
            history_lists_trees=own.get("history_lists_trees", False),
            history_worktree=own.get("history_worktree", False),
            history_quiet=base.history_quiet | frozenset(own.get("history_quiet", ())),
            reads=base.reads | frozenset(own.get("reads", ())),
            read_patterns=base.read_patterns | frozenset(own.get("read_patterns", ())),
            settings={key: frozenset(words) for key, words in own.get("settings", {}).items()},
        )

    rows = dict.fromkeys(row.get("plain_subcommands", ()))
    rows.update(row["subcommands"])
    # made one by one when a line names them: `git status` needs one of git's ~40 (~2 ms of a hook made all)
    return replace(base, subcommands=_Rows(rows, subcommand))


def _program_row(row: dict) -> Program:
    return Program(
        exec=frozenset(row.get("exec", ())),
        hazard=frozenset(row.get("hazard", ())),
        hazard_always=row.get("hazard_always", ""),
        writes=frozenset(row.get("writes", ())),
        reads=frozenset(row.get("reads", ())),
        reads_at={option: form for form, options in row.get("reads_at", {}).items() for option in options},
        chdir=frozenset(row.get("chdir", ())),
        global_only=frozenset(row.get("global", ())),
        script=frozenset(row.get("script", ())),
        first_operand_script=row.get("first_operand", False),
        safe_script=row.get("safe_script") or "",
        values=frozenset(row.get("values", ())),
        opaque_script=row.get("opaque_script", ""),
        commands=frozenset(row.get("commands", ())),
        opaque=frozenset(row.get("opaque", ())),
        program_files=frozenset(row.get("program_files", ())),
        command_operands=tuple(row.get("command_operands", ())),
        config=frozenset(row.get("config", ())),
        config_from_env=frozenset(row.get("config_from_env", ())),
        config_commands=tuple(row.get("config_commands", ())),
        config_harmless=tuple(row.get("config_harmless", ())),
        options_after_dashes=row.get("options_after_dashes", False),
        remote_command=_options(row["remote_command"]) if "remote_command" in row else None,
        written=row.get("written", ""),
        written_with=frozenset(row.get("written_with", ())),
        moves=row.get("moves", False),
        into=frozenset(row.get("into", ())),
        written_assignments=frozenset(row.get("written_assignments", ())),
        written_recursive=row.get("written_recursive", False),
        removes_below=frozenset(row.get("removes_below", ())),
        tree=row.get("tree", ""),
        clusters=not row.get("whole_word_options", False),
        tree_options=frozenset(row.get("tree_options", ())),
        tree_keeping=frozenset(row.get("tree_keeping", ())),
        archive=frozenset(row.get("archive", ())),
        creates=frozenset(row.get("creates", ())),
        extracts=frozenset(row.get("extracts", ())),
        lists=frozenset(row.get("lists", ())),
        members_anywhere=frozenset(row.get("members_anywhere", ())),
        bundled_first=row.get("bundled_first", False),
        archive_first=row.get("archive_first", False),
        read=row.get("read", ""),
        read_patterns=frozenset(row.get("read_patterns", ())),
        read_assignments=frozenset(row.get("read_assignments", ())),
        recursive=frozenset(row.get("recursive", ())),
        read_only_names=frozenset(row.get("read_only_names", ())),
        history=row.get("history", ""),
        history_patch=frozenset(row.get("history_patch", ())),
        history_quiet=frozenset(row.get("history_quiet", ())),
        leading=_options(row["options_before_subcommand"]) if "options_before_subcommand" in row else None,
        transparent_leading=frozenset(row.get("transparent_before_subcommand", ())),
    )


def _interpreter(row: dict) -> Interpreter:
    sets = {
        key: frozenset(row.get(key, ()))
        for key in (
            "code",
            "program",
            "ends",
            "stdin",
            "info",
            "hazard",
            "code_subcommands",
            "stdin_subcommands",
            "tree_writing_modules",
        )
    }
    return Interpreter(
        _options(row),
        row["language"],
        code_operand=row.get("code_operand", False),
        bare_reads_stdin=row.get("bare_reads_stdin", True),
        attached_long=row.get("attached_long", False),
        single_dash_long=row.get("single_dash_long", False),
        code_operands_from=row.get("code_operands_from"),
        operands_not_program=row.get("operands_not_program", False),
        unclear_optional=row.get("unclear_optional", False),
        permutes=row.get("permutes", False),
        unsafe_code=row.get("unsafe_code", ""),
        writing_code=row.get("writing_code", ""),
        reads_operands=row.get("reads_operands", False),
        **sets,
    )


def _by_name(rows: dict) -> dict:
    """Rows by name, each also under its `aliases` (`nodejs` is `node`)."""
    named = {}
    for name, row in rows.items():
        if not name.startswith("$"):
            for each in (name, *row.get("aliases", ())):
                named[each] = row
    return named


@once
def knowledge() -> Knowledge:
    """The shell knowledge of the shipped catalog, read once per process."""
    root = os.path.join(package_path("dshc.catalogs"), "shell")
    with open(os.path.join(root, "wrappers.json"), encoding="utf-8") as handle:
        wrappers = json_io.loads(handle.read())
    with open(os.path.join(root, "commands.json"), encoding="utf-8") as handle:
        commands = json_io.loads(handle.read())
    return Knowledge(
        wrappers=_Rows({name: row for name, row in wrappers.items() if not name.startswith("$")}, _wrapper),
        programs=_Rows(_by_name(commands["programs"]), _program),  # `cc`, `clang` are `gcc`'s row
        opaque_builtins=dict(commands["opaque_builtins"]),
        chdir_programs=frozenset(commands["chdir_programs"]),
        assigning_programs=frozenset(commands["assigning_programs"]),
        shells=frozenset(commands["shells"]),
        transparent_shell_flags=frozenset(commands["transparent_shell_flags"]),
        trusted_dirs=frozenset(commands["trusted_dirs"]),
        harmless_files=frozenset(commands["harmless_files"]),
        env_hazard_prefixes=tuple(commands["env_hazard_prefixes"]),
        env_hazard_names=frozenset(commands["env_hazard_names"]),
        env_command_names=frozenset(commands["env_command_names"]),
        env_written=dict(commands["env_written"]),
        env_code_names=frozenset(commands["env_code_names"]),
        env_code_prefixes=tuple(commands["env_code_prefixes"]),
        interpreters=_Rows(_by_name(commands["interpreters"]), _interpreter),
        variable_names={name: frozenset(options) for name, options in commands["variable_names"].items()},
    )
