"""The engine's version (in every report's provenance)."""

__version__ = "0.2.0"
