"""Sizes as the GNU and procps tools print them: ``df -h``'s ``64M`` and ``1.5G`` (powers of
1024, coreutils human_readable), ``free -h``'s ``503Gi`` / ``21Mi`` (procps-ng 3.3.10 and
newer; older releases print ``G``), Docker's ``62.7GiB`` (go-units BytesSize) and ``0B``."""

from __future__ import annotations

import re

_SIZE = re.compile(
    r"^\s*(?P<number>[0-9]{1,12}(?:[.,][0-9]{1,4})?)\s?(?P<unit>[KMGTPE]?)(?:i?B?)\s*$"
)
_POWERS = {"": 0, "K": 1, "M": 2, "G": 3, "T": 4, "P": 5, "E": 6}


def size_bytes(text: str, plain_unit: int = 1) -> int | None:
    """Bytes of a human-readable size (1024-based), or None when it is not one. A number with
    no unit counts ``plain_unit`` bytes each (1024 for df's and free's default KiB)."""
    found = _SIZE.match(text)
    if found is None:
        return None
    number = float(found["number"].replace(",", "."))
    unit = found["unit"]
    scale = plain_unit if not unit and not text.strip().endswith("B") else 1024 ** _POWERS[unit]
    return int(number * scale)
