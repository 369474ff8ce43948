import hashlib
import os

from chunkscope.text import tokens


def test_o200k_seeded_offline_and_verified():
    path = tokens.seed_tiktoken_cache()
    with open(path, "rb") as f:
        assert hashlib.sha256(f.read()).hexdigest() == tokens.O200K_SHA256
    assert os.path.basename(path) == hashlib.sha1(tokens.O200K_URL.encode()).hexdigest()


def test_counts_match_tiktoken_encoding():
    text = "Article 4 (2) GDPR: the processing of personal data — données personnelles."
    assert tokens.count_tokens(text) == len(tokens.encoding().encode_ordinary(text))
    assert tokens.count_tokens("") == 0
    # special-token text is counted as ordinary text, never raises
    assert tokens.count_tokens("<|endoftext|>") > 1


def test_count_many_agrees_with_single_counts():
    texts = [f"piece number {i} of a longer text" for i in range(40)] + ["", "x"]
    assert tokens.count_many(texts) == [tokens.count_tokens(t) for t in texts]


def test_token_char_offsets_cover_multibyte_text():
    text = "héllo wörld 日本語 ok"
    ids, offsets = tokens.token_char_offsets(text)
    assert len(ids) == len(offsets) == tokens.count_tokens(text)
    assert offsets[0] == 0
    assert offsets == sorted(offsets)
    assert all(0 <= o < len(text) for o in offsets)
