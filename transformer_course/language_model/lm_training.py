"""Training the lesson-10 GPT on the course's prose: presets, the loop, checkpoints.

The recipe is the usual one for small GPTs (nanoGPT's, for instance): AdamW with weight decay on
the weight matrices only, a linear warmup then a cosine decay of the learning rate, gradient
clipping, random windows of the training text as batches. On a GPU the forward pass runs in
bfloat16 autocast; everything else is the same code on every device.

Every ``eval_every`` steps the loop measures the loss on *all* of the validation text, so the
logged validation curve is exact rather than an estimate. The log records wall time and CPU
time (all threads of this process), so a run on a shared machine can be reported honestly.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from transformer_course.devices import choose_device
from transformer_course.language_model.gpt import GPT, GPTConfig, next_token_loss, per_position_loss
from transformer_course.language_model.lm_data import CharCorpus, CharTokenizer, all_windows, random_blocks
from transformer_course.runtime import is_grading
from transformer_course.shipped import CHECKPOINT_DIR_VARIABLE, shipped_checkpoint
from transformer_course.step_progress import StepProgress

CHECKPOINT_FORMAT = "transformer_course.gpt/1"


@dataclass(frozen=True)
class LMSettings:
    """Everything that decides a training run of the GPT besides the text."""

    d_model: int = 96
    n_heads: int = 4
    d_ff: int = 384
    n_layers: int = 3
    dropout: float = 0.0
    positions: str = "rope"
    block_size: int = 256
    max_len: int = 256
    batch_size: int = 8
    lr: float = 3e-3
    min_lr: float = 3e-4
    warmup_steps: int = 50
    weight_decay: float = 0.1
    grad_clip: float = 1.0
    max_steps: int = 800
    time_budget_s: float | None = None
    eval_every: int = 50
    seed: int = 0

    def __post_init__(self) -> None:
        for name in ("block_size", "batch_size", "max_steps", "eval_every"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        if self.block_size > self.max_len:
            raise ValueError(f"block_size={self.block_size} exceeds max_len={self.max_len}")
        if not 0 < self.min_lr <= self.lr:
            raise ValueError(f"need 0 < min_lr <= lr, got min_lr={self.min_lr}, lr={self.lr}")
        if self.warmup_steps < 0:
            raise ValueError(f"warmup_steps must be >= 0, got {self.warmup_steps}")

    def model_config(self, vocab_size: int) -> GPTConfig:
        return GPTConfig(
            vocab_size=vocab_size,
            d_model=self.d_model,
            n_heads=self.n_heads,
            d_ff=self.d_ff,
            n_layers=self.n_layers,
            max_len=self.max_len,
            dropout=self.dropout,
            positions=self.positions,
        )


PRESETS: dict[str, LMSettings] = {
    # Under three minutes on a 2-core CPU (the shipped checkpoint is this preset, seed 0).
    "cpu": LMSettings(),
    # The same code on a GPU (Colab): a wider, deeper model with longer context, for longer.
    # Not yet run on a GPU by the course's authors.
    "gpu": LMSettings(
        d_model=384,
        n_heads=6,
        d_ff=1536,
        n_layers=6,
        dropout=0.2,
        block_size=256,
        batch_size=64,
        lr=1e-3,
        min_lr=1e-4,
        warmup_steps=200,
        max_steps=5000,
        eval_every=250,
    ),  # fmt: skip
    # The models of the position study: short context, so that 4x longer texts test extrapolation.
    "study": LMSettings(
        d_model=64,
        n_heads=4,
        d_ff=256,
        n_layers=2,
        block_size=64,
        max_len=256,
        batch_size=32,
        max_steps=800,
        eval_every=200,
    ),  # fmt: skip
    # Seconds: for tests and for trying the code path.
    "tiny": LMSettings(
        d_model=32,
        n_heads=2,
        d_ff=64,
        n_layers=1,
        block_size=32,
        max_len=128,
        batch_size=8,
        warmup_steps=5,
        max_steps=30,
        eval_every=10,
    ),  # fmt: skip
}


def lm_preset(name: str, **overrides: Any) -> LMSettings:
    """A named preset with any field overridden (``lm_preset("cpu", seed=1)``)."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    unknown = set(overrides) - set(LMSettings.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown settings {sorted(unknown)}")
    return replace(PRESETS[name], **overrides)


