"""The benchmarks: one study (folder) per question, shared helpers in `lib`; index in README.md."""
