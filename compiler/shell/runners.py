"""Commands that run other commands: wrappers (`sudo`, `timeout`, `xargs`, `uv run`), `su`, `script`, and
shells with `-c`; the command they run is read as its own segment."""

from __future__ import annotations

from .files import _file_shape
from .options import _getopt
from .records import _Opaque, _WalkState
from .words import _filled, _is_name, _may_be_option, _names_stdin, _program_name, _unknown, _Word


class _Runners(_WalkState):
    """The walker's reading of wrappers and shells (mixed into `walk._Walker`)."""

    def wrapper(self, name, wrapper, words, argv, depth, order, hazard, literal) -> bool:
        """Emit the wrapper's own segment and analyse the wrapped command; False: it runs nothing (or, for
        a wrapper only through a subcommand, `uv run`, it is another subcommand: an ordinary program)."""
        start = 1
        before: list[tuple[str, str | None]] = []  # the program's own options, before its subcommand
        if wrapper.subcommands:
            if not any(w.text in wrapper.subcommands for w in words[1:]):
                return False
            if words[1].text in wrapper.subcommands:  # `cmake -E CMD…`: a subcommand that looks like an option
                start, before = 1, []
            else:
                start, before = _getopt(words, 1, wrapper.options, name)  # the program's own options first
            if start >= len(words) or words[start].text not in wrapper.subcommands:
                return False
            start += 1
        if wrapper.opaque_always:
            raise _Opaque(wrapper.opaque_always)
        if wrapper.user_shell:
            self.user_shell(name, wrapper, words, argv, depth, order, hazard, literal)
            return True
        if wrapper.harmless_subcommands:
            at, _ = _getopt(words, 1, wrapper.options, name)
            if (
                at < len(words)
                and words[at].text in wrapper.harmless_subcommands
                and not any(w.dynamic or w.text.endswith(";") for w in words[at:])
            ):
                return False  # `tmux ls`: an ordinary program
            raise _Opaque(
                f"`{name}` runs commands or types into a shell through its commands (only "
                f"{', '.join(sorted(wrapper.harmless_subcommands))} are read)"
            )
        if wrapper.coproc:
            rest = words[1:]
            if any(w.text in ("{", "}", "(", ")") for w in rest):
                raise _Opaque("coproc with a compound command is not understood")
            if not rest:
                return False
            self.emit(order, argv, hazard=hazard, literal=literal, wraps=1)
            self.simple(rest, depth, (*order, 1))
            return True
        i = start
        if wrapper.numeric_option and i < len(words) and words[i].text[:1] == "-" and words[i].text[1:].isdigit():
            i += 1
        i, opts = _getopt(words, i, wrapper.options, name)
        opts = before + opts
        names = {o for o, _ in opts}
        if names & wrapper.no_run:
            return False
        if names & wrapper.opaque:
            raise _Opaque(f"`{name}` option hides what runs")
        for option, value in opts:
            if option in wrapper.writes and value:
                self.files.append(("write", value, order, ()))
            if option in wrapper.chdir:
                self.changes_directory()
        strings = [value for option, value in opts if option in wrapper.string]
        if wrapper.operands_written:
            return self.writing_wrapper(name, wrapper, words, i, strings, argv, depth, order, hazard, literal)
        if wrapper.dash_is_flag and i < len(words) and words[i].text == "-":
            i += 1
        assigned = False
        if wrapper.assignments:
            while i < len(words) and "=" in words[i].text and _is_name(words[i].text.partition("=")[0]):
                assigned = True
                if words[i].dynamic:
                    raise _Opaque(f"`{name}` assignment is an expansion")
                variable, _, value = words[i].text.partition("=")
                if self.data.env_code(variable):
                    raise _Opaque(
                        f"`{name}` sets `{variable}`, which hands the program code or options the rules cannot read"
                    )
                if self.data.env_hazard(variable):
                    hazard = hazard or f"`{name}` sets `{variable}`, which changes what runs"
                if variable in self.data.env_command_names:
                    self.command_line_value(variable, _Word(value), depth, (*order, i))
                i += 1
        for _ in range(wrapper.positional):
            if i >= len(words):
                return False
            if _unknown(words[i]):  # a pattern may be several words: the command moves
                raise _Opaque(f"`{name}` argument `{words[i].text}` is an expansion or a pattern of file names")
            i += 1
        if wrapper.positional and i < len(words) and words[i].text == "--":
            i += 1  # `aws-vault exec PROFILE -- CMD`: read as the command it ends the options of
        if wrapper.positional and (wrapper.permutes or wrapper.string and not strings):
            # `flock FILE -c CMD`, `kubectl exec POD -c CONTAINER -- CMD`: options may follow the positional
            i, late = _getopt(words, i, wrapper.options, name)
            late_names = {o for o, _ in late}
            if late_names & wrapper.no_run:
                return False
            if late_names & wrapper.opaque:
                raise _Opaque(f"`{name}` option hides what runs")
            strings += [value for option, value in late if option in wrapper.string]
            names |= late_names
        rest = words[i:]
        if wrapper.stop_at:
            cut = next((k for k, w in enumerate(rest) if w.text in wrapper.stop_at), len(rest))
            rest = rest[:cut]
        # `xargs -I{} sh -c '{}'`: what replaces the string comes from input, so a word holding it is unknown
        holes = [*wrapper.placeholders, *((value or "{}") for option, value in opts if option in wrapper.replaces)]
        filled = _filled(rest, holes)
        if (
            wrapper.appends
            and not names & wrapper.replaces
            and filled == rest
            and rest
            and self._runs_its_arguments(rest)
        ):
            # no replacement string: input is appended as arguments, which may be options (`-exec rm x ;`)
            raise _Opaque(f"`{name}` appends input to `{rest[0].text}`, whose arguments can make it run commands")
        if wrapper.appends and not wrapper.joins and not names & wrapper.replaces and rest:
            # its input is appended as arguments: one more word no rule can read (`xargs cp x` copies x over
            # whatever file the input names; `find . | xargs cat` reads every file found). (`parallel`
            # joins its arguments, listed after `:::`, into a command line, read as one.)
            filled = [*filled, _Word("<input>", dynamic=True, optionable=True)]
        rest = filled
        if wrapper.each_string:  # `hyperfine 'make' 'ls'`: each word is a command line
            if any(w.dynamic or w.unsafe for w in rest):
                raise _Opaque(f"`{name}` runs a command line that is an expansion")
            strings += [w.text for w in rest]
            if not strings:
                return False
        if strings:
            self.emit(order, argv, hazard=hazard, literal=literal, wraps=len(argv))
            for string in strings:
                self.nested_shell(string, depth, (*order, len(argv)))
            return True
        if not rest:
            if wrapper.stdin_shell_always or names & wrapper.stdin_shell:
                raise _Opaque("the shell reads its program from stdin")
            if not wrapper.default:
                return False
            rest = [_Word(wrapper.default)]
        transparent = (
            wrapper.transparent
            and not hazard
            and not assigned
            and (wrapper.transparent_options is None or names <= wrapper.transparent_options)
        )
        self.emit(order, argv, hazard=hazard, literal=literal, wraps=i, deny_only=transparent)
        self.runners += wrapper.runner
        try:
            if wrapper.joins and not names & wrapper.no_join:
                if any(w.dynamic for w in rest):
                    raise _Opaque(f"`{name}` joins an expansion into a shell command")
                self.nested_shell(" ".join(w.text for w in rest), depth, (*order, i))
            else:
                self.simple(rest, depth, (*order, i))
        finally:
            self.runners -= wrapper.runner
        return True

    def user_shell(self, name, wrapper, words, argv, depth, order, hazard, literal) -> None:
        """`su [options] [-] [USER [ARG…]]`: options anywhere before `--`, the first other word is the user,
        the rest are arguments to the user's shell (`su root -c CMD`, `su root -- -c CMD`); with one of
        `command_options` (`runuser -u USER CMD…`) the rest are a command run directly."""
        strings, rest, user, i, n = [], [], False, 1, len(words)
        names: set = set()
        while i < n:
            word = words[i]
            if _unknown(word):
                raise _Opaque(f"`{name}` argument `{word.text}` is an expansion or a pattern of file names")
            if word.text == "-":
                i += 1
            elif word.text.startswith("-") and not (names & wrapper.command_options and user):
                i, opts = _getopt(words, i, wrapper.options, name)
                names |= {option for option, _ in opts}
                strings += [value for option, value in opts if option in wrapper.string]
                if words[i - 1].text == "--":
                    rest = words[i:]
                    break
            elif names & wrapper.command_options or user:
                rest = words[i:]
                break
            else:
                user, i = True, i + 1
        if names & wrapper.no_run:
            self.emit(order, argv, hazard=hazard, literal=literal)
            return
        if names & wrapper.command_options:  # `runuser -u USER [--] CMD…`: run directly
            if not rest:
                raise _Opaque(f"`{name}` runs a shell reading its program from stdin")
            self.emit(order, argv, hazard=hazard, literal=literal, wraps=len(argv) - len(rest))
            self.simple(rest, depth, (*order, len(argv) - len(rest)))
            return
        if not user and rest:  # `su -- root …`
            rest = rest[1:]
        self.emit(order, argv, hazard=hazard, literal=literal, wraps=len(argv))
        for string in strings:
            self.nested_shell(string, depth, (*order, len(argv)))
        if not strings:  # the shell gets the arguments: `su root -- -c CMD`, `su root script`
            self.shell([_Word("sh"), *rest], ["sh", *(w.text for w in rest)], depth, (*order, len(argv)), "")

    def _runs_its_arguments(self, command: list[_Word]) -> bool:
        """Whether arguments appended to `command` can make the program it names run a command or write a file
        no rule can place: a shell, an interpreter, a wrapper, or a program with options that run code or
        write (after a known subcommand, that subcommand's: `xargs git add`). An expansion may be any of them."""
        head = command[0]
        if head.dynamic or head.unsafe:
            return True
        data = self.data
        name = _program_name(head.text, data)[0]
        row = data.programs.get(name)
        if row is not None and len(command) > 1 and not command[1].dynamic and command[1].text in row.subcommands:
            own = row.subcommands[command[1].text]
            return own.runs_commands_after(row.global_only) or bool(own.writes)
        return (
            name in data.shells
            or name in data.wrappers
            or name in data.opaque_builtins
            or data.interpreter(name) is not None
            or row is not None
            and (row.runs_commands or bool(row.writes) or row.leading is not None)
        )

    def writing_wrapper(
        self,
        name: str,
        wrapper,
        words: list[_Word],
        i: int,
        strings: list,
        argv,
        depth: int,
        order,
        hazard: str,
        literal,
    ) -> bool:
        """`script [-c CMD] [FILE]`: each operand (options may follow them) is a file it writes; it runs its
        `-c` command line, else a shell that reads its commands from stdin, which no rule can read."""
        while i < len(words):
            if words[i].text.startswith("-") and words[i].text != "-":
                i, late = _getopt(words, i, wrapper.options, name)
                strings += [value for option, value in late if option in wrapper.string]
                for option, value in late:
                    if option in wrapper.writes and value:
                        self.files.append(("write", value, order, ()))
                continue
            word = words[i]
            self.files.append(("write", word.text, order, _file_shape(word) if _unknown(word) else ()))
            i += 1
        if not strings:
            raise _Opaque(f"`{name}` without a command runs a shell that reads its commands from stdin")
        self.emit(order, argv, hazard=hazard, literal=literal, wraps=len(argv))
        for string in strings:
            self.nested_shell(string, depth, (*order, len(argv)))
        return True

    def shell(self, words, argv, depth, order, hazard) -> None:
        """`sh`/`bash`/…: splice `-c STRING`; reading the program from stdin is opaque."""
        n, i, has_c, reads_stdin = len(words), 1, False, False
        plain = True  # only `-c` and transparent one-letter options so far
        while i < n:
            word = words[i]
            text = word.text
            if word.dynamic or word.optionable:
                if has_c:
                    break
                raise _Opaque(f"shell argument {_may_be_option(word)} or the script")
            if text in ("--", "-"):
                i += 1
                plain = False
                break
            if text.startswith("--"):
                plain = False
                if text in ("--version", "--help"):
                    self.emit(order, argv, hazard=hazard)
                    return
                i += 2 if text in ("--rcfile", "--init-file") else 1
                if text in ("--rcfile", "--init-file"):
                    raise _Opaque("an rc file runs code")
                continue
            if len(text) > 1 and text[0] in "-+":
                letters = text[1:]
                plain = plain and text[0] == "-" and set(letters) <= self.data.transparent_shell_flags
                has_c |= text[0] == "-" and "c" in letters
                reads_stdin |= text[0] == "-" and "s" in letters
                i += 1 + letters.count("o") + letters.count("O")
                continue
            break
        if has_c:
            if i >= n:
                raise _Opaque("shell -c without a command string")
            string = words[i]
            if string.dynamic or string.unsafe:
                raise _Opaque("shell -c string is not a literal")
            # `bash -c 'ls'` runs what `ls` runs: the allow of `ls` covers it, a deny of `bash *` still applies
            self.emit(order, argv, hazard=hazard, wraps=len(argv), deny_only=plain and not hazard)
            self.nested_shell(string.text, depth, (*order, i))
            return
        if reads_stdin or i >= n or _names_stdin(words[i].text):
            raise _Opaque("the shell reads its program from stdin")
        self.read_files([words[i]], False, order)  # the script is read (`sh -x .env` echoes its lines)
        self.emit(order, argv, hazard=hazard or "a shell runs a script file")
