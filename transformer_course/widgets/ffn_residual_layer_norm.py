"""Widgets for lesson 6: the feed-forward ReLU, residual connections and layer normalization.

* :class:`ReluSparsity`: hidden pre-activations of a random feed-forward layer with a bias shift;
  a histogram before and after the ReLU and the share of units it sets to zero.
* :class:`ResidualDepth`: the gradient norm that reaches the *first* layer of a deep stack, with
  and without residual connections (and optionally layer norm after each block), measured with
  PyTorch autograd for every depth up to a slider.
* :class:`LayerNormExplorer`: one vector before and after layer normalization, with γ and β
  sliders and an input scale/shift to show that normalization removes them.

Layer normalization is computed by a private helper; students write the graded ``layer_norm``
themselves in the lesson.
"""

from __future__ import annotations

import ipywidgets as widgets
import numpy as np
import torch
import torch.nn.functional as F

from transformer_course.widgets.base import ShowsView
from transformer_course.widgets.figures import figure_to_html, new_figure


class ReluSparsity(ShowsView):
    """Pre-activations ``x W₁ + b₁ + shift`` of a random layer, before and after ``max(0, ·)``."""

    def __init__(self, shift: float = 0.0, d_model: int = 16, d_ff: int = 64, seed: int = 0) -> None:
        if d_model < 1 or d_ff < 1:
            raise ValueError(f"d_model and d_ff must be positive, got {d_model} and {d_ff}")
        rng = np.random.default_rng(seed)
        inputs = rng.normal(size=(32, d_model))
        weights = rng.normal(scale=1 / np.sqrt(d_model), size=(d_model, d_ff))
        self.pre_activations = inputs @ weights
        self.shift = widgets.FloatSlider(value=shift, min=-2.0, max=2.0, step=0.1, description="bias shift")
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        self.shift.observe(self._on_change, names="value")
        self.view = widgets.VBox([self.shift, self.readout, self.plot])
        self._redraw()

    def hidden(self) -> tuple[np.ndarray, np.ndarray]:
        """``(before, after)`` the ReLU, for the current shift."""
        before = self.pre_activations + self.shift.value
        return before, np.maximum(before, 0.0)

    def zero_fraction(self) -> float:
        """Share of hidden units the ReLU sets to exactly zero."""
        _, after = self.hidden()
        return float(np.mean(after == 0.0))

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _redraw(self) -> None:
        before, after = self.hidden()
        self.readout.value = (
            f"The ReLU sets <b>{100 * self.zero_fraction():.0f}%</b> of the {after.size} hidden values "
            "to zero. A negative bias makes the layer sparser; a positive one lets almost everything "
            "through, and a layer that lets everything through is linear."
        )
        fig = new_figure(7.0, 3.0)
        left, right = fig.subplots(1, 2, sharey=True)
        bins = np.linspace(-4.0, 4.0, 41)
        left.hist(before.ravel(), bins=bins, color="tab:blue")
        left.set_title("before ReLU", fontsize=10)
        right.hist(after.ravel(), bins=bins, color="tab:orange")
        right.set_title("after ReLU", fontsize=10)
        for ax in (left, right):
            ax.set_xlabel("hidden value")
        left.set_ylabel("count")
        self.plot.value = figure_to_html(
            fig,
            alt=f"Histograms of hidden values before and after ReLU, bias shift {self.shift.value:.1f}",
        )


def first_layer_gradient_norms(
    max_depth: int,
    residual: bool,
    layer_norm: bool = False,
    width: int = 32,
    batch: int = 16,
    seed: int = 0,
) -> np.ndarray:
    """Norm of ∂loss/∂W of the first layer of stacks of depth 1..``max_depth``.

    Each block is ``ReLU(x W + b)``; with ``residual`` it is ``x + ReLU(x W + b)``; with
    ``layer_norm`` the block's output is layer-normalised (post-norm, as in the Transformer).
    Weights are initialised like PyTorch's default ``nn.Linear`` (uniform in ±1/√width). The loss
    is a fixed random linear function of the output, so its gradient with respect to the output
    has the same size at every depth and any change comes from the backward pass.
    """
    if max_depth < 1 or width < 1 or batch < 1:
        raise ValueError(f"max_depth, width and batch must be positive, got {max_depth}, {width}, {batch}")
    generator = torch.Generator().manual_seed(seed)
    bound = 1.0 / width**0.5
    weights = [(torch.rand(width, width, generator=generator) * 2 - 1) * bound for _ in range(max_depth)]
    biases = [(torch.rand(width, generator=generator) * 2 - 1) * bound for _ in range(max_depth)]
    inputs = torch.randn(batch, width, generator=generator)
    readout = torch.randn(batch, width, generator=generator)
    norms = []
    for depth in range(1, max_depth + 1):
        first = weights[0].clone().requires_grad_(True)
        x = inputs
        for layer in range(depth):
            w = first if layer == 0 else weights[layer]
            update = torch.relu(x @ w + biases[layer])
            x = x + update if residual else update
            if layer_norm:
                x = torch.nn.functional.layer_norm(x, (width,))
        (x * readout).sum().backward()
        norms.append(float(first.grad.norm()))
    return np.array(norms)


