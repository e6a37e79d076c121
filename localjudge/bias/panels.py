"""Panels as judges in the bias lab: the members' judgments pooled, and each family's preference under a panel.

A panel (PoLL, Verga et al. 2024) judges a pair by the mean of its members' probabilities, each
presentation order on its own (P(A | A shown first) is the members' mean of that probability, so
position bias is pooled too, before any decision), and a response by the mean of its members'
scores. A judgment some member left unscored is unscored for the panel. The pooling is
`panel.weights.pool`, every member alike and every member needed; what is the bias lab's own is
orienting each member's pair as the panel's and relabelling the pooled judgments as the panel's.

A panel has no family of its own, so its preference for a family F is measured as a judge of F's
would be: over the pairs of one of F's generators against another family's, the panel's
½[P(target | shown first) + P(target | shown second)] minus the same from the judges of neither
family in the pair (`bias.targets.pairwise_targets`, with the panel standing in as a judge of F);
pointwise, the difference in differences against the judges of other families
(`pointwise_targets`). Under a panel that includes a member of F, that is F's self-preference as
the panel passes it on; under one that excludes F, what is left when F does not judge.

Examples:
    >>> panel = parse_panel("three=smollm2-135m,gemma3-270m,qwen2.5-coder-1.5b")
    >>> panel.name, panel.members
    ('three', ('smollm2-135m', 'gemma3-270m', 'qwen2.5-coder-1.5b'))
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, field_validator

from localjudge.bias.options import BiasOptions
from localjudge.bias.records import PairwiseRecord, PointwiseRecord
from localjudge.bias.results import PanelTarget
from localjudge.errors import ConfigError, clip
from localjudge.panel.members import members_problem
from localjudge.panel.weights import pool
from localjudge.stats.numbers import finite

PANEL_FAMILY = "panel"
"""The family a panel's pooled records carry outside `panel_targets` (no generator has it)."""


class BiasPanel(BaseModel):
    """A named panel of judges whose judgments are pooled (mean) into the judgments of one judge."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1, description="The panel's name in reports (a judge name it is not).")
    members: tuple[str, ...] = Field(description="Its judges, by the names their judgments carry.")

    @field_validator("members")
    @classmethod
    def _two_distinct(cls, members: tuple[str, ...]) -> tuple[str, ...]:
        why = members_problem(members)
        if why is not None:
            raise ValueError(f"{why}: {list(members)}")
        return members


def parse_panel(spec: str) -> BiasPanel:
    """`NAME=J1,J2[,...]` (or `J1,J2,...`, named by its members joined with +) as a `BiasPanel`.

    Raises:
        ConfigError: fewer than two members, a member named twice, or an empty name.
    """
    name, sep, rest = spec.partition("=")
    members = tuple(m.strip() for m in (rest if sep else spec).split(",") if m.strip())
    try:
        return BiasPanel(name=(name.strip() if sep else "+".join(members)), members=members)
    except ValueError as exc:
        raise ConfigError(f"--panel {clip(spec)}: give NAME=JUDGE1,JUDGE2[,...] with two or more judges") from exc


def check_panels(panels: Sequence[BiasPanel], judges: Sequence[str]) -> None:
    """Refuses a panel with a member that gave no judgments, or named as a judge is.

    Raises:
        ConfigError: naming the panel and the judges there are.
    """
    seen = set(judges)
    names = [p.name for p in panels]
    for p in panels:
        missing = [m for m in p.members if m not in seen]
        if missing:
            raise ConfigError(
                f"panel {clip(p.name)}: {clip(missing[0])} gave no judgments here; "
                f"the judges are {', '.join(sorted(seen))}"
            )
        if p.name in seen or names.count(p.name) > 1:
            raise ConfigError(f"panel {clip(p.name)}: name it apart from every judge and other panel")


def panel_pairwise(records: Sequence[PairwiseRecord], panel: BiasPanel) -> list[PairwiseRecord]:
    """The panel's pairwise judgments: per pair, the members' P(A | A first) and P(A | A second) averaged.

    A pair is oriented as the first member's record of it; a member that saw A and B the other way
    round contributes 1 − its probabilities of the swapped orders. A pair some member did not judge
    is left out; one some member left unscored is unscored.
    """
    by_key: dict[tuple[str, frozenset[str]], dict[str, PairwiseRecord]] = defaultdict(dict)
    for r in records:
        if r.judge in panel.members:
            key = (r.item_id, frozenset((r.generator_a, r.generator_b)))
            if r.judge in by_key[key]:
                raise ConfigError(f"judge {clip(r.judge)} has two judgments on item {clip(r.item_id)}'s pair")
            by_key[key][r.judge] = r
    full = [held for held in by_key.values() if len(held) == len(panel.members)]
    heads = [held[panel.members[0]] for held in full]
    oriented = np.array(
        [[_oriented(held[m], head.generator_a) for m in panel.members] for held, head in zip(full, heads, strict=True)],
        dtype=float,
    ).reshape(len(full), len(panel.members), 2)  # (n, M, 2) P(A | A first), P(A | A second); NaN: unscored
    first, second = pool(oriented[:, :, 0]), pool(oriented[:, :, 1])  # (n,) the members' mean; NaN: one unscored
    return [
        head.model_copy(update={"judge": panel.name, "judge_family": PANEL_FAMILY, "p_a_first": p1, "p_a_second": p2})
        for head, p1, p2 in zip(heads, map(finite, first), map(finite, second), strict=True)
    ]


def _oriented(r: PairwiseRecord, generator_a: str) -> tuple[float, float]:
    """A member's P(A | A first), P(A | A second) with A `generator_a`: 1 − its own of the swapped orders."""
    first, second = (np.nan if p is None else p for p in (r.p_a_first, r.p_a_second))
    return (first, second) if r.generator_a == generator_a else (1.0 - second, 1.0 - first)


