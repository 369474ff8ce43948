"""Session-state keys that more than one module (or page) reads or writes.

A key used by one module only stays a constant of that module. The settings panel's own widget keys
(``cs_min_tokens``, ``cs_w_<metric>``, ...) live with the panel (``ui.analysis``).
"""

from __future__ import annotations

# ------------------------------------------------------------------ the document (ui.common's picker; every page)
DOCUMENT = "document"  # the current Document (``ui.common.current_document``)
DOC_SOURCE = "cs_doc_source"  # "upload" | "sample" | "external" (another page, e.g. Corpus, put the document there)
SAMPLE = "cs_sample"  # the bundled sample picked (its file name)

# ------------------------------------------------------------------ places kept across pages, for one document
# (``ui.analysis.forget_places_of_other_documents`` drops them when another document opens)
INSPECTOR_CHUNKING = "cs_insp_chunking"  # the Chunk inspector's chunking
INSPECTOR_NO = "cs_insp_no"  # its chunk number (from 1)
INSPECTOR_POS = "cs_insp_pos"  # the character offset asked for (kept when the chunking changes)
INSPECTOR_OFFSET = "cs_insp_offset"  # its "chunk holding character" input
COMPARE_SEL = "cs_cmp_sel"  # Compare's chunkings
COMPARE_KIND = "cs_cmp_kind"  # its problem kind
COMPARE_MODE = "cs_cmp_mode"  # around the current problem, or a whole page / part
COMPARE_VIEW = "cs_cmp_view"  # the page / part shown
COMPARE_VIEW_FOR = "cs_cmp_view_for"  # the problem the page / part was opened for
COMPARE_PI = "cs_cmp_pi"  # the current problem's index
COMPARE_SIG = "cs_cmp_sig"  # what the problem list was made from

# ------------------------------------------------------------------ the user's embedding model (ui.limits)
TARGET_MODEL = "cs_target_model"
TARGET_LIMIT = "cs_target_limit"
TARGET_TOKENIZER = "cs_target_tokenizer"

# ------------------------------------------------------------------ Tune (pages/3_Tune.py and ui.tune)
PARAMS = "cs_params"  # {chunker id: {param: value}} the tuned parameters the analysis runs with
TUNE_SAVED = "cs_tune_saved"  # widget values, kept while other pages run (Streamlit drops unrendered widgets)
TUNE_POINTS = "cs_tune_points"  # (document fingerprint, metric key, name) -> point
TUNE_SWEEP = "cs_tune_sweep"  # the last sweep: chunker, param, rows, ...
TUNE_CANCEL = "cs_tune_cancel_flag"
TUNE_FRONTIER_NOW = "cs_tune_frontier_now"  # the frontier's points as drawn (what Promote picks from)
TUNE_MSG = "cs_tune_msg"  # (kind, text) a callback leaves for the next run of the page
TUNE_CHUNKER = "cs_tune_chunker"
TUNE_BASELINE_PREF = "cs_tune_baseline_pref"  # the baseline a loaded configuration names
TUNE_PROMOTE_PICK = "cs_tune_promote_pick"  # the frontier point to promote (its index)
TUNE_PROMOTE_NAME = "cs_tune_promote_name"
TUNE_LOAD = "cs_tune_load"  # the configuration file uploader

# ------------------------------------------------------------------ Page view (pages/5_Page_view.py, ui.pdfview)
PV_PAGE = "cs_pv_page"
PV_FOCUS = "cs_pv_focus"  # (chunking id, chunk index) to select on arrival
PV_ASKED = "cs_pv_asked"  # set when a page was asked for (a health panel button): the view opens there