class ResidualDepth(ShowsView):
    """Gradient norm at the first layer against depth, for a plain and a residual stack."""

    MAX_DEPTH = 60

    def __init__(self, depth: int = 30, layer_norm: bool = False) -> None:
        if not 2 <= depth <= self.MAX_DEPTH:
            raise ValueError(f"depth must lie in [2, {self.MAX_DEPTH}], got {depth}")
        self.depth = widgets.IntSlider(value=depth, min=2, max=self.MAX_DEPTH, description="depth")
        self.layer_norm = widgets.Checkbox(value=layer_norm, description="layer norm after each block")
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        self._cache: dict[tuple[bool, bool], np.ndarray] = {}
        for control in (self.depth, self.layer_norm):
            control.observe(self._on_change, names="value")
        self.view = widgets.VBox([widgets.HBox([self.depth, self.layer_norm]), self.readout, self.plot])
        self._redraw()

    def norms(self, residual: bool) -> np.ndarray:
        """Gradient norms at the first layer for depths 1..depth, under the current settings."""
        key = (residual, self.layer_norm.value)
        if key not in self._cache:
            self._cache[key] = first_layer_gradient_norms(self.MAX_DEPTH, residual, self.layer_norm.value)
        return self._cache[key][: self.depth.value]

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _redraw(self) -> None:
        depth = self.depth.value
        plain, skip = self.norms(residual=False), self.norms(residual=True)
        setting = "with" if self.layer_norm.value else "without"
        self.readout.value = (
            f"{setting.capitalize()} layer norm, the gradient reaching the first of {depth} layers has "
            f"norm <b>{plain[-1]:.1e}</b> in the plain stack (one layer: {plain[0]:.1e}) and "
            f"<b>{skip[-1]:.1e}</b> in the residual stack (one layer: {skip[0]:.1e})."
        )
        fig = new_figure(6.5, 3.2)
        ax = fig.subplots()
        depths = np.arange(1, depth + 1)
        ax.semilogy(depths, plain, marker=".", label="plain: x ← f(x)")
        ax.semilogy(depths, skip, marker=".", label="residual: x ← x + f(x)")
        ax.set_xlabel("number of layers")
        ax.set_ylabel("‖∂loss/∂W₁‖")
        ax.set_title(f"{setting} layer norm", fontsize=10)
        ax.legend(fontsize=8)
        self.plot.value = figure_to_html(
            fig,
            alt=f"Gradient norm at the first layer against depth up to {depth} layers, {setting} layer norm",
        )


class LayerNormExplorer(ShowsView):
    """One vector before and after layer normalization, with input scale/shift and γ, β sliders."""

    def __init__(self, gamma: float = 1.0, beta: float = 0.0, size: int = 8, seed: int = 0) -> None:
        if size < 2:
            raise ValueError(f"layer norm needs at least 2 features to normalise, got size={size}")
        self.base = np.random.default_rng(seed).normal(size=size)
        self.scale = widgets.FloatSlider(value=3.0, min=0.1, max=10.0, step=0.1, description="input scale")
        self.shift = widgets.FloatSlider(value=5.0, min=-10.0, max=10.0, step=0.5, description="input shift")
        self.gamma = widgets.FloatSlider(value=gamma, min=-3.0, max=3.0, step=0.1, description="γ")
        self.beta = widgets.FloatSlider(value=beta, min=-3.0, max=3.0, step=0.1, description="β")
        self.readout = widgets.HTML()
        self.plot = widgets.HTML()
        for control in (self.scale, self.shift, self.gamma, self.beta):
            control.observe(self._on_change, names="value")
        controls = widgets.VBox(
            [widgets.HBox([self.scale, self.shift]), widgets.HBox([self.gamma, self.beta])]
        )
        self.view = widgets.VBox([controls, self.readout, self.plot])
        self._redraw()

    def vectors(self) -> tuple[np.ndarray, np.ndarray]:
        """``(before, after)`` layer normalization."""
        before = self.scale.value * self.base + self.shift.value
        # PyTorch's layer norm, written out here rather than as a helper: a package function with
        # the signature of lessons 6 and 7's graded layer_norm would answer it for an import.
        tensor = torch.as_tensor(before, dtype=torch.float64)
        normalized = F.layer_norm(tensor, tensor.shape[-1:], eps=1e-5).numpy()
        return before, self.gamma.value * normalized + self.beta.value

    def _on_change(self, _change: dict | None = None) -> None:
        self._redraw()

    def _redraw(self) -> None:
        before, after = self.vectors()
        self.readout.value = (
            f"Before: mean {before.mean():.2f}, standard deviation {before.std():.2f}. "
            f"After: mean {after.mean():.2f} (= β), standard deviation {after.std():.2f} (= |γ|), "
            "whatever the input scale and shift."
        )
        fig = new_figure(7.0, 3.0)
        left, right = fig.subplots(1, 2)
        features = np.arange(before.size)
        left.bar(features, before, color="tab:blue")
        left.set_title("before", fontsize=10)
        right.bar(features, after, color="tab:green")
        right.set_title(f"after (γ = {self.gamma.value:.1f}, β = {self.beta.value:.1f})", fontsize=10)
        for ax in (left, right):
            ax.set_xlabel("feature")
            ax.axhline(0.0, color="black", linewidth=0.5)
        self.plot.value = figure_to_html(
            fig, alt="A vector before and after layer normalization, as bars per feature"
        )
