"""ChunkScope engine: documents as text plus spans, chunkers, metrics, analysis.

Nothing in this package imports Streamlit; the app is a thin layer on top.
"""

__version__ = "0.1.0"
