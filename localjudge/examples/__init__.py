"""Bundled example datasets for localjudge (shipped as package data): no Python names.

- `rag_demo.jsonl`: RAG test cases (question, retrieved context, answer) for `make demo-rag`.
- `summeval_demo.jsonl`: 48 expert-rated SummEval summaries (3 articles), what `localjudge demo` scores.
"""

__all__: list[str] = []
