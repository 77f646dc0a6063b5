"""``python -m envcheck``."""

from __future__ import annotations

from envcheck.cli import entry

if __name__ == "__main__":
    entry()
