"""Responses to prompts from registered models: greedy, deterministic, resumable.

The bias lab needs answers written by the very models that later judge them. Instruct models get
their chat template; base models (no chat template) get a plain "Question: ...\\nAnswer:" prompt
and their continuation is cut where they start a new paragraph or a new question, since a base
model does not stop on its own.

Prompts are generated in fixed chunks of the input order, so a chunk always holds the same
prompts (and padding) whether the run was interrupted or not: resuming reproduces an
uninterrupted run exactly. The output file is JSONL, append-only, flushed per record.

Examples:
    >>> from localjudge import load_judge
    >>> from localjudge.io.cases import load_cases
    >>> from localjudge.runs.options import RunOptions
    >>> model = load_judge("smollm2-135m")  # doctest: +SKIP
    >>> generate_responses(load_cases("prompts.jsonl"), model, RunOptions(out="responses.jsonl"))  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from localjudge.errors import ConfigError, DataError, clip
from localjudge.io.cases import TestCase
from localjudge.io.jsonl import RecordFile
from localjudge.judges.judge import Judge
from localjudge.runs.options import RunOptions
from localjudge.version import __version__

PLAIN_STOPS = ("\n\n", "\nQuestion:")
"""Where a base model's continuation is cut: it has answered and moves on to something else."""


