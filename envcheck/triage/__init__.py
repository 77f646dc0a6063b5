"""Log triage: known error signatures in a log, and their causes checked on a node.

The package is also callable: ``envcheck.triage(text)`` is :func:`envcheck.api.triage` whether
or not this package has been imported (``envcheck/__init__.py`` makes it so, from the top
layer). Nothing is imported here.
"""
