"""The package version, importable without importing the whole package."""

__version__ = "0.1.0"
