"""Faithfulness: RAG answers, SummEdits and SummEval consistency from token-level readings."""
