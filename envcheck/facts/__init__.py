"""What is known about a node, as rules and matrix conditions read it.

``node.py``: :class:`Facts`, typed access to a NodeReport (and the matrix's lookups), raising
:class:`~envcheck.facts.skip.Skip` with a reason when a fact is unknown. ``conditions.py``: the
matrix's structured condition language, evaluated on those facts. This layer sits above
``matrix/`` (it reads the Matrix) and below ``rules/``, ``triage/`` and ``plan/``, which use it.
"""
