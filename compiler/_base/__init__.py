"""What must stay hand-made: stand-ins for standard-library modules a per-call process cannot afford.

An agent starts `dshc hook` or `dshc decide` once per tool call, so every import counts. These modules do
for dshc what a standard module would, without importing it:

- `frozen.record` is `@dataclass(frozen=True, slots=True)`: importing dataclasses brings `inspect` and its
  imports (~20 ms of every `dshc` process) and compiles each class's methods with `exec` at import;
  `record` compiles them on first use. `typing.dataclass_transform` tells type checkers it is a dataclass.
- `memo.cached_property`, `memo.once`, `memo.memoised` and `memo.wraps` are functools': `import functools`
  imports `collections` (~11 million instructions together, a twentieth of a hook that decides one call).

`common/json_io.py` is the third (the `json` package imports `re` to compile four expressions: ~30 million
instructions, a sixth of a hook); it sits in `common/` because the runtime, which imports nothing of the
compiler's program, uses it too. tests/test_start_up_stand_ins.py holds each to the module it stands in for;
tests/test_start_up_helpers.py holds a hook process to loading none of the modules they avoid.
"""
