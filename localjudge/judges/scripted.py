"""A scripted fake backend for fast tests, yours and ours, with no model weights.

The fake tokenizer has one token per printable ASCII character, so every outcome has exactly one
token path per spelling. A *policy* maps a prompt to the probabilities of whole outcomes
(e.g. ``{"7": 0.6, " 8": 0.3}``); the fake turns them into consistent next-token probabilities
at every node of a token tree, and the rest of the mass goes to a non-outcome token.

Examples:
    >>> from localjudge.testing import fake_judge
    >>> judge = fake_judge(lambda prompt: {"4": 0.5, "5": 0.5})
    >>> judge.score_texts(["Score:"], low=1, high=5)[0].expected
    4.5
"""

from __future__ import annotations

import importlib
import math
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from localjudge.engine.backend import Generation, GenerationRequest
from localjudge.engine.options import EngineOptions
from localjudge.errors import ConfigError
from localjudge.judges.judge import Judge, JudgeInfo
from localjudge.judges.registry import ScriptedSource
from localjudge.scoring.distribution import TreeLogprobs
from localjudge.scoring.trie import TokenTree

Policy = Callable[[str], dict[str, float]]
LM = Callable[[str, str], Sequence[float]]
# the last token stands for every other character, one character wide (U+FFFD), so that decoding keeps
# a text's length and the fake lm gets one character per token of a continuation with non-ASCII text
_VOCAB = [chr(c) for c in range(32, 127)] + ["\n", "\ufffd"]
_OTHER = len(_VOCAB) - 1
_ID = {c: i for i, c in enumerate(_VOCAB)}


class FakeBackend:
    """A backend whose outcome probabilities come from a policy function.

    Args:
        policy: prompt -> {outcome text: probability}; probabilities may sum to less than 1.
        generator: prompt -> generated text, for reasoning and step generation.
        max_context: longest prompt in characters.
        lm: (prompt, continuation) -> log-probability of each continuation character, for
            likelihood metrics; default `copy_lm`.
    """

    def __init__(
        self,
        policy: Policy,
        generator: Callable[[str], str] | None = None,
        max_context: int = 100_000,
        lm: LM | None = None,
    ):
        self.policy = policy
        self.lm = lm or copy_lm
        self.generator = generator or (lambda prompt: "The answer is adequate.")
        self.max_context = max_context
        self.calls: list[str] = []  # prompts seen, in order, so tests can count model calls
        self.options = None  # no batching engine: nothing to set, and records carry no engine fields

    def record(self) -> dict[str, Any]:
        """No engine, so nothing for `JudgeInfo` to record."""
        return {}

    def with_options(self, options: EngineOptions) -> FakeBackend:
        raise ConfigError("a fake backend has no engine options to change; build another fake judge instead")

    def encode(self, text: str) -> list[int]:
        return [_ID.get(c, _OTHER) for c in text]

    def decode(self, ids: Sequence[int]) -> str:
        return "".join(_VOCAB[i] for i in ids)

    def token_surfaces(self) -> list[str]:
        return list(_VOCAB)

    def apply_chat_template(self, messages: list[dict[str, str]]) -> str:
        return "".join(f"<{m['role']}>\n{m['content']}\n" for m in messages) + "<assistant>\n"

    def tree_logprobs(self, ids, tree: TokenTree, progress=None) -> TreeLogprobs:
        edge = np.zeros((len(ids), tree.n_nodes))
        end = np.zeros((len(ids), tree.n_nodes))
        continues = set(tree.continue_ids.tolist())
        for b, row in enumerate(ids):
            prompt = self.decode(row)
            self.calls.append(prompt)
            outcomes = self.policy(prompt)
            for node in range(tree.n_nodes):
                text = tree.texts[node]
                here = sum(p for o, p in outcomes.items() if o.startswith(text)) if node else 1.0
                if node:
                    parent = (
                        sum(p for o, p in outcomes.items() if o.startswith(tree.texts[tree.parents[node]]))
                        if tree.parents[node]
                        else 1.0
                    )
                    edge[b, node] = _log(here / parent) if parent > 0 else -math.inf
                # the outcome ends here unless a longer outcome continues with a word/digit char
                cont = sum(
                    p
                    for o, p in outcomes.items()
                    if o.startswith(text) and len(o) > len(text) and _ID.get(o[len(text)], _OTHER) in continues
                )
                end[b, node] = _log(1 - cont / here) if here > 0 else 0.0
            if progress:
                progress(1)
        return TreeLogprobs(edge, end)

    def generate(self, prompts, max_new_tokens, progress=None, share_prefix=False) -> list[str]:
        self.calls.extend(prompts)
        return [self.generator(p) for p in prompts]

    def encode_continuation(self, text: str) -> list[int]:
        return self.encode(text)

    def token_logprobs(self, prompts, continuations, progress=None, top: int = 0) -> list[np.ndarray]:
        out = []
        for p, c in zip(prompts, continuations):
            prompt, cont = self.decode(p), self.decode(c)
            self.calls.append(prompt)
            lp = np.asarray(self.lm(prompt, cont), dtype=np.float64)
            assert lp.shape == (len(c),), "the fake lm gives one log-probability per character"
            out.append(_with_top(lp, c, top) if top else lp)
        if progress:
            progress(len(prompts))
        return out

    def generate_logprobs(self, requests: Sequence[GenerationRequest], top: int) -> list[Generation]:
        """Greedy continuations read one step at a time: the fake's distribution after a text is the one
        `token_logprobs` gives a space there (the space's log P, the rest on the <other> token), so each
        step reads a space after the prompt and the tokens so far and takes the likelier of the two.
        An echoed prompt's first step is read in the same call as its tokens (their `lm` call)."""
        return [self._generate_one(r, top) for r in requests]

    def _generate_one(self, request: GenerationRequest, top: int) -> Generation:
        ids, space = list(request.ids), _ID[" "]
        prompt, text = np.zeros((0, 1 + 2 * top)), ""
        tokens: list[int] = []
        readings: list[np.ndarray] = []
        if request.echo and len(ids) > 1:
            rows = self.token_logprobs([ids[:1]], [ids[1:] + [space] * (request.max_new_tokens > 0)], top=top)[0]
            prompt = rows[: len(ids) - 1]
        for step in range(request.max_new_tokens):
            if not (step == 0 and request.echo and len(ids) > 1):
                rows = self.token_logprobs([ids + tokens], [[space]], top=top)[0]
            row = rows[-1].copy()
            token = int(row[1 + top])
            row[0] = row[1]
            tokens.append(token)
            readings.append(row)
            text += _VOCAB[token]
            if any(s in text for s in request.stops):
                return Generation(prompt, tokens, np.array(readings), "stop")
        return Generation(prompt, tokens, np.array(readings).reshape(len(tokens), 1 + 2 * top), "length")

    def eos_ids(self) -> set[int]:
        """None: the fake's generations end where its generator's text does."""
        return set()


