"""Remembered results: `functools.cached_property` and `lru_cache`'s uses here, without functools.

`import functools` imports `collections` (~11 million instructions together, a twentieth of a
hook that decides one call) for what these few lines do: every dshc module a hook loads takes
them from here. What they remember is cheap to make again, so a full `memoised` table is emptied
rather than kept in least-recently-used order (no bookkeeping on the hit path).
Threads may share them: a value is made whole, then stored with one operation, so threads racing
on a first read each make an equal value (`once` hands every caller the first one stored).
"""

from __future__ import annotations

_ABSENT = object()


class cached_property:  # noqa: N801 - named as the functools decorator it stands for
    """`functools.cached_property`: computed on first read, then kept in the instance's __dict__."""

    def __init__(self, function) -> None:
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__

    def __set_name__(self, owner, name: str) -> None:
        self.name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.function(instance)
        return value


def once(function):
    """`functools.lru_cache(maxsize=1)` of a function without arguments: its first result, kept."""
    kept = []

    def remembered():
        if not kept:
            kept.append(function())
        return kept[0]

    remembered.cache_clear = kept.clear
    _named_as(remembered, function)
    return remembered


def memoised(size: int):
    """`functools.lru_cache(maxsize=size)` of a function of one hashable argument."""

    def decorate(function):
        kept: dict = {}

        def remembered(key):
            found = kept.get(key, _ABSENT)
            if found is _ABSENT:
                if len(kept) >= size:
                    kept.clear()
                found = kept[key] = function(key)
            return found

        remembered.cache_clear = kept.clear
        _named_as(remembered, function)
        return remembered

    return decorate


def wraps(wrapped):
    """`functools.wraps`: the wrapper takes the wrapped function's name, docstring and module."""

    def decorate(wrapper):
        return _named_as(wrapper, wrapped)

    return decorate


def _named_as(wrapper, wrapped):
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(wrapper, attribute, getattr(wrapped, attribute))
    wrapper.__dict__.update(wrapped.__dict__)
    wrapper.__wrapped__ = wrapped
    return wrapper
