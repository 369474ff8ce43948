"""Embeddings: the embedder, span vectors, the ONNX backend, the bundled model and model input limits."""
