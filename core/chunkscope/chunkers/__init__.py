"""Chunkers: the registry, one module per family (each exposes ``specs()``), post-processing and the coverage audit."""
