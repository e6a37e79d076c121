"""Reading users' files: one reader for bytes, text, JSON and YAML, JSONL rows, and test cases."""
