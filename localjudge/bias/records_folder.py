"""One judge's kept records, read back without loading the judge: what each phase still lacks, and the
judgments once every phase is complete (`bias analyse`, and a rerun of `bias run` that continues)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from localjudge.bias.cases import ID_SEP, Pairs, response_pairs
from localjudge.bias.judging import Judgments, pairwise_record, pointwise_records, recognition_records, records_path
from localjudge.bias.records import LOGPPL, RECOGNITION, PairwiseRecord, PointwiseRecord
from localjudge.errors import DataError, clip
from localjudge.judges.judge import JudgeInfo
from localjudge.kinds.geval.spec import GEvalMetric
from localjudge.kinds.pairwise import PairwiseMetric
from localjudge.runs.generation import ResponseRecord
from localjudge.runs.results_file import read_results


@dataclass(frozen=True)
class RecordsFolder:
    """One judge's records in the folder `judge_responses` kept them in, read back without the judge.

    Attributes:
        folder: The records folder.
        judge: The judge's name.
        responses, metric, pairwise_metric, pairs: As the judging was given them.
        recognition: Whether the judging asked for self-recognition.
    """

    folder: Path
    judge: str
    responses: Sequence[ResponseRecord]
    metric: GEvalMetric | None
    pairwise_metric: PairwiseMetric | None = None
    pairs: Pairs = "cross_family"
    recognition: bool = False

    def _path(self, phase: str) -> Path:
        return records_path(self.folder, self.judge, phase)

    def missing(self) -> dict[str, int]:
        """How many records each phase still lacks, phases in judging order: "pointwise" and "logppl"
        (with a metric), "pairwise" (with a pairwise metric), "recognition" (on the pairs holding the
        judge's own response)."""
        chosen = response_pairs(self.responses, self.pairs)
        point_keys = [ID_SEP.join((r.id, r.generator)) for r in self.responses]
        pair_keys = [ID_SEP.join((a.id, a.generator, b.generator)) for a, b in chosen]
        wanted: dict[str, tuple[list[str], set[str]]] = {}
        if self.metric is not None:
            wanted["pointwise"] = (point_keys, _case_ids(self._path(self.metric.name)))
            logppl = self._path("logppl")
            have = {ID_SEP.join((r.item_id, r.generator)) for r in LOGPPL.read(logppl)} if logppl.exists() else set()
            wanted["logppl"] = (point_keys, have)
        if self.pairwise_metric is not None:
            wanted["pairwise"] = (pair_keys, _case_ids(self._path(self.pairwise_metric.name)))
        if self.recognition:
            own = [k for k, (a, b) in zip(pair_keys, chosen) if self.judge in (a.generator, b.generator)]
            path = self._path("recognition")
            got = RECOGNITION.read(path) if path.exists() else []
            wanted["recognition"] = (own, {ID_SEP.join((r.item_id, r.generator_a, r.generator_b)) for r in got})
        return {phase: sum(k not in have for k in keys) for phase, (keys, have) in wanted.items()}

    def judgments(self, human_field: str | None = None) -> Judgments:
        """The judge's judgments, as `judge_responses` returned them.

        Raises:
            DataError: A phase lacks records (the judging has not finished: run it again).
        """
        left = {phase: n for phase, n in self.missing().items() if n}
        if left:
            what = ", ".join(f"{phase}: {n} records" for phase, n in left.items())
            raise DataError(f"judge {clip(self.judge)} has not finished ({what}); run the judging again to complete it")
        chosen = response_pairs(self.responses, self.pairs)
        info: JudgeInfo | None = None
        point: tuple[PointwiseRecord, ...] = ()
        if self.metric is not None:
            results = {r.case_id: r for r in read_results(self._path(self.metric.name))}
            info = JudgeInfo.model_validate(next(iter(results.values())).judge)
            logppl = {(r.item_id, r.generator): r.logppl for r in LOGPPL.read(self._path("logppl"))}
            point = pointwise_records(
                info,
                self.responses,
                [results[ID_SEP.join((r.id, r.generator))] for r in self.responses],
                [logppl[(r.id, r.generator)] for r in self.responses],
                human_field,
            )
        pair: tuple[PairwiseRecord, ...] = ()
        if self.pairwise_metric is not None and chosen:
            results = {r.case_id: r for r in read_results(self._path(self.pairwise_metric.name))}
            info = info or JudgeInfo.model_validate(next(iter(results.values())).judge)
            pair = tuple(
                pairwise_record(info, a, b, results[ID_SEP.join((a.id, a.generator, b.generator))], human_field)
                for a, b in chosen
            )
        assert info is not None  # a metric of either kind
        recognised: tuple[PairwiseRecord, ...] = ()
        if self.recognition:
            path = self._path("recognition")
            recognised = recognition_records(info, chosen, RECOGNITION.read(path) if path.exists() else [])
        return Judgments(judge=info, pointwise=point, pairwise=pair, recognition=recognised)


def _case_ids(path: Path) -> set[str]:
    return {r.case_id for r in read_results(path)} if path.exists() else set()
