"""Training the translator: data to batches, the optimization loop, checkpoints, presets.

The recipe is the paper's (section 5): Adam with beta2 = 0.98 and eps = 1e-9, the learning rate
that warms up linearly then decays with the inverse square root of the step, label smoothing 0.1,
and batches built by *tokens* rather than sentences from pairs of similar length, so that little
compute is spent on padding. On a GPU the forward pass runs in bfloat16 autocast.

Everything random is seeded. Batches of epoch e depend only on (seed, e), and a checkpoint holds
the step, the optimizer, the schedule and the random state, so training resumed from a checkpoint
continues exactly as if it had never stopped.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import torch
from torch import Tensor

from transformer_course.corpus import ParallelCorpus, make_corpus
from transformer_course.losses import label_smoothed_cross_entropy
from transformer_course.model import Transformer, TransformerConfig
from transformer_course.schedule import (
    PAPER_ADAM_BETAS,
    PAPER_ADAM_EPS,
    transformer_lr,
    transformer_scheduler,
)
from transformer_course.tokenization import SubwordTokenizer, train_tokenizer

EncodedPair = tuple[list[int], list[int]]


# --------------------------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainSettings:
    """Everything that decides a training run besides the data."""

    d_model: int = 128
    n_heads: int = 4
    d_ff: int = 512
    n_layers: int = 2
    dropout: float = 0.1
    norm_first: bool = False
    positional_encoding: bool = True
    scale_attention: bool = True
    share_embeddings: bool = True
    label_smoothing: float = 0.1
    warmup_steps: int = 200
    lr_factor: float = 1.0
    max_tokens: int = 2000
    max_steps: int = 1200
    time_budget_s: float | None = None
    vocab_size: int = 2000
    n_train: int = 40_000
    seed: int = 0
    log_every: int = 25

    def __post_init__(self) -> None:
        if self.max_tokens < 64:
            raise ValueError(f"max_tokens must be at least 64, got {self.max_tokens}")
        if self.max_steps < 1:
            raise ValueError(f"max_steps must be positive, got {self.max_steps}")
        if self.warmup_steps < 1:
            raise ValueError(f"warmup_steps must be positive, got {self.warmup_steps}")
        if not 0.0 <= self.label_smoothing < 1.0:
            raise ValueError(f"label_smoothing must be in [0, 1), got {self.label_smoothing}")

    def model_config(self, vocab_size: int, max_len: int = 128) -> TransformerConfig:
        return TransformerConfig(
            src_vocab_size=vocab_size,
            tgt_vocab_size=vocab_size,
            d_model=self.d_model,
            n_heads=self.n_heads,
            d_ff=self.d_ff,
            n_encoder_layers=self.n_layers,
            n_decoder_layers=self.n_layers,
            dropout=self.dropout,
            max_len=max_len,
            pad_id=SubwordTokenizer.pad_id,
            norm_first=self.norm_first,
            positional_encoding=self.positional_encoding,
            scale_attention=self.scale_attention,
            share_embeddings=self.share_embeddings,
        )


PRESETS: dict[str, TrainSettings] = {
    # A few minutes on a 2-core CPU: training stops at 1200 steps (about 210 s on an idle
    # 2-core machine) or after 240 s, whichever comes first, so that on a busy machine the whole
    # command still ends within 5 minutes. The shipped checkpoint is this preset's plain command.
    "quick": TrainSettings(max_steps=1200, time_budget_s=240.0),
    # A GPU run: a wider, deeper model on a bigger corpus for longer.
    "full": TrainSettings(
        d_model=256,
        n_heads=8,
        d_ff=1024,
        n_layers=3,
        warmup_steps=1000,
        max_tokens=8000,
        max_steps=8000,
        vocab_size=4000,
        n_train=200_000,
    ),  # fmt: skip
    # Seconds: for tests and for trying the code path.
    "tiny": TrainSettings(
        d_model=32,
        n_heads=2,
        d_ff=64,
        n_layers=1,
        warmup_steps=10,
        max_tokens=600,
        max_steps=20,
        vocab_size=300,
        n_train=600,
    ),  # fmt: skip
}


def preset(name: str, **overrides: Any) -> TrainSettings:
    """A named preset, with any field overridden (``preset("quick", n_heads=1)``)."""
    if name not in PRESETS:
        raise ValueError(f"unknown preset {name!r}; choose one of {sorted(PRESETS)}")
    unknown = set(overrides) - set(TrainSettings.__dataclass_fields__)
    if unknown:
        raise ValueError(f"unknown settings {sorted(unknown)}")
    return replace(PRESETS[name], **overrides)


# --------------------------------------------------------------------------------------------
# Devices and seeds
# --------------------------------------------------------------------------------------------


def choose_device(preferred: str | None = None) -> torch.device:
    """CUDA if present, else Apple's MPS, else the CPU (or ``preferred`` when given)."""
    if preferred is not None:
        return torch.device(preferred)
    if torch.cuda.is_available():
        return torch.device("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        return torch.device("mps")
    return torch.device("cpu")


def autocast_context(device: torch.device):
    """bfloat16 autocast on CUDA (tensor cores, no loss scaling needed); full precision elsewhere."""
    if device.type == "cuda":
        return torch.autocast(device_type="cuda", dtype=torch.bfloat16)
    return nullcontext()


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


# --------------------------------------------------------------------------------------------
# Data: encoding and length-bucketed batches
# --------------------------------------------------------------------------------------------


@dataclass
class Batch:
    """Padded tensors of one batch: ``tgt_in`` starts with BOS, ``tgt_out`` ends with EOS."""

    src: Tensor
    tgt_in: Tensor
    tgt_out: Tensor

    @property
    def n_target_tokens(self) -> int:
        return int((self.tgt_out != SubwordTokenizer.pad_id).sum())

    @property
    def n_tokens(self) -> int:
        """Source plus target tokens, padding excluded: what tokens/s counts."""
        return self.n_target_tokens + int((self.src != SubwordTokenizer.pad_id).sum())

    def to(self, device: torch.device) -> Batch:
        return Batch(self.src.to(device), self.tgt_in.to(device), self.tgt_out.to(device))


def encode_pairs(
    pairs: Sequence[tuple[str, str]], tokenizer: SubwordTokenizer, max_len: int = 128
) -> list[EncodedPair]:
    """Token ids of each pair, both ending with EOS; pairs longer than ``max_len`` are cut."""
    sources = tokenizer.encode_batch([p[0] for p in pairs])
    targets = tokenizer.encode_batch([p[1] for p in pairs])
    return [(s[:max_len], t[: max_len - 1]) for s, t in zip(sources, targets, strict=True)]


def collate(pairs: Sequence[EncodedPair], pad_id: int = 0, bos_id: int = 1) -> Batch:
    """Pad a list of encoded pairs into a :class:`Batch`."""
    if not pairs:
        raise ValueError("cannot collate an empty batch")
    src_len = max(len(s) for s, _ in pairs)
    tgt_len = max(len(t) for _, t in pairs)
    src = torch.full((len(pairs), src_len), pad_id, dtype=torch.long)
    tgt_in = torch.full((len(pairs), tgt_len), pad_id, dtype=torch.long)
    tgt_out = torch.full((len(pairs), tgt_len), pad_id, dtype=torch.long)
    for i, (s, t) in enumerate(pairs):
        src[i, : len(s)] = torch.tensor(s)
        tgt_out[i, : len(t)] = torch.tensor(t)
        tgt_in[i, : len(t)] = torch.tensor([bos_id, *t[:-1]])
    return Batch(src, tgt_in, tgt_out)


def token_batches(lengths: Sequence[int], max_tokens: int, seed: int) -> list[list[int]]:
    """Group example indices into batches of similar length, ``rows * longest <= max_tokens``.

    The order inside a length and the order of the batches are shuffled with ``seed``; the
    same seed gives the same batches, which is what makes a resumed run identical.
    """
    rng = random.Random(seed)
    order = list(range(len(lengths)))
    rng.shuffle(order)
    order.sort(key=lambda i: lengths[i])  # stable: ties keep the shuffled order
    batches: list[list[int]] = []
    current: list[int] = []
    longest = 0
    for index in order:
        longest_if_added = max(longest, lengths[index])
        if current and longest_if_added * (len(current) + 1) > max_tokens:
            batches.append(current)
            current, longest_if_added = [], lengths[index]
        current.append(index)
        longest = longest_if_added
    if current:
        batches.append(current)
    rng.shuffle(batches)
    return batches


class BatchStream:
    """Endless batches: epoch ``e`` is ``token_batches(..., seed * 1000 + e)``, step by step."""

    def __init__(self, data: Sequence[EncodedPair], max_tokens: int, seed: int) -> None:
        if not data:
            raise ValueError("no training pairs")
        self.data = data
        self.max_tokens = max_tokens
        self.seed = seed
        self.lengths = [max(len(s), len(t)) for s, t in data]
        self._epoch = -1
        self._batches: list[list[int]] = []

    def batches_of_epoch(self, epoch: int) -> list[list[int]]:
        if epoch != self._epoch:
            self._batches = token_batches(self.lengths, self.max_tokens, self.seed * 1000 + epoch)
            self._epoch = epoch
        return self._batches

    @property
    def batches_per_epoch(self) -> int:
        """The same for every epoch: batch boundaries depend only on the sorted lengths."""
        return len(self.batches_of_epoch(max(self._epoch, 0)))

    def batch_at(self, step: int) -> Batch:
        """The batch used at optimizer step ``step`` (0-based), wherever training resumed."""
        epoch, index = divmod(step, self.batches_per_epoch)
        return collate([self.data[i] for i in self.batches_of_epoch(epoch)[index]])


# --------------------------------------------------------------------------------------------
# The loop
# --------------------------------------------------------------------------------------------


@dataclass
class LogEntry:
    step: int
    loss: float
    lr: float
    tokens_per_s: float
    elapsed_s: float


StepCallback = Callable[[LogEntry], None]


@dataclass
class TrainingState:
    """What a checkpoint holds besides the weights: the log and the clock."""

    step: int = 0
    elapsed_s: float = 0.0
    tokens_seen: int = 0
    log: list[LogEntry] = field(default_factory=list)


class Trainer:
    """Owns the model, optimizer, schedule and data stream of one run."""

    def __init__(
        self,
        settings: TrainSettings,
        tokenizer: SubwordTokenizer,
        train_data: Sequence[EncodedPair],
        device: torch.device | str | None = None,
        max_len: int = 128,
        model_factory: Callable[[TransformerConfig], torch.nn.Module] = Transformer,
    ) -> None:
        self.settings = settings
        self.tokenizer = tokenizer
        self.device = choose_device(None if device is None else str(device))
        seed_everything(settings.seed)
        self.model_config = settings.model_config(tokenizer.vocab_size, max_len)
        self.model = model_factory(self.model_config).to(self.device)
        self.optimizer = torch.optim.Adam(
            self.model.parameters(), lr=1.0, betas=PAPER_ADAM_BETAS, eps=PAPER_ADAM_EPS
        )
        self.scheduler = transformer_scheduler(
            self.optimizer, settings.d_model, settings.warmup_steps, settings.lr_factor
        )
        self.stream = BatchStream(train_data, settings.max_tokens, settings.seed)
        self.state = TrainingState()

    @property
    def n_parameters(self) -> int:
        return sum(p.numel() for p in self.model.parameters())

    def train_step(self, batch: Batch) -> float:
        """One optimizer step on ``batch``; returns the loss per target token."""
        self.model.train()
        batch = batch.to(self.device)
        with autocast_context(self.device):
            logits = self.model(batch.src, batch.tgt_in)
        loss = label_smoothed_cross_entropy(
            logits.float(), batch.tgt_out, self.settings.label_smoothing, SubwordTokenizer.pad_id
        )
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        self.optimizer.step()
        self.scheduler.step()
        return float(loss.detach())

    def train(
        self,
        max_steps: int | None = None,
        time_budget_s: float | None = None,
        callback: StepCallback | None = None,
        progress: bool = True,
    ) -> TrainingState:
        """Train until ``max_steps`` in total (or the time budget of this call) is reached.

        ``callback`` receives a :class:`LogEntry` every ``log_every`` steps (a live loss plot).
        """
        from tqdm.auto import tqdm

        target = self.settings.max_steps if max_steps is None else max_steps
        budget = self.settings.time_budget_s if time_budget_s is None else time_budget_s
        start = time.perf_counter()
        window_loss, window_tokens, window_steps, window_start = 0.0, 0, 0, start
        bar = tqdm(total=target, initial=self.state.step, disable=not progress, unit="step")
        try:
            while self.state.step < target:
                if budget is not None and time.perf_counter() - start >= budget:
                    break
                batch = self.stream.batch_at(self.state.step)
                loss = self.train_step(batch)
                self.state.step += 1
                tokens = batch.n_tokens
                self.state.tokens_seen += tokens
                window_loss += loss
                window_tokens += tokens
                window_steps += 1
                bar.update(1)
                if self.state.step % self.settings.log_every == 0 or self.state.step == target:
                    now = time.perf_counter()
                    entry = LogEntry(
                        step=self.state.step,
                        loss=window_loss / window_steps,
                        lr=self.scheduler.get_last_lr()[0],
                        tokens_per_s=window_tokens / max(now - window_start, 1e-9),
                        elapsed_s=self.state.elapsed_s + now - start,
                    )
                    self.state.log.append(entry)
                    bar.set_postfix(loss=f"{entry.loss:.3f}")
                    if callback is not None:
                        callback(entry)
                    window_loss, window_tokens, window_steps, window_start = 0.0, 0, 0, now
        finally:
            bar.close()
            self.state.elapsed_s += time.perf_counter() - start
        return self.state

    # --- checkpoints -----------------------------------------------------------------------
    def checkpoint(self, with_optimizer: bool = True, half: bool = False) -> dict[str, Any]:
        """A dict for ``torch.save``: enough to resume (or, without optimizer, to translate).

        ``half`` stores the weights as float16, which halves the file of a shipped checkpoint.
        """
        weights = {
            k: (v.half() if half and v.is_floating_point() else v).cpu()
            for k, v in self.model.state_dict().items()
        }
        data: dict[str, Any] = {
            "format": "transformer_course.translator/1",
            "settings": asdict(self.settings),
            "model_config": asdict(self.model_config),
            "tokenizer": self.tokenizer.to_json(),
            "model": weights,
            "state": {
                "step": self.state.step,
                "elapsed_s": self.state.elapsed_s,
                "tokens_seen": self.state.tokens_seen,
                "log": [asdict(e) for e in self.state.log],
            },
        }
        if with_optimizer:
            data["optimizer"] = self.optimizer.state_dict()
            data["scheduler"] = self.scheduler.state_dict()
            data["rng"] = torch.get_rng_state()
            if self.device.type == "cuda":
                data["cuda_rng"] = torch.cuda.get_rng_state(self.device)
        return data

    def save(self, path: str | Path, with_optimizer: bool = True, half: bool = False) -> Path:
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        torch.save(self.checkpoint(with_optimizer, half), path)
        return path

    @classmethod
    def resume(
        cls,
        path: str | Path,
        train_data: Sequence[EncodedPair],
        device: torch.device | str | None = None,
    ) -> Trainer:
        """Rebuild a trainer from a checkpoint saved with its optimizer, ready to continue."""
        data = read_checkpoint(path)
        if "optimizer" not in data:
            raise ValueError(
                f"{path} was saved without optimizer state (an inference checkpoint); "
                "it can translate but not resume training"
            )
        settings = TrainSettings(**data["settings"])
        tokenizer = SubwordTokenizer.from_json(data["tokenizer"])
        trainer = cls(settings, tokenizer, train_data, device, data["model_config"]["max_len"])
        trainer.model.load_state_dict({k: v.float() for k, v in data["model"].items()})
        trainer.optimizer.load_state_dict(data["optimizer"])
        trainer.scheduler.load_state_dict(data["scheduler"])
        torch.set_rng_state(data["rng"])
        if "cuda_rng" in data and trainer.device.type == "cuda":
            torch.cuda.set_rng_state(data["cuda_rng"], trainer.device)
        trainer.state = _state_from_dict(data["state"])
        return trainer


def _state_from_dict(state: dict[str, Any]) -> TrainingState:
    return TrainingState(
        step=state["step"],
        elapsed_s=state["elapsed_s"],
        tokens_seen=state["tokens_seen"],
        log=[LogEntry(**e) for e in state["log"]],
    )


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"no checkpoint at {path}; train one with "
            "`python -m transformer_course.train --preset quick --out <path>`"
        )
    data = torch.load(path, map_location="cpu", weights_only=True)
    if not isinstance(data, dict) or data.get("format") != "transformer_course.translator/1":
        raise ValueError(f"{path} is not a checkpoint written by transformer_course.training")
    return data


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
    """Load any checkpoint of :meth:`Trainer.save` for translation (weights in float32)."""
    data = read_checkpoint(path)
    config = TransformerConfig(**data["model_config"])
    model = Transformer(config)
    model.load_state_dict({k: v.float() for k, v in data["model"].items()})
    model.to(choose_device(None if device is None else str(device))).eval()
    return Translator(
        model=model,
        tokenizer=SubwordTokenizer.from_json(data["tokenizer"]),
        settings=TrainSettings(**data["settings"]),
        state=_state_from_dict(data["state"]),
    )


