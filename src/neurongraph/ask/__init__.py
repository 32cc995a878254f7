"""Ask (seed 004): question → route (graph / vector / hybrid) → read-only Cypher and/or search → cited answer.

``Engine.ask`` is the entry point (:mod:`.pipeline`).  Without an LLM: :mod:`.router`, :mod:`.nl2cypher`,
:mod:`.answer` (extractive).  With one: :mod:`.llm` (Anthropic / OpenAI-compatible, SDKs imported lazily).
"""
