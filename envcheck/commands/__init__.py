"""Commands as typed functions: each takes an options dataclass and returns a result.

The CLI (``envcheck/cli``) parses arguments into these options and renders the results; the
Python API (``envcheck.api``) calls the same functions. Nothing here prints or exits.
"""