def copy_lm(prompt: str, continuation: str) -> list[float]:
    """A fake language model that finds text likely when the prompt contains it.

    Each character of the continuation gets log-probability -0.5 when the prompt contains it
    together with the character before it, else -3.0: a continuation copied from the prompt is
    likely, one that is not is unlikely, so likelihood and PMI metrics have a signal to test.
    """
    before = prompt[-1:] or " "
    out = []
    for ch in continuation:
        out.append(-0.5 if before + ch in prompt else -3.0)
        before = ch
    return out


def _with_top(lp: np.ndarray, ids: Sequence[int], top: int) -> np.ndarray:
    """The fake's full distribution at each position: the scripted token, the rest of the mass on <other>.

    (n, 1 + 2 * top) as `Backend.token_logprobs` gives it: the token's log P, the top log P's, their ids;
    a slot past the two tokens with mass holds id -1 and log P -inf.
    """
    out = np.full((len(lp), 1 + 2 * top), -np.inf)
    out[:, 1 + top :] = -1
    out[:, 0] = lp
    for n, (x, token) in enumerate(zip(lp, ids)):
        rest = math.log1p(-math.exp(x)) if x < 0 else -math.inf
        spread = [(x, token)] + ([(rest, _OTHER)] if token != _OTHER else [])
        ranked = sorted((s for s in spread if s[0] > -math.inf), key=lambda s: (-s[0], s[1]))[:top]
        for k, (value, tid) in enumerate(ranked):
            out[n, 1 + k], out[n, 1 + top + k] = value, tid
    return out


def _log(x: float) -> float:
    return math.log(x) if x > 0 else -math.inf


def fake_judge(
    policy: Policy,
    generator: Callable[[str], str] | None = None,
    *,
    name: str = "fake",
    family: str = "fake",
    chat_template: bool = True,
    lm: LM | None = None,
    source: str = "fake",
    context_length: int = 100_000,
) -> Judge:
    """A `Judge` around a `FakeBackend`, for tests that need no model."""
    info = JudgeInfo(
        name=name,
        family=family,
        source=source,
        provenance="fake",
        dtype="float32",
        device="cpu",
        chat_template=chat_template,
        context_length=context_length,
    )
    return Judge(FakeBackend(policy, generator, lm=lm), info)


