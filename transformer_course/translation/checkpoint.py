"""What a translator checkpoint holds (lesson 9).

Training writes checkpoints and can resume from them; translation only reads them. Both share
this module and neither imports the other (where the shipped ones are is
:mod:`transformer_course.shipped`'s job, shared with lesson 10's GPT). A checkpoint is a dict for
``torch.save`` with the settings, the tokenizer, the weights and the run's record
(:class:`TrainingState`: steps, time, tokens and the loss log); a resumable one adds the
optimizer, the schedule and the random state. Files are read with ``weights_only=True``, so
loading one runs no code from it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

FORMAT = "transformer_course.translator/2"


@dataclass
class LogEntry:
    """One line of the training log: the mean loss of the last ``log_every`` steps."""

    step: int
    loss: float
    lr: float
    tokens_per_s: float
    elapsed_s: float


@dataclass
class TrainingState:
    """What a checkpoint holds besides the weights: the log and the clock."""

    step: int = 0
    elapsed_s: float = 0.0
    tokens_seen: int = 0
    log: list[LogEntry] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> TrainingState:
        return cls(
            step=state["step"],
            elapsed_s=state["elapsed_s"],
            tokens_seen=state["tokens_seen"],
            log=[LogEntry(**e) for e in state["log"]],
        )


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The dict saved by ``Trainer.save``, on the CPU, after checking that it is one."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no checkpoint at {path}; train one with "
            "`python -m transformer_course.train --preset quick --out <path>`"
        )
    data = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        found = data.get("format") if isinstance(data, dict) else type(data).__name__
        raise ValueError(
            f"{path} is not a translator checkpoint of this version of the course (format "
            f"{found!r}, expected {FORMAT!r}); train a new one with `python -m transformer_course.train`"
        )
    return data
