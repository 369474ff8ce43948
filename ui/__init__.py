"""Streamlit UI helpers shared by app.py and pages/ (the engine lives in core/, which never imports Streamlit)."""
