"""Adapters that carry a ChunkScope chunking into other tools' pipelines (LangChain, ...)."""
