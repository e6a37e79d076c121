"""Request parts that several endpoints share: chat messages, a score scale, and what the judge reads from them.

Everything a client sends is validated by a pydantic model with extra="forbid" (an unknown field is
a 422 naming it); what needs the judge or the library (a scale's validity, a chat template) is
checked here, before any job is queued.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from localjudge.errors import ConfigError
from localjudge.judges.judge import Judge
from localjudge.scoring.distribution import DEFAULT_MIN_VALID_MASS
from localjudge.scoring.trie import label_spellings, validate_scale
from localjudge.serve.http import RequestError
from localjudge.serve.operations import Score


class Strict(BaseModel):
    """A request model: unknown fields refused."""

    model_config = ConfigDict(extra="forbid")


class TextPart(Strict):
    """One text part of a message's content (OpenAI's list form)."""

    type: Literal["text"] = Field(description="Only text parts: the judge reads text.")
    text: str = Field(description="The text.")


class ChatMessage(Strict):
    """One message of a conversation."""

    role: Literal["system", "developer", "user", "assistant"] = Field(description="Who speaks.")
    content: str | list[TextPart] = Field(description="The text, or text parts joined in order.")
    name: str | None = Field(default=None, description="Accepted and ignored (OpenAI clients send it).")

    @property
    def text(self) -> str:
        return self.content if isinstance(self.content, str) else "".join(p.text for p in self.content)


class ScaleSpec(Strict):
    """A score scale (low..high) or a label scale, read at the score position with its valid mass floor."""

    low: int | None = Field(default=None, description="Lowest score.")
    high: int | None = Field(default=None, description="Highest score.")
    labels: list[str] | None = Field(default=None, description="A label scale instead of scores, e.g. ['A', 'B'].")
    min_valid_mass: float | None = Field(
        default=None, ge=0, le=1, description="Below this valid mass an item is unscored [default: 0.1]."
    )

    def operation(self, where: str) -> Score:
        """The `Score` operation of this scale, checked as `localjudge score` checks it (422 naming `where`)."""
        try:
            if self.labels is not None:
                if self.low is not None or self.high is not None:
                    raise ConfigError("give either a scale (low, high) or labels, not both")
                label_spellings(self.labels)
            else:
                if self.low is None or self.high is None:
                    raise ConfigError("give a scale with low and high, or labels")
                validate_scale(self.low, self.high)
        except ConfigError as exc:
            raise RequestError(422, f"{where}: {exc}", param=where) from None
        mass = DEFAULT_MIN_VALID_MASS if self.min_valid_mass is None else self.min_valid_mass
        labels = tuple(self.labels) if self.labels is not None else None
        return Score(self.low, self.high, labels, mass)


def render_chat(judge: Judge, messages: list[ChatMessage], where: str = "messages") -> str:
    """The conversation in the judge's chat format, ending where its turn begins.

    A last assistant message is a prefill: the prompt ends inside the judge's turn, after that text
    (the score position of a prompt ending "Score:").
    """
    if not messages:
        raise RequestError(422, f"{where}: give at least one message", param=where)
    if not judge.info.chat_template:
        raise RequestError(
            400, f"judge {judge.info.name} has no chat template; send a rendered prompt to /v1/completions instead"
        )
    prefill = ""
    if messages[-1].role == "assistant":
        prefill, messages = messages[-1].text, messages[:-1]
    turns: list[dict[str, str]] = [
        {"role": "system" if m.role == "developer" else m.role, "content": m.text} for m in messages
    ]
    if not turns:
        raise RequestError(422, f"{where}: a conversation needs a message before the assistant's", param=where)
    return judge.backend.apply_chat_template(turns) + prefill


def score_reading(prompt: str, dist: Any, min_valid_mass: float) -> dict[str, Any]:
    """One distribution as `localjudge score` prints it: prompt tail, threshold, then the distribution's fields."""
    from localjudge.stats.numbers import finite_json

    return {"prompt": prompt[-60:], "min_valid_mass": min_valid_mass, **finite_json(dist.model_dump(mode="json"))}
