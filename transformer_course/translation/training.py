"""The training loop of lesson 9's translator, and one call from settings to a trained model.

The recipe is the paper's (section 5): Adam with beta2 = 0.98 and eps = 1e-9, the learning rate
that warms up linearly then decays with the inverse square root of the step, label smoothing 0.1,
and batches built by tokens (:mod:`transformer_course.translation.batching`). On recent CUDA GPUs the forward
pass runs in bfloat16 autocast (:mod:`transformer_course.devices`); ``settings.compile`` runs it
through ``torch.compile``.

Everything random is seeded, and a checkpoint holds the step, the optimizer, the schedule and the
random state, so training resumed from a checkpoint continues exactly as if it had never stopped.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from transformer_course.devices import autocast_context, choose_device
from transformer_course.step_progress import StepProgress
from transformer_course.translation.batching import Batch, BatchStream, EncodedPair, encode_pairs
from transformer_course.translation.checkpoint import FORMAT, LogEntry, TrainingState, read_checkpoint
from transformer_course.translation.corpus import ParallelCorpus, make_corpus
from transformer_course.translation.model import Transformer, TransformerConfig
from transformer_course.translation.schedule import PAPER_ADAM_BETAS, PAPER_ADAM_EPS, transformer_scheduler
from transformer_course.translation.settings import TrainSettings
from transformer_course.translation.tokenization import SubwordTokenizer, train_tokenizer

StepCallback = Callable[[LogEntry], None]


def seed_everything(seed: int) -> None:
    random.seed(seed)
    torch.manual_seed(seed)


def paper_adam(model: torch.nn.Module, device: torch.device) -> torch.optim.Adam:
    """Adam with the paper's betas and eps; the schedule sets the rate, so ``lr`` is a placeholder.

    On CPU and CUDA the fused implementation updates every parameter in one kernel instead of
    about ten small operations per parameter tensor.
    """
    return torch.optim.Adam(
        model.parameters(),
        lr=1.0,
        betas=PAPER_ADAM_BETAS,
        eps=PAPER_ADAM_EPS,
        fused=device.type in ("cpu", "cuda"),
    )


class Trainer:
    """Owns the model, optimizer, schedule and data stream of one run.

    ``model_factory`` builds the model from its configuration (the benchmark passes one whose
    stacks are ``torch.nn``'s; lesson 9 one built from the student's classes), and ``rate`` the
    learning-rate formula (default the paper's; lesson 9 passes the student's ``learning_rate``).
    The settings' vocabulary becomes the tokenizer's.
    """

    def __init__(
        self,
        settings: TrainSettings,
        tokenizer: SubwordTokenizer,
        train_data: Sequence[EncodedPair],
        device: torch.device | str | None = None,
        model_factory: Callable[[TransformerConfig], torch.nn.Module] = Transformer,
        rate: Callable[[int, int, int], float] | None = None,
    ) -> None:
        self.settings = settings.with_vocabulary(tokenizer.vocab_size)
        self.tokenizer = tokenizer
        self.device = choose_device(device)
        seed_everything(settings.seed)
        self.model = model_factory(self.settings.model).to(self.device)
        # Compiled or not, the module is the same one: its weights, state_dict and checkpoints.
        self.run_model = torch.compile(self.model, dynamic=True) if settings.compile else self.model
        self.optimizer = paper_adam(self.model, self.device)
        self.scheduler = transformer_scheduler(
            self.optimizer, self.settings.model.d_model, settings.warmup_steps, settings.lr_factor, rate
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
            logits = self.run_model(batch.src, batch.tgt_in)
        # PyTorch's label smoothing (epsilon/V on every token), averaged over non-pad positions.
        loss = F.cross_entropy(
            logits.float().flatten(0, -2),
            batch.tgt_out.flatten(),
            ignore_index=SubwordTokenizer.pad_id,
            label_smoothing=self.settings.label_smoothing,
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
        target = self.settings.max_steps if max_steps is None else max_steps
        budget = self.settings.time_budget_s if time_budget_s is None else time_budget_s
        shown = StepProgress("training", target, self.state.step, budget, enabled=progress)
        start = time.perf_counter()
        window_loss, window_tokens, window_steps, window_start = 0.0, 0, 0, start
        last_loss, ended = "", False
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
                    last_loss = f"loss {entry.loss:.3f}"
                    if callback is not None:
                        callback(entry)
                    window_loss, window_tokens, window_steps, window_start = 0.0, 0, 0, now
                shown.advance(self.state.step, last_loss)
            ended = True
        finally:
            shown.close(interrupted=not ended)
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
            "format": FORMAT,
            "settings": self.settings.to_dict(),
            "tokenizer": self.tokenizer.to_json(),
            "model": weights,
            "state": self.state.to_dict(),
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
        settings = TrainSettings.from_dict(data["settings"])
        tokenizer = SubwordTokenizer.from_json(data["tokenizer"])
        trainer = cls(settings, tokenizer, train_data, device)
        trainer.model.load_state_dict(data["model"])
        trainer.optimizer.load_state_dict(data["optimizer"])
        trainer.scheduler.load_state_dict(data["scheduler"])
        torch.set_rng_state(data["rng"])
        if "cuda_rng" in data and trainer.device.type == "cuda":
            torch.cuda.set_rng_state(data["cuda_rng"], trainer.device)
        trainer.state = TrainingState.from_dict(data["state"])
        return trainer


# --------------------------------------------------------------------------------------------
# One call from settings to a trained model
# --------------------------------------------------------------------------------------------


@dataclass
class PreparedData:
    corpus: ParallelCorpus
    tokenizer: SubwordTokenizer
    train: list[EncodedPair]


def prepare_data(settings: TrainSettings, corpus: ParallelCorpus | None = None) -> PreparedData:
    """Train the BPE vocabulary on the corpus's training side and encode it.

    Without ``corpus``, the generated one: ``make_corpus(n_train=settings.n_train, seed=settings.seed)``.
    """
    if corpus is None:
        corpus = make_corpus(n_train=settings.n_train, seed=settings.seed)
    tokenizer = train_tokenizer(
        [text for pair in corpus.train for text in pair], vocab_size=settings.vocab_size
    )
    return PreparedData(corpus, tokenizer, encode_pairs(corpus.train, tokenizer, settings.model.max_len))


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
