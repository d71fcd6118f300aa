"""Training settings and the named presets of lesson 9's translator.

A :class:`TrainSettings` is everything that decides a run besides the data: the model (a
:class:`~transformer_course.translation.model.TransformerConfig`, held whole rather than copied field by
field), the optimization recipe, the batch size in tokens, the length of the run and the seed.
The model's vocabulary size is also the size of the BPE vocabulary to learn: source and target
share one vocabulary, so that the embeddings can be tied as in the paper.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields, replace
from typing import Any

from transformer_course.translation.model import TransformerConfig


@dataclass(frozen=True)
class TrainSettings:
    """The model, the paper's recipe at a small scale, and how long to run it."""

    model: TransformerConfig
    label_smoothing: float = 0.1
    warmup_steps: int = 200
    lr_factor: float = 1.0
    max_tokens: int = 2000
    max_steps: int = 1200
    time_budget_s: float | None = None
    n_train: int = 40_000
    seed: int = 0
    log_every: int = 25
    compile: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.model, TransformerConfig):
            raise TypeError(f"model must be a TransformerConfig, got {type(self.model).__name__}")
        if self.model.src_vocab_size != self.model.tgt_vocab_size:
            raise ValueError(
                "the translator trains one BPE vocabulary shared by both languages, so the model's "
                f"src_vocab_size and tgt_vocab_size must be equal (got {self.model.src_vocab_size} "
                f"and {self.model.tgt_vocab_size})"
            )
        if self.max_tokens < 64:
            raise ValueError(f"max_tokens must be at least 64, got {self.max_tokens}")
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be positive, got {self.max_steps}")
        if self.warmup_steps < 1:
            raise ValueError(f"warmup_steps must be positive, got {self.warmup_steps}")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1), got {self.label_smoothing}")

    @property
    def vocab_size(self) -> int:
        """The shared BPE vocabulary to learn, which is also the model's vocabulary."""
        return self.model.src_vocab_size

    def with_vocabulary(self, vocab_size: int) -> TrainSettings:
        """These settings for a trained tokenizer: BPE stops early when a corpus has few pairs."""
        model = replace(self.model, src_vocab_size=vocab_size, tgt_vocab_size=vocab_size)
        return replace(self, model=model)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> TrainSettings:
        """The inverse of :meth:`to_dict` (what a checkpoint stores)."""
        return cls(**{**data, "model": TransformerConfig(**data["model"])})


def _model(vocab_size: int, **sizes: Any) -> TransformerConfig:
    """A translator's model: one shared vocabulary, tied embeddings, sentences up to 128 tokens."""
    return TransformerConfig(
        src_vocab_size=vocab_size, tgt_vocab_size=vocab_size, max_len=128, share_embeddings=True, **sizes
    )


PRESETS: dict[str, TrainSettings] = {
    # A few minutes on a 2-core CPU: training stops at 1200 steps or after 240 s, whichever comes
    # first, so that on a busy machine the whole command still ends within about 5 minutes. The
    # shipped checkpoint is this preset's command (with --beam).
    "quick": TrainSettings(
        model=_model(2000, d_model=128, n_heads=4, d_ff=512, n_encoder_layers=2, n_decoder_layers=2),
        max_steps=1200,
        time_budget_s=240.0,
    ),
    # A GPU run: a wider, deeper model on a bigger corpus for longer.
    "full": TrainSettings(
        model=_model(4000, d_model=256, n_heads=8, d_ff=1024, n_encoder_layers=3, n_decoder_layers=3),
        warmup_steps=1000,
        max_tokens=8000,
        max_steps=8000,
        n_train=200_000,
    ),
    # Seconds: for tests and for trying the code path.
    "tiny": TrainSettings(
        model=_model(300, d_model=32, n_heads=2, d_ff=64, n_encoder_layers=1, n_decoder_layers=1),
        warmup_steps=10,
        max_tokens=600,
        max_steps=20,
        n_train=600,
    ),
}

MODEL_FIELDS = frozenset(f.name for f in fields(TransformerConfig))
RUN_FIELDS = frozenset(f.name for f in fields(TrainSettings)) - {"model"}


def preset(name: str, **overrides: Any) -> TrainSettings:
    """A named preset with any field of the settings or of the model changed.

    ``preset("quick", n_heads=1, seed=3)`` changes the model's heads and the run's seed;
    ``vocab_size`` sets both vocabulary sizes at once.
    """
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    unknown = set(overrides) - MODEL_FIELDS - RUN_FIELDS - {"vocab_size"}
    if unknown:
        raise ValueError(
            f"unknown settings {sorted(unknown)}; a setting is a field of TrainSettings "
            f"({sorted(RUN_FIELDS)}), of TransformerConfig ({sorted(MODEL_FIELDS)}) or vocab_size"
        )
    settings = PRESETS[name]
    if "vocab_size" in overrides:
        settings = settings.with_vocabulary(overrides.pop("vocab_size"))
    model_changes = {k: v for k, v in overrides.items() if k in MODEL_FIELDS}
    run_changes = {k: v for k, v in overrides.items() if k in RUN_FIELDS}
    return replace(settings, model=replace(settings.model, **model_changes), **run_changes)