def learning_rate(step: int, settings: LMSettings) -> float:
    """Linear warmup to ``lr`` over ``warmup_steps``, then a cosine down to ``min_lr`` at ``max_steps``."""
    if step < settings.warmup_steps:
        return settings.lr * (step + 1) / settings.warmup_steps
    span = max(1, settings.max_steps - settings.warmup_steps)
    progress = min(1.0, (step - settings.warmup_steps) / span)
    return settings.min_lr + 0.5 * (settings.lr - settings.min_lr) * (1 + math.cos(math.pi * progress))


@dataclass
class LMLogEntry:
    step: int
    train_loss: float
    valid_loss: float
    lr: float
    elapsed_s: float
    cpu_s: float


@dataclass
class LMState:
    step: int = 0
    elapsed_s: float = 0.0
    cpu_s: float = 0.0
    log: list[LMLogEntry] = field(default_factory=list)


def run_summary(state: LMState) -> dict[str, float | int]:
    """A run's steps, times and last losses, under the keys of the training command's report.

    Lesson 10 prints these for the run it just trained (``TRAIN_NOW``) exactly as it prints the
    shipped checkpoint's report.
    """
    if not state.log:
        raise ValueError("the run has no logged step yet: it reports after its first evaluation")
    last = state.log[-1]
    return {
        "steps": state.step,
        "train_wall_s": round(state.elapsed_s, 1),
        "train_cpu_s": round(state.cpu_s, 1),
        "final_train_loss": round(last.train_loss, 4),
        "final_valid_loss": round(last.valid_loss, 4),
    }


def _autocast(device: torch.device):
    if device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return nullcontext()


@torch.no_grad()
def evaluate_loss(model: GPT, ids: Tensor, block_size: int, batch_size: int = 64) -> float:
    """Mean next-token loss over every non-overlapping ``block_size`` window of ``ids``."""
    was_training = model.training
    model.eval()
    device = model.tokens.weight.device
    inputs, targets = all_windows(ids, block_size)
    total = 0.0
    for i in range(0, len(inputs), batch_size):
        x, y = inputs[i : i + batch_size].to(device), targets[i : i + batch_size].to(device)
        with _autocast(device):
            logits = model(x)
        total += float(next_token_loss(logits, y)) * len(x)
    model.train(was_training)
    return total / len(inputs)


@torch.no_grad()
def loss_by_position(model: GPT, ids: Tensor, length: int, batch_size: int = 16) -> Tensor:
    """``(length,)``: the loss at each position of ``length``-token windows, averaged over windows."""
    was_training = model.training
    model.eval()
    device = model.tokens.weight.device
    inputs, targets = all_windows(ids, length)
    total = torch.zeros(length, dtype=torch.float64)
    for i in range(0, len(inputs), batch_size):
        x, y = inputs[i : i + batch_size].to(device), targets[i : i + batch_size].to(device)
        total += per_position_loss(model(x), y).double().cpu() * len(x)
    model.train(was_training)
    return total / len(inputs)


def untrained_gpt(settings: LMSettings, vocab_size: int) -> GPT:
    """The model a run with ``settings`` starts from (seeded), on the CPU."""
    torch.manual_seed(settings.seed)
    return GPT(settings.model_config(vocab_size))


