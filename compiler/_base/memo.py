"""Remembered results: `functools.cached_property` and `lru_cache`'s uses here, without functools.

`import functools` imports `collections` (~11 million instructions together, a twentieth of a
hook that decides one call) for what these few lines do: every dshc module a hook loads takes
them from here. What they remember is cheap to make again, so a full `memoised` table is emptied
rather than kept in least-recently-used order (no bookkeeping on the hit path).
Threads may share them: a value is made whole, then stored with one operation, so threads racing
on a first read each make an equal value (`once` hands every caller the first one stored).
"""

from __future__ import annotations

TYPE_CHECKING = False  # no `import typing` (~4 ms of a hook): its names are for annotations only
if TYPE_CHECKING:
    from collections.abc import Callable, Hashable
    from typing import Any, Generic, Protocol, Self, TypeVar, overload

    T = TypeVar("T")
    T_co = TypeVar("T_co", covariant=True)
    K = TypeVar("K", bound=Hashable)
    K_contra = TypeVar("K_contra", contravariant=True)
    F = TypeVar("F", bound=Callable[..., Any])

    class Once(Protocol[T_co]):
        """What `once` makes: the function, and `cache_clear` to forget its result."""

        def __call__(self) -> T_co: ...
        def cache_clear(self) -> None: ...

    class Memoised(Protocol[K_contra, T_co]):
        """What `memoised` makes: the function of one key, and `cache_clear` to forget its results."""

        def __call__(self, key: K_contra, /) -> T_co: ...
        def cache_clear(self) -> None: ...

else:  # `Generic[T]` is `object` at run time: the class stays a plain one
    T = None
    Generic = {T: object}

_ABSENT: Any = object()  # "not kept" (None can be a result); any value's type, so a result compared with it is one


class cached_property(Generic[T]):  # noqa: N801 - named as the functools decorator it stands for
    """`functools.cached_property`: computed on first read, then kept in the instance's __dict__."""

    def __init__(self, function: Callable[[Any], T]) -> None:
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    if TYPE_CHECKING:  # read off the class, the descriptor itself; off an instance, the value

        @overload
        def __get__(self, instance: None, owner: type | None = None) -> Self: ...
        @overload
        def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object, owner: type | None = None) -> T | Self:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.function(instance)
        return value


def once(function: Callable[[], T]) -> Once[T]:
    """`functools.lru_cache(maxsize=1)` of a function without arguments: its first result, kept."""
    kept: list[T] = []

    def remembered() -> T:
        if not kept:
            kept.append(function())
        return kept[0]

    remembered.cache_clear = kept.clear  # type: ignore[attr-defined]  # a function takes any attribute
    _named_as(remembered, function)
    return remembered  # type: ignore[return-value]  # with its cache_clear set above, a Once


def memoised(size: int) -> Callable[[Callable[[K], T]], Memoised[K, T]]:
    """`functools.lru_cache(maxsize=size)` of a function of one hashable argument."""

    def decorate(function: Callable[[K], T]) -> Memoised[K, T]:
        kept: dict[K, T] = {}

        def remembered(key: K) -> T:
            found = kept.get(key, _ABSENT)
            if found is _ABSENT:
                if len(kept) >= size:
                    kept.clear()
                found = kept[key] = function(key)
            return found

        remembered.cache_clear = kept.clear  # type: ignore[attr-defined]  # a function takes any attribute
        _named_as(remembered, function)
        return remembered  # type: ignore[return-value]  # with its cache_clear set above, a Memoised

    return decorate


def wraps(wrapped: Callable[..., Any]) -> Callable[[F], F]:
    """`functools.wraps`: the wrapper takes the wrapped function's name, docstring and module."""

    def decorate(wrapper: F) -> F:
        return _named_as(wrapper, wrapped)

    return decorate


def _named_as(wrapper, wrapped):
    for attribute in ("__module__", "__name__", "__qualname__", "__doc__"):
        setattr(wrapper, attribute, getattr(wrapped, attribute))
    wrapper.__dict__.update(wrapped.__dict__)
    wrapper.__wrapped__ = wrapped
    return wrapper
