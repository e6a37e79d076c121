"""`TuneOptions`: every choice a tune makes, one object from the command line to the trainer and the manifest."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import AliasChoices, Field

from localjudge.options import Options

Loss = Literal["ce", "mse", "ce+mse", "rank", "ce+rank"]


class TuneOptions(Options):
    """How a judge is tuned; recorded whole in the tuned judge's manifest."""

    label: ClassVar[str] = "tune option"

    loss: Loss = Field(
        default="ce+rank",
        description="ce: cross-entropy of the judge's score distribution against the human rating (spread over "
        "the two nearest scores); mse: squared error of the expected score (0-1 scale); rank: a pairwise logistic "
        "loss on the expected scores of the cases of one group whose labels differ (their order, not their level); "
        "sums of these as named. ce+rank measured best on SummEval's held-out articles "
        "(benchmarks/quality/tune/).",
    )
    lora_rank: int = Field(
        default=16,
        ge=1,
        le=256,
        validation_alias=AliasChoices("lora_rank", "rank"),  # "rank" in the settings of tunes before #71
        description="LoRA rank.",
    )
    alpha: float = Field(default=32.0, gt=0, description="LoRA alpha; updates are scaled by alpha / LoRA rank.")
    layers: int = Field(default=4, ge=1, description="Top decoder layers that carry adapters; the rest run once.")
    learning_rate: float = Field(default=2e-4, gt=0, lt=1, description="AdamW learning rate.")
    epochs: int = Field(default=6, ge=1, le=100, description="Most passes over the training cases.")
    patience: int = Field(default=2, ge=1, description="Epochs without a better validation agreement before stopping.")
    validation_share: float = Field(
        default=0.2, gt=0, lt=1, description="Share of the groups held out for validation and early stopping."
    )
    seed: int = Field(default=0, ge=0, description="Seeds the adapter's initialisation, the split and the order.")
    pack_tokens: int = Field(
        default=4096, ge=64, description="Most tokens per packed sequence (a group's prompts sharing their prefix)."
    )
    rank_temperature: float = Field(
        default=0.05, gt=0, description="Scale of expected-score differences (0-1) in the rank loss."
    )
    mass_weight: float = Field(
        default=0.1, ge=0, description="Weight of -log(valid mass) in the loss: keeps the judge answering with a score."
    )
    min_tuned_valid_mass: float = Field(
        default=0.5,
        ge=0,
        le=1,
        validation_alias=AliasChoices("min_tuned_valid_mass", "min_valid_mass"),  # its name before #71
        description="A tune whose validation valid mass falls below this has failed (the judge stopped answering); "
        "not eval's min_valid_mass, below which one reading is unscored.",
    )
