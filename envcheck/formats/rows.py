"""The rows an inventory is made of (inventory.py, deep_rows.py): table and Markdown render them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Tone = Literal["normal", "muted", "warn", "bad"]


@dataclass(frozen=True)
class Row:
    label: str
    value: str
    tone: Tone = "normal"


@dataclass(frozen=True)
class Group:
    title: str
    rows: tuple[Row, ...]
