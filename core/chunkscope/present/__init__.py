"""Presentation: plotly figures, escaped HTML highlighting, document paging, HTML reports.

Apart from the engine: nothing outside this package imports plotly, and the engine never imports it.
"""
