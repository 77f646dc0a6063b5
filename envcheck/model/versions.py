"""Version types for things that are not Python packages."""

from __future__ import annotations

from packaging.version import Version


class DriverVersion(Version):
    """An NVIDIA driver version: compares like a Version, prints as written (530.30.02, not
    PEP 440's normalised 530.30.2)."""

    def __init__(self, version: str) -> None:
        super().__init__(version)
        self._text = version.strip()

    def __str__(self) -> str:
        return self._text

    def __repr__(self) -> str:
        return f"<DriverVersion({self._text!r})>"

    def __reduce__(self) -> tuple[type[DriverVersion], tuple[str]]:
        # rebuilt from the text as written: packaging's own pickle state (its slots) would
        # drop `_text` (the compiled-matrix cache pickles records holding driver versions)
        return DriverVersion, (self._text,)
