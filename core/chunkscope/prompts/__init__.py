"""Versioned prompt files (package data)."""
