"""C++ names as people read them (``c10::cuda::SetDevice(int)``), by itanium_demangler (pure
Python, no subprocess); a name it cannot read is shown as written."""

from __future__ import annotations


def demangle(name: str) -> str:
    try:
        import itanium_demangler  # type: ignore[import-untyped]
    except ImportError:  # an optional nicety: the mangled name still says what is missing
        return name
    try:
        parsed = itanium_demangler.parse(name)
    except Exception:  # the parser's own errors on names outside its grammar
        return name
    return str(parsed) if parsed is not None else name