class ResponseRecord(BaseModel):
    """One model's response to one prompt, with what is needed to reproduce it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Id of the prompt.")
    input: str = Field(description="The prompt's question or instruction.")
    context: list[str] | None = Field(default=None, description="The prompt's context passages, if any.")
    reference: str | None = Field(default=None, description="The prompt's reference answer, if any.")
    generator: str = Field(description="Registry name of the model that wrote the response.")
    generator_family: str = Field(description="Model family of the generator.")
    response: str = Field(description="The response, stripped, cut at the stop strings for plain prompts.")
    prompt_style: Literal["chat", "plain"] = Field(
        description="chat: the model's chat template; plain: Question/Answer text."
    )
    max_new_tokens: int = Field(description="Generation limit in tokens.")
    batch_size: int = Field(description="Prompts per generation chunk (padding can change greedy outputs).")
    generator_info: dict[str, Any] = Field(description="Source, provenance, dtype and device of the generator.")
    localjudge_version: str = Field(description="Version of localjudge that produced the record.")
    extra: dict[str, Any] = Field(
        default_factory=dict, description="Other fields of the prompt (category, human scores...)."
    )


RESPONSES = RecordFile(
    ResponseRecord,
    "response record",
    "responses file",
    hint="; make it with `localjudge generate`",
    name_field=False,
    allow_nan=True,
)
"""Responses files: read back with `read_responses`, appended to by `generate_responses`."""


def check_prompts(cases: Sequence[TestCase]) -> None:
    """Refuses prompts that cannot be answered, before any model loads.

    Raises:
        DataError: A prompt has no `input`, a `reference` that is not a string, or ids repeat.
    """
    ids = [c.id for c in cases]
    if len(set(ids)) != len(ids):
        raise DataError("prompt ids repeat; give every prompt a unique id")
    for case in cases:
        if not case.input:
            raise DataError(f"prompt {clip(case.id)} has no 'input'; give every prompt an input")
        reference = case.expected_output or case.extra.get("reference")
        if reference is not None and not isinstance(reference, str):
            raise DataError(f"prompt {clip(case.id)}: field 'reference' must be a string")


def generation_prompt(model: Judge, case: TestCase) -> str:
    """The prompt a model answers: its chat template, or plain Question/Answer text for base models."""
    if not case.input:
        raise DataError(f"prompt {clip(case.id)} has no 'input'; give every prompt an input")
    context = "\n\n".join(case.context or [])
    user = f"Context:\n{context}\n\n{case.input}" if context else case.input
    head = f"Context:\n{context}\n\n" if context else ""
    return model.render("", user, "", plain=f"{head}Question: {case.input}\nAnswer:")


def response_continuation(model: Judge, response: str) -> str:
    """The text that follows `generation_prompt` when the model writes `response` itself."""
    return response if model.info.chat_template else " " + response


def clean_response(text: str, plain: bool) -> str:
    """A generated continuation, cut at the first stop string for plain prompts, stripped."""
    text = text.lstrip()
    if plain:
        for stop in PLAIN_STOPS:
            text = text.split(stop, 1)[0]
    return text.strip()


def read_responses(path: str | Path) -> list[ResponseRecord]:
    """Records of a responses file; a torn last record (a killed writer) is ignored.

    Raises:
        DataError: The file cannot be read or holds a line that is not a response record
            (the bytes after the last newline must be the start of one).
    """
    return RESPONSES.read(path)


def _check_resumable(
    done: Sequence[ResponseRecord], model: Judge, max_new_tokens: int, batch_size: int, path: Path
) -> None:
    for r in done:
        if r.generator != model.info.name:
            continue
        model.info.check_same_judge({**r.generator_info, "name": r.generator}, str(path))
        if (r.max_new_tokens, r.batch_size) != (max_new_tokens, batch_size):
            raise ConfigError(
                f"{path} holds responses of {r.generator} made with other settings "
                f"(max_new_tokens or batch size); resume with the same "
                "settings or write to a new --out"
            )


def generate_responses(
    cases: Sequence[TestCase],
    model: Judge,
    run: RunOptions,
    *,
    max_new_tokens: int = 128,
    batch_size: int = 8,
) -> list[ResponseRecord]:
    """Greedy responses of one model to every prompt, appended to `out` as they complete.

    Args:
        cases: Prompts (`id`, `input`, optional `context`; `expected_output` or an extra
            `reference` field becomes the record's reference, other extras are kept).
        model: A loaded model (`load_judge`); its name and family are recorded.
        run: How the run writes (`RunOptions`): `out`, the JSONL file (records of other models
            already in it are kept); `resume` skips prompts this model has already answered in it,
            `overwrite` starts it afresh, `progress` shows a progress bar.
        max_new_tokens: Generation limit.
        batch_size: Prompts per chunk; chunks follow the input order.

    Returns:
        This model's records for `cases`, in input order (resumed ones included).

    Raises:
        ConfigError: `out` exists without resume or overwrite, or was made with other settings.
        DataError: A prompt has no input, or ids repeat.

    Examples:
        >>> run = RunOptions(out="responses.jsonl")
        >>> records = generate_responses(cases, model, run, max_new_tokens=96)  # doctest: +SKIP
    """
    if batch_size < 1:
        raise ConfigError("batch_size must be at least 1")
    if run.out is None:
        raise ConfigError("generate_responses needs a file to write: give RunOptions(out=...)")
    check_prompts(cases)
    run.check_output()
    path = run.out
    exists = path.exists() and path.stat().st_size > 0
    done = read_responses(path) if exists and run.resume else []
    _check_resumable(done, model, max_new_tokens, batch_size, path)
    have = {r.id: r for r in done if r.generator == model.info.name}
    from tqdm.auto import tqdm

    todo = sum(c.id not in have for c in cases)
    bar = tqdm(
        total=todo,
        disable=None if run.progress else True,
        unit="prompt",
        desc=f"generating ({model.info.name})",
        dynamic_ncols=True,
    )
    # resuming, the file is checked above before its torn last record (if any) is cut here
    with RESPONSES.open(path, run.mode) as f:
        for start in range(0, len(cases), batch_size):
            chunk = cases[start : start + batch_size]
            if all(c.id in have for c in chunk):
                continue
            # the whole chunk is regenerated so its padding, hence its outputs, match a clean run
            texts = model.generate([generation_prompt(model, c) for c in chunk], max_new_tokens)
            for case, text in zip(chunk, texts):
                if case.id in have:
                    continue
                rec = _record(case, model, text, max_new_tokens, batch_size)
                f.write(rec)
                have[case.id] = rec
                bar.update(1)
    bar.close()
    return [have[c.id] for c in cases]


def _record(case: TestCase, model: Judge, text: str, max_new_tokens: int, batch_size: int) -> ResponseRecord:
    plain = not model.info.chat_template
    extra = dict(case.extra)
    reference = case.expected_output or extra.pop("reference", None)
    if reference is not None and not isinstance(reference, str):
        raise DataError(f"prompt {clip(case.id)}: field 'reference' must be a string")
    # everything `check_same_judge` compares on a resume (its IDENTITY, the name aside: the record's
    # `generator`), so a field added there is recorded here too
    info = model.info.model_dump(include={"source", "device", *model.info.IDENTITY} - {"name"})
    return ResponseRecord(
        id=case.id,
        input=case.input or "",
        context=case.context,
        reference=reference,
        generator=model.info.name,
        generator_family=model.info.family,
        response=clean_response(text, plain),
        prompt_style="plain" if plain else "chat",
        max_new_tokens=max_new_tokens,
        batch_size=batch_size,
        generator_info=info,
        localjudge_version=__version__,
        extra=extra,
    )
