"""Reading a package index: which index pip uses, its PEP 691 project pages and the metadata of
its files (PEP 658 metadata files, or a wheel's METADATA read with HTTP range requests).

Only ``envcheck matrix refresh`` imports this package; it is where ``requests`` is used.
"""
