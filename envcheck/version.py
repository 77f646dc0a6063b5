"""envcheck's version: a leaf module, so any layer can name it without importing the package's API."""

__version__ = "0.1.0"
