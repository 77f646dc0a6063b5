"""Renderers: rich tables for terminals, Markdown for bug reports, JSON for machines."""
