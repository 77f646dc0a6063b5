"""Importing this module registers every cluster rule."""

from envcheck.rules.cluster import drift, network, serialization  # noqa: F401
