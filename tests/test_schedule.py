"""The paper's learning-rate schedule, as the package's private curve (for plots) and as a LambdaLR
driving a real optimizer."""

import math

import numpy as np
import pytest
import torch

from transformer_course.translation.schedule import _paper_curve, peak_lr, transformer_scheduler


def paper_formula(step: int, d_model: int, warmup: int) -> float:
    return d_model**-0.5 * min(step**-0.5, step * warmup**-1.5)


@pytest.mark.parametrize("step", [1, 2, 100, 3999, 4000, 4001, 10_000, 100_000])
def test_the_curve_matches_the_formula(step):
    assert math.isclose(_paper_curve(100_000)[step - 1], paper_formula(step, 512, 4000), rel_tol=1e-12)


def test_shape_of_the_curve():
    rates = _paper_curve(20_000, d_model=256, warmup=2000)
    assert isinstance(rates, np.ndarray) and rates.shape == (20_000,)
    assert int(np.argmax(rates)) + 1 == 2000
    assert math.isclose(rates.max(), peak_lr(256, 2000), rel_tol=1e-12)
    assert np.all(np.diff(rates[:2000]) > 0) and np.all(np.diff(rates[2000:]) < 0)
    assert math.isclose(rates[3] / rates[1], 2.0, rel_tol=1e-12)  # linear warmup
    assert math.isclose(rates[7999] / rates[1999], 0.5, rel_tol=1e-12)  # 1/sqrt decay


def test_paper_peak():
    assert math.isclose(peak_lr(), (512 * 4000) ** -0.5)
    assert 6.98e-4 < peak_lr() < 6.99e-4


@pytest.mark.parametrize("base_lr", [1.0, 3e-4])
def test_scheduler_drives_an_optimizer(base_lr):
    weight = torch.nn.Parameter(torch.zeros(3))
    optimizer = torch.optim.Adam([weight], lr=base_lr, betas=(0.9, 0.98), eps=1e-9)
    scheduler = transformer_scheduler(optimizer, d_model=64, warmup=10, scale=2.0)
    seen = []
    for _ in range(30):
        seen.append(optimizer.param_groups[0]["lr"])
        weight.sum().backward()
        optimizer.step()
        optimizer.zero_grad()
        scheduler.step()
    expected = [2.0 * paper_formula(k, 64, 10) for k in range(1, 31)]
    assert np.allclose(seen, expected, rtol=1e-12)


@pytest.mark.parametrize(
    "call,message",
    [
        (lambda: _paper_curve(0), "counted from 1"),
        (lambda: _paper_curve(2.5), "n_steps"),
        (lambda: _paper_curve(5, d_model=0), "d_model"),
        (lambda: _paper_curve(5, warmup=2.5), "warmup"),
        (lambda: peak_lr(warmup=-1), "warmup"),
    ],
)
def test_bad_arguments(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_scheduler_rejects_bad_arguments():
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=0.0)
    with pytest.raises(ValueError, match="lr must be positive"):
        transformer_scheduler(optimizer)
    with pytest.raises(TypeError, match="Optimizer"):
        transformer_scheduler("adam")
    optimizer = torch.optim.SGD([torch.nn.Parameter(torch.zeros(1))], lr=1.0)
    with pytest.raises(ValueError, match="scale"):
        transformer_scheduler(optimizer, scale=0.0)
