"""io/jsonl: JSON lines read with file and line in errors, and append-only record files that resume."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ConfigDict

from localjudge.errors import ConfigError, DataError
from localjudge.io.jsonl import RecordFile, dump_line, numbered_lines, read_rows, write_rows


class Note(BaseModel):
    model_config = ConfigDict(extra="forbid")

    key: str
    text: str


NOTES = RecordFile(Note, "note record", "notes file", hint="; write it with the notes tool")


@pytest.mark.parametrize("brk", ["\u2028", "\u2029", "\x85", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e", "\r"])
def test_lines_end_at_newline_only(brk):
    assert list(numbered_lines(f"a{brk}b\n\n  \nc\n")) == [(1, f"a{brk}b"), (4, "c")]


def test_read_rows_names_file_and_line(tmp_path):
    path = tmp_path / "x.jsonl"
    path.write_text('{"a": 1}\n\n"\u2028"\n', encoding="utf-8")
    assert [tuple(r) for r in read_rows(path, "x file")] == [(1, {"a": 1}), (3, "\u2028")]
    path.write_text('{"a": 1}\n{"a": \n', encoding="utf-8")
    with pytest.raises(DataError, match=r"x\.jsonl:2: invalid JSON"):
        list(read_rows(path, "x file"))
    path.write_bytes(b'{"a": 1}\n{"a": "\xff"}\n')
    with pytest.raises(DataError, match=r"x\.jsonl:2: not valid UTF-8 \(byte offset 16\)"):
        list(read_rows(path, "x file"))


def test_dump_line_keeps_field_order_and_writes_text_raw_unless_asked():
    note = Note(key="k", text="é\u2028")
    assert dump_line(note) == '{"key": "k", "text": "é\u2028"}\n'
    assert dump_line(note, ensure_ascii=True) == '{"key": "k", "text": "\\u00e9\\u2028"}\n'
    with pytest.raises(ValueError):
        dump_line({"x": float("nan")})
    assert dump_line({"x": float("nan")}, allow_nan=True) == '{"x": NaN}\n'


def test_write_rows_then_read_records(tmp_path):
    path = tmp_path / "n.jsonl"
    notes = [Note(key=str(i), text=f"line\u2028{i}") for i in range(3)]
    write_rows(path, notes)
    assert NOTES.read(path) == notes


def _three(path):
    with NOTES.open(path, "new") as out:
        for i in range(3):
            out.write(Note(key=f"k{i}", text="café" * 3))
    return path.read_bytes()


def test_new_refuses_an_existing_file(tmp_path):
    path = tmp_path / "n.jsonl"
    good = _three(path)
    with pytest.raises(ConfigError, match="already exists; pass --resume"):
        NOTES.open(path, "new")
    assert path.read_bytes() == good
    with NOTES.open(path, "overwrite") as out:
        out.write(Note(key="only", text=""))
    assert [n.key for n in NOTES.read(path)] == ["only"]


def test_each_record_is_flushed_as_written(tmp_path):
    path = tmp_path / "n.jsonl"
    out = NOTES.open(path, "new")
    out.write(Note(key="a", text="b"))
    assert path.read_bytes() == b'{"key": "a", "text": "b"}\n'
    out.close()


@pytest.mark.parametrize("cut", [1, 5, 12, 27])  # 27: inside the two bytes of an "é"
def test_a_torn_record_is_ignored_then_cut_on_resume(tmp_path, cut):
    path = tmp_path / "n.jsonl"
    lines = _three(path).splitlines(keepends=True)
    assert lines[2][26:28] == "é".encode()
    path.write_bytes(lines[0] + lines[1] + lines[2][:cut])
    assert [n.key for n in NOTES.read(path)] == ["k0", "k1"]
    with NOTES.open(path, "resume") as out:
        out.write(Note(key="k2", text="again"))
    assert [n.key for n in NOTES.read(path)] == ["k0", "k1", "k2"]
    assert path.read_bytes().startswith(lines[0] + lines[1] + b'{"key": "k2", "text": "again"}\n')


@pytest.mark.parametrize(
    "content, line",
    [
        (b'{"key": "k0", "text": ""}\n{"text": "x"', 2),  # not the start of a record: its first key is `key`
        (b'{"key": "k0", "text": ""}\n\x00\xff', 2),
        (b'{"kez": "k0"}\n{"key": "k1", "te', 1),  # a bad line before a torn one
        (b'{"key": "k0", "text": 3}\n', 1),
    ],
)
def test_anything_but_a_torn_record_is_refused_and_kept(tmp_path, content, line):
    path = tmp_path / "n.jsonl"
    path.write_bytes(content)
    with pytest.raises(DataError, match=rf"n\.jsonl:{line}: not a note record"):
        NOTES.read(path)
    if line == 2:  # the tail itself is not a record: opening to resume refuses it too
        with pytest.raises(DataError, match=r"n\.jsonl:2: not a note record \(the last line, which has no newline\)"):
            NOTES.open(path, "resume")
    assert path.read_bytes() == content


def test_a_line_that_is_not_a_record_is_named_with_its_field(tmp_path):
    path = tmp_path / "n.jsonl"
    path.write_text('{"key": "k0", "text": ""}\n{"key": "k1"}\n', encoding="utf-8")
    with pytest.raises(DataError, match=r"n\.jsonl:2: not a note record \(text: Field required\); write it with"):
        NOTES.read(path)
    with pytest.raises(DataError, match=r"cannot read notes file .*missing\.jsonl: No such file"):
        NOTES.read(tmp_path / "missing.jsonl")
