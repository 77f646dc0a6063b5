"""Writers for plans and locks: sh scripts, requirements files, PEP 751 pylock, conda files."""
