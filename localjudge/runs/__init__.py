"""Evaluation runs: scoring cases with metrics, streaming results to disk, resuming, summaries."""