# --------------------------------------------------------------------------------------------
# One call from settings to a trained model
# --------------------------------------------------------------------------------------------


@dataclass
class PreparedData:
    corpus: ParallelCorpus
    tokenizer: SubwordTokenizer
    train: list[EncodedPair]


def prepare_data(settings: TrainSettings, corpus: ParallelCorpus | None = None) -> PreparedData:
    """Generate the corpus (seeded), train the BPE vocabulary on its training side, encode it."""
    if corpus is None:
        corpus = make_corpus(n_train=settings.n_train, seed=settings.seed)
    tokenizer = train_tokenizer(
        [text for pair in corpus.train for text in pair], vocab_size=settings.vocab_size
    )
    return PreparedData(corpus, tokenizer, encode_pairs(corpus.train, tokenizer))


def run_training(
    settings: TrainSettings,
    out: str | Path | None = None,
    device: torch.device | str | None = None,
    callback: StepCallback | None = None,
    progress: bool = True,
    data: PreparedData | None = None,
) -> tuple[Trainer, PreparedData]:
    """Prepare data, train with ``settings`` and optionally save an inference checkpoint."""
    data = data or prepare_data(settings)
    trainer = Trainer(settings, data.tokenizer, data.train, device)
    trainer.train(callback=callback, progress=progress)
    if out is not None:
        trainer.save(out, with_optimizer=False, half=True)
    return trainer, data


