"""Typer's value coercion without pydantic for the plain parameters (``str``, ``list[str]``, ``bool``, those
three or ``None``, and an ``int``/``float`` without bounds that kept its default): every ``ngr`` command
takes mostly those.

Typer 0.29 coerces each parameter through a pydantic ``TypeAdapter``, built when the parameter is first
parsed, also for a value that is absent: importing pydantic and building the adapters cost about 0.05 s
of CPU on every start, a tenth of a cold ``ngr search``.  For a ``str`` parameter the adapter returns the
string it was given, for ``list[str]`` a list of them, a ``bool`` flag's value is already a bool
(typer skips the adapter then), an optional one's ``None`` stays ``None`` and an unbounded ``int``'s default
``5`` stays ``5``; :func:`install` makes those parameters do that directly and hands any other value (a
number typed as text, bytes, an environment variable's text for a flag, ...) and any other type
(``Path``, a bounded number, a parser) to typer's own adapter, so every answer and error is typer's.

Typer's hook (``typer.core.build_runtime_param``) is not public: where it is missing (an older or a
newer typer) nothing is changed, and tests/test_cold_cli.py notices pydantic coming back.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["install"]

_PLAIN = (str, list[str], bool, str | None, list[str] | None, bool | None, int, int | None, float, float | None)


def install() -> bool:
    """Make typer's plain parameters coerce without pydantic; False where this typer has no such hook."""
    try:
        from typer import core
        from typer._coercion import RuntimeParam, TypeDescriptor
    except ImportError:  # an older typer: it coerces through click's types, no pydantic
        return False
    found = getattr(core, "build_runtime_param", None)
    if found is None or getattr(found, "_ngr_plain", False):
        return found is not None
    original: Callable[[TypeDescriptor], Any] = found

    @dataclass(frozen=True)
    class PlainParam(RuntimeParam):
        """A str / list[str] / bool parameter: plain values as they are, anything else through typer."""

        descriptor: TypeDescriptor

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if _plain(self.annotation, value, self.parameter_info):
                return list(value) if isinstance(value, (list, tuple)) else value
            return original(self.descriptor)._coerce_value(value, param=param, ctx=ctx)

    def build(descriptor: TypeDescriptor) -> Any:
        info = descriptor.parameter_info
        if descriptor.annotation in _PLAIN and info.parser is None and descriptor.file_annotation is None:
            return PlainParam(parameter_info=info, annotation=descriptor.annotation, descriptor=descriptor)
        return original(descriptor)

    build._ngr_plain = True  # type: ignore[attr-defined]
    core.build_runtime_param = build
    return True


def _plain(annotation: Any, value: Any, info: Any = None) -> bool:
    """Whether typer's adapter would hand ``value`` back unchanged (a list of strings: as a new list)."""
    if value is None:
        return annotation != _strip_none(annotation)
    annotation = _strip_none(annotation)
    if annotation in (int, float):
        unbounded = info is None or (getattr(info, "min", None) is None and getattr(info, "max", None) is None)
        return unbounded and type(value) is annotation
    if annotation is str:
        return type(value) is str
    if annotation is bool:
        return type(value) is bool
    return isinstance(value, (list, tuple)) and all(type(v) is str for v in value)


def _strip_none(annotation: Any) -> Any:
    """``X | None`` → ``X``; anything else as it is."""
    for plain in (str, list[str], bool, int, float):
        if annotation == (plain | None):
            return plain
    return annotation
