"""Passes that repair the converter's page Markdown, one module per kind of damage."""
