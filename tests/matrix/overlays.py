"""A site overlay (one known_bad entry banning a numpy version) that the matrix cache tests
write, change and reload."""

NUMPY_BAN = """
[meta]
description = "site overlay"

[[known_bad]]
code = "SITE901"
id = "site-numpy-ban"
title = "numpy {version} is banned here"
severity = "warning"
message = "numpy {{pkg[numpy]}} is banned here"
symptom = "s"
cause = "c"
source = "https://wiki.example.internal/SITE901"
[known_bad.when]
packages = {{ numpy = "=={version}" }}
"""
