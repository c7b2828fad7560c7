"""Interpreters (python, node, perl, awk, psql …): code written in the command or read from stdin is
opaque; a program file is read, as any program's code is."""

from __future__ import annotations

from ..patterns import compiled
from ..shell_data import Interpreter
from .options import _getopt
from .records import _Opaque, _WalkState
from .words import _ASSIGNMENT, _may_be_option, _names_stdin, _Word


class _Interpreters(_WalkState):
    """The walker's reading of interpreters (mixed into `walk._Walker`)."""

    def interpreter(self, name: str, row: Interpreter, words, argv, order, hazard: str, literal) -> None:
        """python, node, perl, awk, …: code written in the command (`-c CODE`, an awk program) or read
        from stdin may run any program and the rules cannot read it: the command is opaque, as
        `bash -c "$X"` is. A program file it runs is its own code, as any program's is."""
        i, opts = _getopt(words, 1, row.options, name, row.ends, row.attached_long, row.single_dash_long)
        rest = words[i:]
        if row.permutes:  # `psql DB -c SQL`: options may follow operands
            rest = []
            while i < len(words):
                word = words[i]
                if word.dynamic or word.unsafe or word.optionable:
                    raise _Opaque(f"`{name}` argument {_may_be_option(word)}")
                if word.text == "--":
                    rest += words[i + 1 :]
                    break
                if word.text.startswith("-") and word.text != "-":
                    i, more = _getopt(words, i, row.options, name, row.ends, row.attached_long, row.single_dash_long)
                    opts += more
                else:
                    rest.append(word)
                    i += 1
        names = {option for option, _ in opts}
        letters = {option[1] for option in row.code if len(option) == 2}
        codes = []
        for option, value in opts:
            if option in row.code:
                codes.append((option, value or ""))
            elif (
                row.unclear_optional
                and value
                and len(option) == 2
                and option[1] in row.options.optional
                and letters & set(value)
            ):
                # `perl -0e CODE`: where the attached value ends is the program's to say
                raise _Opaque(f"`{name} {option}{value}` may hold a code option")
        files = [value for option, value in opts if option in row.program]
        given = bool(codes) or bool(files) or bool(names & row.ends)
        module = next((value for option, value in opts if option in row.ends), None)
        if module in row.tree_writing_modules:  # `python -m venv DIR`: DIR and every file below it
            for word in rest:
                if not word.text.startswith("-") or word.dynamic:
                    self.written_below(word, order)
        if row.code_operands_from is not None:  # `sqlite3 DB SQL…`: operands from there on are code
            for word in rest[row.code_operands_from :]:
                if word.dynamic or word.unsafe:
                    raise _Opaque(f"`{name}` code is an expansion")
                codes.append(("an operand", word.text))
                given = True
        if (
            rest
            and (rest[0].dynamic or rest[0].unsafe or rest[0].optionable)
            and not (given and row.code_operands_from is None)
        ):
            raise _Opaque(f"`{name}` argument {_may_be_option(rest[0])}")  # it may be `-c`
        if not given and rest and row.code_operands_from is None and not row.operands_not_program:
            if row.code_operand:
                codes.append(("program", rest[0].text))
                given = True
                rest = rest[1:]  # the operands after the program
            else:
                files.append(rest[0].text)
        if any(value and (value == "-" or _names_stdin(value)) for value in files):
            raise _Opaque(f"`{name}` reads its {row.language} program from stdin")
        for option, code in codes:
            if not row.unsafe_code or compiled(row.unsafe_code).search(code):
                raise _Opaque(
                    f"`{name}` runs {row.language} code written in the command (`{option}`), "
                    "which the rules cannot read"
                )
            if row.writing_code and compiled(row.writing_code).search(code):
                hazard = hazard or f"`{name}` program may write a file"
                # (`print > "f"`): a file the program names, which the rules do not read: any file
                self.written_anywhere(f"the `{name}` program may write a file it names", order)
        reading = names & row.stdin
        if reading:
            raise _Opaque(f"`{name} {min(reading)}` reads {row.language} code from stdin")
        if not given and not names & row.info:
            if rest and rest[0].text in row.code_subcommands:
                raise _Opaque(f"`{name} {rest[0].text}` runs code the rules cannot read")
            if row.operands_not_program:  # `psql DB`, `sqlite3 DB`: no code given, so it reads stdin
                raise _Opaque(
                    f"`{name}` reads {row.language} commands from its terminal or stdin (none are given here)"
                )
            if rest and rest[0].text in row.stdin_subcommands and any(w.text == "-" for w in rest[1:]):
                raise _Opaque(f"`{name} {rest[0].text} -` reads its {row.language} program from stdin")
            if rest[:1] and rest[0].text == "-" or not rest and row.bare_reads_stdin:
                raise _Opaque(f"`{name}` reads its {row.language} program from stdin")
        for option in sorted(names & row.hazard):
            hazard = hazard or f"`{name} {option}` writes files or loads code"
        if files:  # the program file is read (a syntax error prints its lines): `python3 .env`
            self.read_files([_Word(text) for text in files], False, order)
        if row.reads_operands:  # `awk PROGRAM FILE…`; `x=1` is an assignment
            self.read_files([word for word in rest if word.dynamic or not _ASSIGNMENT.match(word.text)], False, order)
        self.emit(order, argv, hazard=hazard, literal=literal)
