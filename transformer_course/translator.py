"""A trained translator loaded from a checkpoint, ready to translate (lesson 9).

Loading needs none of the training machinery: the checkpoint carries the settings (the model's
configuration among them), the tokenizer and the weights. Weights may be stored in float16 to
halve a shipped file; they are loaded back in float32.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from transformer_course.checkpoint import TrainingState, read_checkpoint
from transformer_course.devices import choose_device
from transformer_course.model import Transformer
from transformer_course.settings import TrainSettings
from transformer_course.tokenization import SubwordTokenizer


@dataclass
class Translator:
    """A trained model with its tokenizer and the record of how it was trained."""

    model: Transformer
    tokenizer: SubwordTokenizer
    settings: TrainSettings
    state: TrainingState

    @property
    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())


def load_translator(path: str | Path, device: torch.device | str | None = None) -> Translator:
    """Load any checkpoint of ``Trainer.save`` for translation, in eval mode."""
    data = read_checkpoint(path)
    settings = TrainSettings.from_dict(data["settings"])
    model = Transformer(settings.model)
    model.load_state_dict({k: v.float() for k, v in data["model"].items()})
    model.to(choose_device(device)).eval()
    return Translator(
        model=model,
        tokenizer=SubwordTokenizer.from_json(data["tokenizer"]),
        settings=settings,
        state=TrainingState.from_dict(data["state"]),
    )
