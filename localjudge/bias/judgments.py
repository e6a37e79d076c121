"""Judgments already on disk, read back for an analysis that loads no model (`bias analyse`).

A judgments file is JSON lines, one judgment per line, in either schema of `bias.records`:

- pointwise (`PointwiseRecord`): item_id, judge, judge_family, generator, generator_family,
  score (null when unscored), response_length, and optionally judge_logppl and human_score;
- pairwise (`PairwiseRecord`, told apart by its generator_a key): item_id, judge, judge_family,
  generator_a, family_a, generator_b, family_b, p_a_first, p_a_second (null when unscored),
  and optionally human_preferred ("a"/"b"), length_a, length_b.

These are the `pointwise_records.jsonl` and `pairwise_records.jsonl` that `localjudge bias run`
writes next to its report, so a folder of a finished study can be given as it is. Every
judgment must refer to a response of the responses file (item id and generator).

Examples:
    >>> point, pair, files = read_judgments(["bias_out"])  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError

from localjudge.bias.cases import human_score
from localjudge.bias.families import fill_families
from localjudge.bias.records import PairwiseRecord, PointwiseRecord
from localjudge.errors import DataError, clip
from localjudge.io.files import is_dir
from localjudge.io.jsonl import read_rows
from localjudge.runs.generation import ResponseRecord

JUDGMENT_FILES = ("pointwise_records.jsonl", "pairwise_records.jsonl")
"""The judgment files of a study folder."""


def judgment_files(paths: Sequence[str | Path]) -> list[Path]:
    """The files to read: files as given, and the judgment files of each folder.

    Raises:
        DataError: A folder holds no judgment file.
    """
    out = []
    for p in map(Path, paths):
        if is_dir(p):
            found = [p / name for name in JUDGMENT_FILES if (p / name).is_file()]
            if not found:
                raise DataError(
                    f"{p} holds no {' or '.join(JUDGMENT_FILES)}; give the folder a "
                    "`localjudge bias run` wrote, or the judgment files themselves"
                )
            out += found
        else:
            out.append(p)
    return out


def read_judgments(paths: Sequence[str | Path]) -> tuple[list[PointwiseRecord], list[PairwiseRecord], list[Path]]:
    """Pointwise and pairwise judgments from files or study folders (see the module docstring).

    Returns:
        The pointwise records, the pairwise records and the files read.

    Raises:
        DataError: A file is unreadable, a line is not a judgment (file and line named), or the
            files hold no judgment at all.
    """
    files = judgment_files(paths)
    point: list[PointwiseRecord] = []
    pair: list[PairwiseRecord] = []
    for path in files:
        for n, row in read_rows(path, "judgments file"):
            if not isinstance(row, dict):
                raise DataError(f"{path}:{n}: expected a judgment object, got {type(row).__name__}")
            is_pair = "generator_a" in row
            try:
                if is_pair:
                    pair.append(PairwiseRecord.model_validate(row))
                else:
                    point.append(PointwiseRecord.model_validate(row))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(map(str, first["loc"])) or "record"
                raise DataError(
                    f"{path}:{n}: not a {'pairwise' if is_pair else 'pointwise'} "
                    f"judgment ({clip(where)}: {first['msg']}); see `localjudge bias analyse --help`"
                ) from None
    if not point and not pair:
        raise DataError(f"no judgments in {', '.join(map(str, files))}; give the files `localjudge bias run` wrote")
    return point, pair, files


def align_judgments(
    point: Sequence[PointwiseRecord],
    pair: Sequence[PairwiseRecord],
    responses: Sequence[ResponseRecord],
    given: Mapping[str, str],
    human_field: str | None = None,
) -> tuple[list[PointwiseRecord], list[PairwiseRecord], list[ResponseRecord], list[dict[str, str]]]:
    """Checks judgments against the responses, settles families and (optionally) human scores.

    Args:
        point: Pointwise judgments.
        pair: Pairwise judgments.
        responses: The responses they judged.
        given: --family overrides for judges and generators recorded as "unknown".
        human_field: When given, human scores are read afresh from this field of the prompts.

    Returns:
        The records with families filled in, the responses likewise, and the judges as
        {"name", "family"}.

    Raises:
        DataError: A judgment names a response that is not in the file, a family contradicts
            the responses', or a family stays unknown.
    """
    by_key = {(r.id, r.generator): r for r in responses}
    gen_fams = fill_families({r.generator: r.generator_family for r in responses}, given, "generator")
    judgments: list[PointwiseRecord | PairwiseRecord] = [*point, *pair]
    judge_fams = fill_families({r.judge: r.judge_family for r in judgments}, given, "judge")

    def response(item: str, generator: str, family: str) -> ResponseRecord:
        r = by_key.get((item, generator))
        if r is None:
            raise DataError(
                f"a judgment names item {clip(item)} of generator {clip(generator)}, which the "
                "responses file does not hold; give the responses file the judges scored"
            )
        if family not in (gen_fams[generator], r.generator_family):
            raise DataError(
                f"a judgment tags generator {clip(generator)} with family {clip(family)}, the "
                f"responses with {clip(r.generator_family)}; fix the judgments"
            )
        return r

    points: list[PointwiseRecord] = []
    for v in point:
        r = response(v.item_id, v.generator, v.generator_family)
        update: dict[str, object] = {"judge_family": judge_fams[v.judge], "generator_family": gen_fams[v.generator]}
        if human_field is not None:
            update["human_score"] = human_score(r, human_field)
        points.append(v.model_copy(update=update))
    pairs: list[PairwiseRecord] = []
    for w in pair:
        a, b = response(w.item_id, w.generator_a, w.family_a), response(w.item_id, w.generator_b, w.family_b)
        update = {
            "judge_family": judge_fams[w.judge],
            "family_a": gen_fams[w.generator_a],
            "family_b": gen_fams[w.generator_b],
        }
        if human_field is not None:
            ha, hb = human_score(a, human_field), human_score(b, human_field)
            update["human_preferred"] = None if ha is None or hb is None or ha == hb else ("a" if ha > hb else "b")
        pairs.append(w.model_copy(update=update))
    responses = [r.model_copy(update={"generator_family": gen_fams[r.generator]}) for r in responses]
    judges = [{"name": j, "family": f} for j, f in sorted(judge_fams.items())]
    return points, pairs, responses, judges
