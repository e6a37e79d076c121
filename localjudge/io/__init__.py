"""Reading users' files: one reader for bytes, text, JSON and YAML, JSONL rows, and test cases.

- `cases`: `TestCase` (one item to judge) and `load_cases` (JSONL, JSON or CSV files of them).
- `files`: text with one decoding and line-ending rule, JSON and YAML with located errors, path
  checks, and the refusal to overwrite an input with an output.
- `jsonl`: JSON lines read and written, and `RecordFile`: append-only, resumable record files
  (the one output-mode check: new, resume or overwrite).

Examples:
    >>> from localjudge.io import TestCase
    >>> TestCase(id="q1", input="2+2?", actual_output="4").expected_output is None
    True
"""

from localjudge.io.cases import CASE_FIELDS, LIST_FIELDS, TEXT_FIELDS, TestCase, case_from_row, load_cases
from localjudge.io.files import (
    decode_text,
    is_dir,
    is_file,
    load_yaml,
    model_path_input,
    parse_json,
    read_text,
    refuse_overwriting,
)
from localjudge.io.jsonl import (
    Appender,
    Mode,
    RecordFile,
    check_output_mode,
    dump_line,
    numbered_lines,
    read_rows,
    write_rows,
)

__all__ = [
    "CASE_FIELDS",
    "LIST_FIELDS",
    "TEXT_FIELDS",
    "Appender",
    "Mode",
    "RecordFile",
    "TestCase",
    "case_from_row",
    "check_output_mode",
    "decode_text",
    "dump_line",
    "is_dir",
    "is_file",
    "load_cases",
    "load_yaml",
    "model_path_input",
    "numbered_lines",
    "parse_json",
    "read_rows",
    "read_text",
    "refuse_overwriting",
    "write_rows",
]