def lr_at(step: int, settings: TrainSettings) -> float:
    """The learning rate of optimizer step ``step`` (from 1) under ``settings``."""
    rate = transformer_lr(step, settings.d_model, settings.warmup_steps)
    return settings.lr_factor * float(rate)


CHECKPOINT_DIR_VARIABLE = "TRANSFORMER_COURSE_CHECKPOINTS"


def shipped_checkpoint(name: str = "translator_quick.pt") -> Path:
    """Find a file shipped in the package's ``checkpoints/`` folder (package data).

    Looks in ``$TRANSFORMER_COURSE_CHECKPOINTS`` first, so a user can point the lessons at their
    own runs, then in the installed package: a Colab install from the repository URL has the
    files too, with no checkout.
    """
    candidates = []
    if os.environ.get(CHECKPOINT_DIR_VARIABLE):
        candidates.append(Path(os.environ[CHECKPOINT_DIR_VARIABLE]) / name)
    candidates.append(Path(__file__).resolve().parent / "checkpoints" / name)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    searched = "\n  ".join(str(c) for c in candidates)
    raise FileNotFoundError(
        f"{name} is not in any of:\n  {searched}\nReinstall the course package (the file ships in "
        f"transformer_course/checkpoints/), set {CHECKPOINT_DIR_VARIABLE} to the folder holding it, or train "
        "your own with `python -m transformer_course.train --preset quick --out <file>`."
    )
