"""Lexical normalisation shared by indexing and querying: defined in :mod:`neurongraph.store.lexical`
(the FTS index form belongs to the store, which must not import from ``index/``); re-exported here for
the query side."""

from ..store.lexical import STOPWORDS, fts_match_expression, lexical_text, query_terms

__all__ = ["lexical_text", "query_terms", "fts_match_expression", "STOPWORDS"]