class LMTrainer:
    """Owns the model, optimizer and batch generator of one run."""

    def __init__(self, settings: LMSettings, corpus: CharCorpus, device: torch.device | str | None = None):
        self.settings = settings
        self.corpus = corpus
        self.device = choose_device(None if device is None else str(device))
        self.model = untrained_gpt(settings, corpus.tokenizer.vocab_size).to(self.device)
        decay = [p for n, p in self.model.named_parameters() if p.dim() == 2 and "blocks." in n]
        no_decay = [p for n, p in self.model.named_parameters() if not (p.dim() == 2 and "blocks." in n)]
        self.optimizer = torch.optim.AdamW(
            [
                {"params": decay, "weight_decay": settings.weight_decay},
                {"params": no_decay, "weight_decay": 0.0},
            ],
            lr=settings.lr,
            betas=(0.9, 0.99),
        )
        self.batches = torch.Generator().manual_seed(settings.seed)
        self.state = LMState()

    def train_step(self) -> float:
        self.model.train()
        for group in self.optimizer.param_groups:
            group["lr"] = learning_rate(self.state.step, self.settings)
        x, y = random_blocks(
            self.corpus.train, self.settings.block_size, self.settings.batch_size, self.batches
        )
        x, y = x.to(self.device), y.to(self.device)
        with _autocast(self.device):
            logits = self.model(x)
        loss = next_token_loss(logits, y)
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.settings.grad_clip)
        self.optimizer.step()
        self.state.step += 1
        return float(loss.detach())

    def valid_loss(self) -> float:
        return evaluate_loss(self.model, self.corpus.valid, self.settings.block_size)

    def train(self, callback: Callable[[LMLogEntry], None] | None = None, progress: bool = False) -> LMState:
        """Train until ``max_steps`` or the time budget; log (and call back) every ``eval_every``.

        ``progress`` shows a bar sized to the steps that will really run and a last line saying
        why training stopped (:mod:`transformer_course.step_progress`).
        """
        settings = self.settings
        shown = StepProgress(
            "training", settings.max_steps, self.state.step, settings.time_budget_s, enabled=progress
        )
        wall_start, cpu_start = time.perf_counter(), time.process_time()
        window: list[float] = []
        losses, ended = "", False
        try:
            while self.state.step < settings.max_steps:
                if (
                    settings.time_budget_s is not None
                    and time.perf_counter() - wall_start >= settings.time_budget_s
                ):
                    break
                window.append(self.train_step())
                step = self.state.step
                if step % settings.eval_every == 0 or step == settings.max_steps:
                    entry = LMLogEntry(
                        step=step,
                        train_loss=sum(window) / len(window),
                        valid_loss=self.valid_loss(),
                        lr=learning_rate(step - 1, settings),
                        elapsed_s=self.state.elapsed_s + time.perf_counter() - wall_start,
                        cpu_s=self.state.cpu_s + time.process_time() - cpu_start,
                    )
                    self.state.log.append(entry)
                    window = []
                    losses = f"loss: training {entry.train_loss:.3f}, validation {entry.valid_loss:.3f}"
                    if callback is not None:
                        callback(entry)
                shown.advance(step, losses)
            ended = True
        finally:
            shown.close(interrupted=not ended)
            self.state.elapsed_s += time.perf_counter() - wall_start
            self.state.cpu_s += time.process_time() - cpu_start
        return self.state

    def save(self, path: str | Path, extra: dict[str, Any] | None = None) -> Path:
        """An inference checkpoint: float16 weights, config, tokenizer, settings, log."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        weights = {
            k: (v.half() if v.is_floating_point() else v).cpu()
            for k, v in self.model.state_dict().items()
            if k != "lm_head.weight"  # tied to tokens.weight
        }
        torch.save(
            {
                "format": CHECKPOINT_FORMAT,
                "config": asdict(self.model.config),
                "settings": asdict(self.settings),
                "characters": self.corpus.tokenizer.characters,
                "text_sha256": self.corpus.sha256,
                "model": weights,
                "state": {
                    "step": self.state.step,
                    "elapsed_s": self.state.elapsed_s,
                    "cpu_s": self.state.cpu_s,
                    "log": [asdict(e) for e in self.state.log],
                },
                **(extra or {}),
            },
            path,
        )
        return path


@dataclass
class TrainedGPT:
    """A loaded checkpoint: the model (eval mode, float32), its tokenizer and its training record."""

    model: GPT
    tokenizer: CharTokenizer
    settings: LMSettings
    state: LMState
    text_sha256: str


def load_gpt(path: str | Path, device: torch.device | str | None = "cpu") -> TrainedGPT:
    """Load a checkpoint written by :meth:`LMTrainer.save`."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no checkpoint at {path}; train one with "
            "`python -m transformer_course.train_gpt --preset cpu --out-dir <folder>`"
        )
    data = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(data, dict) or data.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(
            f"{path} is not a GPT checkpoint written by transformer_course.language_model.lm_training"
        )
    model = GPT(GPTConfig(**data["config"]))
    weights = {k: v.float() for k, v in data["model"].items()}
    weights["lm_head.weight"] = weights["tokens.weight"]
    model.load_state_dict(weights)
    model.to(choose_device(None if device is None else str(device))).eval()
    state = data["state"]
    return TrainedGPT(
        model=model,
        tokenizer=CharTokenizer(data["characters"]),
        settings=LMSettings(**data["settings"]),
        state=LMState(
            step=state["step"],
            elapsed_s=state["elapsed_s"],
            cpu_s=state["cpu_s"],
            log=[LMLogEntry(**e) for e in state["log"]],
        ),
        text_sha256=data["text_sha256"],
    )


