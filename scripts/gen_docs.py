"""Generate docs from code (placeholder until the rule catalogue exists)."""

from __future__ import annotations

import sys


def main() -> int:
    return 0


if __name__ == "__main__":
    sys.exit(main())