def scripted_judge(name: str, family: str, source: ScriptedSource, context_length: int, chat: bool) -> Judge:
    """The judge a `scripted` registry entry names: its functions imported, a fresh `FakeBackend` around them.

    Raises:
        ConfigError: A function is not `module:attribute`, or cannot be imported, or is not callable.
    """
    return fake_judge(
        _function(source.policy, name, "policy"),
        _function(source.generator, name, "generator") if source.generator else None,
        name=name,
        family=family,
        chat_template=chat,
        lm=_function(source.lm, name, "lm") if source.lm else None,
        source=source.describe(),
        context_length=context_length,
    )


def _function(spec: str, judge: str, role: str) -> Callable[..., Any]:
    module, _, attribute = spec.partition(":")
    if not module or not attribute:
        raise ConfigError(f"scripted judge {judge!r}: its {role} {spec!r} is not module:attribute")
    try:
        found = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(f"scripted judge {judge!r}: cannot import its {role} {spec!r} ({exc})") from None
    if not callable(found):
        raise ConfigError(f"scripted judge {judge!r}: its {role} {spec!r} is not a function")
    return found


@dataclass(frozen=True)
class ScriptedLoad:
    """One `load_judge` call answered by a `ScriptedJudges` table: what the caller asked for."""

    name: str
    """The name asked for; the registry's default when the caller named none."""
    family: str | None = None
    device: str | None = None
    dtype: str | None = None
    registry_path: Path | None = None
    progress: bool = True


Scripted = Judge | Callable[[ScriptedLoad], Judge]
"""What a `ScriptedJudges` name holds: a judge, or a function from the load asked for to a judge."""


class UnscriptedLoad(RuntimeError):
    """A judge was loaded while a `ScriptedJudges` table was active, under a name it does not hold.

    Not a user error: a test that meant no model to load, or forgot to script one, fails loudly
    instead of loading real weights or exiting as a command-line mistake would.
    """


@dataclass
class ScriptedJudges:
    """The judges `load_judge` returns, by name, while the table is active (`scripted_judges`).

    Each name holds a `Judge`, returned as it is (with the family a caller names, when one does),
    or a function of the `ScriptedLoad`, called on every load; `add_any` answers the names not
    added. Every load is kept in `loads`, the judge it returned in `judges`; a name the table
    cannot answer raises `UnscriptedLoad`, so no real model loads while it is active.
    """

    held: dict[str, Scripted] = field(default_factory=dict)
    loads: list[ScriptedLoad] = field(default_factory=list)
    judges: list[Judge] = field(default_factory=list)
    any_name: Scripted | None = None

    def add(self, name: str, judge: Scripted) -> None:
        """Answers loads of `name` with `judge` (or what it returns) from now on."""
        self.held[name] = judge

    def add_any(self, judge: Scripted) -> None:
        """Answers loads of every name not added (the registry's default included) with `judge`."""
        self.any_name = judge

    def load(self, asked: ScriptedLoad) -> Judge:
        held = self.held.get(asked.name, self.any_name)
        if held is None:
            names = ", ".join(sorted(self.held)) or "none"
            raise UnscriptedLoad(f"a judge named {asked.name!r} was loaded; the scripted judges are: {names}")
        self.loads.append(asked)
        judge = held if isinstance(held, Judge) else held(asked)
        if isinstance(held, Judge) and asked.family is not None and asked.family != judge.info.family:
            judge = Judge(judge.backend, judge.info.model_copy(update={"family": asked.family}))
        self.judges.append(judge)
        return judge


_TABLE: ContextVar[ScriptedJudges | None] = ContextVar("localjudge_scripted_judges", default=None)
"""The table `scripted_judges` set for the code running in this context (thread, task), if any."""


@contextmanager
def scripted_judges(judges: dict[str, Scripted] | None = None) -> Iterator[ScriptedJudges]:
    """Within the block, `load_judge` (and every command's `--judge`) is answered by a table of scripted judges.

    The fake judge chosen by name through the public loading path, as inspect_ai's `mockllm`:
    code under test loads judges as it always does, by name; no import path is patched. The
    pytest plugin's `localjudge_scripted` fixture holds such a table for one test. The table holds
    for the code of this thread or task (a `contextvars` context): a thread started inside the
    block sees none and loads real judges.

    Examples:
        >>> from localjudge import load_judge
        >>> with scripted_judges({"grader": fake_judge(lambda p: {"4": 1.0})}) as table:
        ...     load_judge("grader").score_texts(["Score:"], 1, 5)[0].expected
        4.0
        >>> [load.name for load in table.loads]
        ['grader']
    """
    table = ScriptedJudges(dict(judges or {}))
    token = _TABLE.set(table)
    try:
        yield table
    finally:
        _TABLE.reset(token)


def active_table() -> ScriptedJudges | None:
    """The innermost `scripted_judges` table of this context (a thread or task of its own sees none), if any."""
    return _TABLE.get()