def shipped_gpt_file(name: str) -> Path:
    """A file of lesson 10's shipped results: the package's ``checkpoints/`` folder, or the folder
    ``$TRANSFORMER_COURSE_CHECKPOINTS`` names."""
    try:
        return shipped_checkpoint(name)
    except FileNotFoundError:
        raise FileNotFoundError(
            f"{name} was not found in the course package's checkpoints/ folder nor in "
            f"${CHECKPOINT_DIR_VARIABLE}; reinstall the package or retrain with "
            "`python -m transformer_course.train_gpt --preset cpu --out-dir <folder>`"
        ) from None


@dataclass
class LessonGPT:
    """The GPT lesson 10 studies and the record of the run that made it: ``run`` has
    :func:`run_summary`'s keys (the shipped checkpoint's report adds its command and hardware)."""

    model: GPT
    log: list[LMLogEntry]
    settings: LMSettings
    run: dict[str, Any]
    trained_here: bool


def lesson_gpt(corpus: CharCorpus, train: bool) -> LessonGPT:
    """Lesson 10's GPT: trained now on ``corpus`` with the CPU preset when ``train``, else the
    shipped checkpoint, which must have been trained on exactly that text.

    While nbgrader grades the notebook the checkpoint is loaded whatever ``train`` says: no graded
    answer depends on the model, and grading must take seconds. The check lives here so that the
    lesson's cell shows only the student's choice.
    """
    if train and not is_grading():
        trainer = LMTrainer(lm_preset("cpu"), corpus, device="cpu")
        trainer.train(progress=True)
        return LessonGPT(
            trainer.model.eval(), trainer.state.log, trainer.settings, run_summary(trainer.state), True
        )
    trained = load_gpt(shipped_gpt_file("gpt_cpu.pt"))
    if trained.text_sha256 != corpus.sha256:
        raise ValueError(
            "the shipped checkpoint was trained on a different text than this corpus; retrain it with "
            "`bash scripts/regenerate_gpt.sh`, or set TRAIN_NOW = True"
        )
    report = json.loads(shipped_gpt_file("gpt_cpu.json").read_text(encoding="utf-8"))
    return LessonGPT(trained.model, trained.state.log, trained.settings, report, False)
