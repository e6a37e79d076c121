"""`Judge`: a loaded model plus what it needs to read exact score and label distributions."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from localjudge.engine.backend import Backend, ContinuationFeatures, Progress
from localjudge.engine.options import EngineOptions, RuntimeKeywords
from localjudge.errors import ConfigError, clip
from localjudge.scoring.distribution import (
    DEFAULT_MIN_VALID_MASS,
    DEFAULT_TREE_TOLERANCE,
    LabelDistribution,
    ScoreDistribution,
    label_distribution,
    outcome_mass,
    score_distribution,
)
from localjudge.scoring.likelihood import ContinuationLogprobs, split_boundary
from localjudge.scoring.trie import TokenTree, build_label_tree, build_score_tree

if TYPE_CHECKING:
    from typing_extensions import Unpack

FEATURE_MEMO = 1024
"""Outputs whose features a judge keeps (`Judge.features`): a head judge's metrics read each output once."""
ENGINE_RECORD = ("batch_invariant", "bitwise", "gemm", "grid", "threads", "fp32_head", "mixed_precision")
"""JudgeInfo fields the transformers backend fills in from what it probed and ran with."""


class JudgeInfo(BaseModel):
    """Who the judge is, recorded with every result so it can be reproduced."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Registry name, path or hub id.")
    family: str = Field(description="Model family (for self-preference studies).")
    source: str = Field(description="Where the weights came from.")
    provenance: str = Field(description="File hash (GGUF) or commit revision (hub) of the weights.")
    dtype: str = Field(description="Compute dtype.")
    device: str = Field(description="Device the model ran on.")
    chat_template: bool = Field(description="Whether prompts are rendered with the chat template.")
    context_length: int = Field(description="Longest prompt accepted, in tokens.")
    tree_tolerance: float = Field(
        default=DEFAULT_TREE_TOLERANCE,
        ge=0,
        lt=1,
        description="Share of the valid mass that unread score-tree nodes may hold; 0 reads every node.",
    )
    token_budget: int | None = Field(
        default=None,
        gt=0,
        description="Padded tokens per forward batch it ran with; None without a batching engine (fake backend).",
    )
    reuse_prefix: bool | None = Field(
        default=None,
        description="Whether shared prompt prefixes were computed once; None without a batching engine.",
    )
    batch_invariant: bool | None = Field(
        default=None, description="Whether the batch-invariant engine was asked for; None without a batching engine."
    )
    bitwise: bool | None = Field(
        default=None,
        description="Whether results are claimed bitwise independent of batching: invariant engine, GEMM probe "
        "passed, on a device where the layout was verified (the CPU); None without a batching engine.",
    )
    gemm: str | None = Field(
        default=None, description="The probed fixed-shape GEMM plan (e.g. '256/16 rows, prepacked'), or 'none'."
    )
    grid: int | None = Field(default=None, description="Row-width, prefix and attention-block grid it ran with.")
    threads: int | None = Field(default=None, description="torch CPU threads at load (the probe holds for them).")
    fp32_head: bool | None = Field(default=None, description="Whether the output layer ran in fp32 where read.")
    mixed_precision: bool | None = Field(
        default=None,
        description="bf16/fp16 judges: whether only the linear layers ran in that dtype (the rest in fp32); "
        "null in fp32 and in records written before it was recorded (every op in the dtype).",
    )

    IDENTITY: ClassVar[tuple[str, ...]] = ("name", "provenance", "dtype", "mixed_precision")
    """What makes two runs' records the same judge's: a resume continues only these (`check_same_judge`)."""

    def check_same_judge(self, recorded: Mapping[str, Any], where: str) -> None:
        """The one judge identity check: refuses to continue `where`'s records of another judge.

        `recorded` is a record's judge block (`ResultRecord.judge`, a response's `generator_info`
        with its name); engine settings (token budget, prefix reuse) may differ, as they do not
        change results.

        Raises:
            ConfigError: the name, weights (provenance), dtype or mixed precision differ.
        """
        theirs = tuple(recorded.get(f) for f in self.IDENTITY)
        if theirs != tuple(getattr(self, f) for f in self.IDENTITY):
            name, provenance, dtype, _ = (clip(v) for v in theirs)
            dtype += ", mixed precision" if theirs[3] else ""
            raise ConfigError(
                f"{where} holds results of judge {name} ({provenance}, {dtype}); "
                "resume with the same judge and dtype, or write to a new --out"
            )

    @model_serializer(mode="wrap")
    def _omit_unset_engine(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # records of judges without a batching engine (and older records) carry no such fields
        out = handler(self)
        for field in ("token_budget", "reuse_prefix", *ENGINE_RECORD):
            if out.get(field, 0) is None:
                del out[field]
        return out


class Judge:
    """A judge model ready to score prompts.

    Build one with `localjudge.load_judge`; tests build one around `localjudge.testing.FakeBackend`.
    The engine options live in the backend alone (`options`); `info` records them with who the
    judge is, as of this judge's construction.
    """

    def __init__(self, backend: Backend, info: JudgeInfo):
        self.backend = backend
        self.info = info.model_copy(update=backend.record())
        """Who the judge is and what its engine runs with (the backend's options), recorded with every result."""
        self._trees: dict[Any, TokenTree] = {}
        self.tuned_for: tuple[str, ...] = ()
        """A tuned judge's metrics, the ones its adapter was trained on (`localjudge tune`); () for any other."""
        self.readings: dict[str, Any] = {}
        """Metric name -> the metric (a head's) this judge answers it with instead (`runs.evaluate`)."""
        self._features: OrderedDict[tuple, ContinuationFeatures] = OrderedDict()
        """The latest outputs' features (`features`): a head judge's metrics read the same outputs once."""

    @property
    def options(self) -> EngineOptions | None:
        """The resolved engine options the backend runs with (None for a backend without an engine)."""
        return self.backend.options

    @classmethod
    def from_model(cls, model: Any, tokenizer: Any, info: JudgeInfo, options: EngineOptions) -> Judge:
        """Wraps a transformers model and tokenizer, already on `options.device` in `options.dtype`.

        `options` must be resolved (`EngineOptions.resolve`); the judge's `info` records them.
        The model is adapted in place: its linear layers made batch-invariant, and lowered to
        `options.dtype` under mixed precision. A judge built over a model that another judge runs
        changes that judge's layers too, so judges of different precisions each need a copy of
        their own (`copy.deepcopy(model)`); judges that differ only in run-time settings share one
        model through `with_options`.

        Raises:
            ConfigError: the options are not resolved, or name another device or dtype than `info`.

        Examples:
            >>> opts = EngineOptions(device="cpu", dtype="float32", token_budget=4096)
            >>> judge = Judge.from_model(model, tokenizer, info, opts)  # doctest: +SKIP
        """
        from localjudge.engine.hf import HFBackend

        if not options.resolved:
            raise ConfigError(f"engine options {options} are not resolved; call .resolve() first")
        if (options.device, options.dtype) != (info.device, info.dtype):
            raise ConfigError(
                f"options run on {options.device}/{options.dtype}, info says {info.device}/{info.dtype}; "
                "give both the same device and dtype"
            )
        return cls(HFBackend(model, tokenizer, info.context_length, options), info)

    def with_options(self, **changes: Unpack[RuntimeKeywords]) -> Judge:
        """This judge, on the same weights, with other run-time engine settings.

        For benchmarks and tests that compare settings without loading the weights again:
        `token_budget`, `tree_tolerance` and `reuse_prefix` (`engine.options.RuntimeKeywords`). The
        new judge's records say what it ran with; this judge is unchanged.

        Raises:
            ConfigError: a setting that is fixed at load (dtype, device, batch invariance...), an
                invalid value, or a judge without an engine (the fake backend).

        Examples:
            >>> exact = judge.with_options(tree_tolerance=0.0)  # doctest: +SKIP
            >>> exact.info.tree_tolerance, judge.info.tree_tolerance  # doctest: +SKIP
            (0.0, 1e-06)
        """
        if self.options is None:
            raise ConfigError(f"judge {self.info.name} has no engine options to change (a fake backend)")
        twin = Judge(self.backend.with_options(self.options.replace(**changes)), self.info)
        twin._trees = self._trees  # the same tokenizer: the same score trees
        twin.tuned_for = self.tuned_for
        twin.readings = self.readings
        return twin

    def __repr__(self) -> str:
        return f"Judge({self.info.name!r}, {self.info.dtype}, {self.info.device})"

    # -- trees --------------------------------------------------------------------------------------

    def score_tree(self, low: int, high: int) -> TokenTree:
        """The token tree of the integer scale low..high (built once per judge)."""
        key = ("score", low, high)
        if key not in self._trees:
            self._trees[key] = build_score_tree(self.backend.token_surfaces(), low, high)
        return self._trees[key]

    def label_tree(self, labels: Sequence[str]) -> TokenTree:
        """The token tree of a label scale (built once per judge)."""
        key = ("labels", tuple(labels))
        if key not in self._trees:
            self._trees[key] = build_label_tree(self.backend.token_surfaces(), tuple(labels))
        return self._trees[key]

    # -- scoring ----------------------------------------------------------------------------------

    def score_texts(
        self,
        texts: Sequence[str],
        low: int,
        high: int,
        *,
        min_valid_mass: float = DEFAULT_MIN_VALID_MASS,
        progress: Progress | None = None,
    ) -> list[ScoreDistribution]:
        """Exact distributions over the scores low..high at the end of each rendered prompt.

        Args:
            texts: prompts, already rendered; tokenised exactly as `tokenizer(text)` does.
            low: lowest valid integer score (≥ 0).
            high: highest valid integer score (≤ 100).
            min_valid_mass: below this valid mass an item is unscored (NaN, with a reason).
            progress: called with the number of prompts finished after each batch.

        Examples:
            >>> d = judge.score_texts(["Rate it from 1 to 5. Score:"], low=1, high=5)[0]  # doctest: +SKIP
            >>> d.expected, d.probs[5], d.valid_mass  # doctest: +SKIP
        """
        tree = self.score_tree(low, high)
        mass = self._mass(texts, tree, progress)
        return [score_distribution(row, low, high, min_valid_mass) for row in mass]

    def score_labels(
        self,
        texts: Sequence[str],
        labels: Sequence[str],
        *,
        min_valid_mass: float = DEFAULT_MIN_VALID_MASS,
        progress: Progress | None = None,
    ) -> list[LabelDistribution]:
        """Exact distributions over `labels` (e.g. ["A", "B"]) at the end of each prompt."""
        tree = self.label_tree(labels)
        mass = self._mass(texts, tree, progress)
        return [label_distribution(row, tuple(labels), min_valid_mass) for row in mass]

    def _mass(self, texts: Sequence[str], tree: TokenTree, progress: Progress | None):
        ids = [self.backend.encode(t) for t in texts]
        lp = self.backend.tree_logprobs(ids, tree, progress)
        return outcome_mass(tree, lp.edge_logp, lp.end_logp)

    # -- likelihood -------------------------------------------------------------------------------

    def loglikelihood(
        self, prompts: Sequence[str], continuations: Sequence[str], *, progress: Progress | None = None
    ) -> list[ContinuationLogprobs]:
        """log P(continuation | prompt), token by token, for each pair (fp32 log-softmax).

        The boundary rule (`localjudge.scoring.likelihood`): the prompt's trailing spaces move to
        the continuation, the prompt is tokenised as for scoring, and the continuation on its own,
        so the same text gets the same tokens after any prompt. Prompts sharing a prefix (an
        article its summaries follow) compute it once.

        Args:
            prompts: conditioning texts (each must give at least one token).
            continuations: texts whose likelihood is read; an empty one has no tokens (mean NaN).
            progress: called with the number of items finished after each batch.

        Examples:
            >>> ll = judge.loglikelihood(["The capital of France is"], [" Paris."])[0]  # doctest: +SKIP
            >>> ll.n_tokens, ll.sum, ll.mean, ll.min  # doctest: +SKIP
        """
        if len(prompts) != len(continuations):
            raise ConfigError(
                f"{len(prompts)} prompts but {len(continuations)} continuations; give one of each per item"
            )
        pairs = [split_boundary(p, c) for p, c in zip(prompts, continuations)]
        prompt_ids = [self.backend.encode(p) for p, _ in pairs]
        cont_ids = [self.backend.encode_continuation(c) for _, c in pairs]
        logps = self.backend.token_logprobs(prompt_ids, cont_ids, progress)
        return [
            ContinuationLogprobs(token_ids=tuple(c), logprobs=tuple(float(x) for x in lp))
            for c, lp in zip(cont_ids, logps)
        ]

    def features(
        self,
        prompts: Sequence[str],
        continuations: Sequence[str],
        layers: Sequence[int],
        *,
        progress: Progress | None = None,
    ) -> list[ContinuationFeatures]:
        """The states after each of `layers` averaged over each continuation's tokens, and its token log P's.

        Tokenised as `loglikelihood` tokenises (the boundary rule), read by the engine in one pass
        (`engine.features`); the heads of `localjudge tune --method head` read judges through it.

        Raises:
            ConfigError: a judge without hidden states (a scripted one), a count mismatch, or an
                empty continuation.
        """
        feature_pass = getattr(self.backend, "continuation_features", None)
        if feature_pass is None:
            raise ConfigError(
                f"judge {clip(self.info.name)} has no hidden states to read (a scripted judge); "
                "use a model judge (`localjudge models`)"
            )
        if len(prompts) != len(continuations):
            raise ConfigError(f"{len(prompts)} prompts but {len(continuations)} continuations; give one of each")
        pairs = [split_boundary(p, c) for p, c in zip(prompts, continuations)]
        prompt_ids = [self.backend.encode(p) for p, _ in pairs]
        cont_ids = [self.backend.encode_continuation(c) for _, c in pairs]
        empty = next((i for i, c in enumerate(cont_ids) if not c), None)
        if empty is not None:
            raise ConfigError(f"continuation {empty} gives no tokens; a head reads outputs of one token or more")
        # each distinct output once, and none the judge read lately (a head judge's metrics read the same outputs)
        keys = [(tuple(layers), tuple(p), tuple(c)) for p, c in zip(prompt_ids, cont_ids)]
        first: dict[tuple, int] = {}
        for i, k in enumerate(keys):
            first.setdefault(k, i)
        todo = [i for k, i in first.items() if k not in self._features]
        if todo:
            got = feature_pass([prompt_ids[i] for i in todo], [cont_ids[i] for i in todo], layers, progress)
            for i, f in zip(todo, got):
                self._features[keys[i]] = f
        out = []
        for k in keys:
            self._features.move_to_end(k)
            out.append(self._features[k])
        while len(self._features) > FEATURE_MEMO:
            self._features.popitem(last=False)
        return out

    @property
    def layer_count(self) -> int | None:
        """Decoder layers of the model; None for a judge without hidden states."""
        return getattr(self.backend, "layer_count", None)

    # -- text -------------------------------------------------------------------------------------

    def generate(
        self,
        texts: Sequence[str],
        max_new_tokens: int = 128,
        progress: Progress | None = None,
        share_prefix: bool = False,
    ) -> list[str]:
        """Greedy continuations of rendered prompts (deterministic).

        `share_prefix` computes a prefix that many prompts share once (faster for short outputs
        after long shared prompts, e.g. a generate-and-parse judge), when the judge's
        `reuse_prefix` option is on, as its records say.
        """
        return self.backend.generate(texts, max_new_tokens, progress, share_prefix=share_prefix)

    def count_tokens(self, text: str) -> int:
        """Number of tokens of a rendered prompt."""
        return len(self.backend.encode(text))

    def render(self, system: str, user: str, prefill: str, *, plain: str | None = None) -> str:
        """A prompt ending inside the judge's own turn, right after `prefill`.

        Instruct judges get their chat template; base models get plain text with the same parts,
        or `plain` when given (a prompt written for base models, e.g. "Question: ...\nAnswer:").
        Every prompt localjudge sends is rendered here.
        """
        if self.info.chat_template:
            messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": user}]
            return self.backend.apply_chat_template(messages) + prefill
        if plain is not None:
            return plain
        head = f"{system}\n\n" if system else ""
        return f"{head}{user}\n\n{prefill}"
