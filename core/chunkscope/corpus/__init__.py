"""Corpus mode: run a folder of documents (locally or on Ray), store and report the results."""
