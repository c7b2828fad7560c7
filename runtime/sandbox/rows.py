"""Frozen rows of named values for the sandbox planner, without importing dataclasses.

A Claude Code hook plans the sandbox of each shell call it lets run: `dataclasses` (with `inspect`)
was most of what that cost. A row class lists its fields in `FIELDS` (name -> default, `REQUIRED`
for none); instances are built by position or keyword, compare and hash by value, refuse
assignment, and `replace(**changes)` makes a changed copy.
"""

from __future__ import annotations

TYPE_CHECKING = False  # no `import typing` on a hook's path: Self is for type checkers only
if TYPE_CHECKING:
    from typing import Self

REQUIRED = object()


class Row:
    """A subclass annotates each field (`mode: str`) for type checkers; `FIELDS` is what runs."""

    __slots__ = ()
    FIELDS: dict[str, object] = {}

    def __init__(self, *args, **kwargs) -> None:
        names = tuple(self.FIELDS)
        if len(args) > len(names):
            raise TypeError(f"{type(self).__name__}() takes at most {len(names)} values")
        given = dict(zip(names, args))
        for name, value in kwargs.items():
            if name not in self.FIELDS or name in given:
                raise TypeError(f"{type(self).__name__}() got an unexpected or repeated argument {name!r}")
            given[name] = value
        for name, default in self.FIELDS.items():
            value = given.get(name, default)
            if value is REQUIRED:
                raise TypeError(f"{type(self).__name__}() missing the argument {name!r}")
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value) -> None:
        raise AttributeError(f"{type(self).__name__} is frozen")

    def _values(self) -> tuple:
        return tuple(getattr(self, name) for name in self.FIELDS)

    def __eq__(self, other) -> bool:
        return type(other) is type(self) and other._values() == self._values()

    def __hash__(self) -> int:
        return hash((type(self), tuple(tuple(v) if isinstance(v, list) else v for v in self._values())))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{n}={getattr(self, n)!r}' for n in self.FIELDS)})"

    def replace(self, **changes) -> Self:
        return type(self)(**{**dict(zip(self.FIELDS, self._values())), **changes})

    def as_dict(self) -> dict:
        return dict(zip(self.FIELDS, self._values()))
