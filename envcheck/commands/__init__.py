"""Commands as typed functions: each takes an options dataclass and returns a result that the
CLI (envcheck/cli/) renders and the Python API returns. Nothing here prints or exits."""