def panel_pointwise(records: Sequence[PointwiseRecord], panel: BiasPanel) -> list[PointwiseRecord]:
    """The panel's pointwise judgments: per response, the members' scores averaged (None if one is None)."""
    by_key: dict[tuple[str, str], dict[str, PointwiseRecord]] = defaultdict(dict)
    for r in records:
        if r.judge in panel.members:
            by_key[(r.item_id, r.generator)][r.judge] = r
    full = [held for held in by_key.values() if len(held) == len(panel.members)]
    scores = np.array(
        [[np.nan if held[m].score is None else held[m].score for m in panel.members] for held in full], dtype=float
    ).reshape(len(full), len(panel.members))  # (n, M) NaN: unscored
    pooled = pool(scores)  # (n,) the members' mean; NaN: one unscored
    update = {"judge": panel.name, "judge_family": PANEL_FAMILY, "judge_logppl": None}
    return [
        held[panel.members[0]].model_copy(update=update | {"score": s})
        for held, s in zip(full, map(finite, pooled), strict=True)
    ]


def panel_targets(
    point: Sequence[PointwiseRecord],
    pair: Sequence[PairwiseRecord],
    panels: Sequence[BiasPanel],
    settings: BiasOptions,
) -> list[PanelTarget]:
    """Each panel's preference for each judging family's generators (see the module docstring).

    Returns:
        One result per (panel, family, target generator) with any pair or response, panels in
        the order given, families sorted.
    """
    from localjudge.bias.targets import pairwise_targets, pointwise_targets

    judge_family = {r.judge: r.judge_family for r in pair} | {r.judge: r.judge_family for r in point}
    families = sorted(set(judge_family.values()))
    out = []
    for panel in panels:
        pooled_pair = panel_pairwise(pair, panel) if pair else []
        pooled_point = panel_pointwise(point, panel) if point else []
        for family in families:
            relabel = {"judge_family": family}
            pairwise = {
                x.target: x
                for x in pairwise_targets(
                    [*pair, *(r.model_copy(update=relabel) for r in pooled_pair)], settings, only=(panel.name,)
                )
            } if pooled_pair else {}  # fmt: skip
            pointwise = {
                x.target: x
                for x in pointwise_targets(
                    [*point, *(r.model_copy(update=relabel) for r in pooled_point)], settings, only=(panel.name,)
                )
            } if pooled_point else {}  # fmt: skip
            for target in sorted(set(pairwise) | set(pointwise)):
                p, d = pairwise.get(target), pointwise.get(target)
                out.append(
                    PanelTarget(
                        panel=panel.name,
                        members=list(panel.members),
                        family=family,
                        includes_family=any(judge_family.get(m) == family for m in panel.members),
                        target=target,
                        rate=p.rate if p else None,
                        reference_rate=p.reference_rate if p else None,
                        difference=p.difference if p else None,
                        did=d.did if d else None,
                    )
                )
    return out


__all__ = [
    "PANEL_FAMILY",
    "BiasPanel",
    "check_panels",
    "panel_pairwise",
    "panel_pointwise",
    "panel_targets",
    "parse_panel",
]
