"""Text structure: blocks, o200k tokens, sentence units, language, the spaCy loader, Markdown markup primitives."""
