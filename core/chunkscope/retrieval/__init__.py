"""The retrieval check (DESIGN section 11): does a chunking let a retriever find the evidence?

- ``questions``: questions with evidence from a CSV/JSONL file (Chroma's format as is);
- ``generate``: questions from the configured LLM endpoint, quotes verified;
- ``selftest``: offline proxy questions made from the document itself;
- ``retrievers``: BM25 (``bm25s``), dense (the run's span embedder), hybrid (RRF);
- ``metrics``: Chroma's token-level recall, precision, IoU, precision Ω; budget truncation;
- ``run``: ``evaluate()`` scores every chunking; ``chunkscope.retrieval/1`` JSON.
"""

from chunkscope.retrieval.metrics import Scores, score
from chunkscope.retrieval.questions import Question, QuestionsError, QuestionSet, read_questions
from chunkscope.retrieval.run import SCHEMA, Chunking, Config, RetrievalResult, evaluate

__all__ = ["SCHEMA", "Chunking", "Config", "Question", "QuestionSet", "QuestionsError", "RetrievalResult",
           "Scores", "evaluate", "read_questions", "score"]
