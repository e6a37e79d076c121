"""The batching engine: token-budget batches, tree attention masks, the transformers backend."""
