"""envcheck: pre-flight checks for GPU training nodes."""

__version__ = "0.1.0"
