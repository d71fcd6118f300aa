"""Lesson 8's locked adapters: weights by the contract's names, and the trip through the grader.

A test cell reaches a student's ``nn.Module`` only through ``transformer_course.adapters``; while
grading, the checker's stand-in for the class asks the kernel to run the adapter there
(``StudentFunction.through_adapter`` and the ``adapter`` field of a ``call`` request).
"""

import numpy as np
import pytest
import torch
from kernel_stand_in import ask_through_json
from torch import nn

from course_build.checking.checker import run_test_cell
from transformer_course.adapters import adapted, load_weights, run_attention

STUDENT_CODE = """
import torch
from torch import nn


class Fused(nn.Module):
    def __init__(self, d_model, n_heads, dropout=0.0):
        super().__init__()
        self.qkv_proj = nn.Linear(d_model, 3 * d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def forward(self, query, key, value, mask=None):
        d = query.shape[-1]
        v = nn.functional.linear(value, self.qkv_proj.weight[2 * d:], self.qkv_proj.bias[2 * d:])
        return self.out_proj(v.mean(dim=1, keepdim=True).expand_as(query))


class Tupled(Fused):
    def forward(self, query, key, value, mask=None):
        return super().forward(query, key, value, mask), None
"""


def _namespace() -> dict:
    namespace: dict = {}
    exec(STUDENT_CODE, namespace)  # noqa: S102 - a stand-in for the student's kernel
    return namespace


def _weights(d_model: int = 4) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    return {
        f"{name}.{part}": rng.normal(size=(d_model, d_model) if part == "weight" else d_model).astype(
            np.float32
        )
        for name in ("q_proj", "k_proj", "v_proj", "out_proj")
        for part in ("weight", "bias")
    }


def test_a_fused_projection_receives_wq_wk_wv_as_its_three_blocks_of_rows():
    module = _namespace()["Fused"](4, 2)
    weights = _weights()
    load_weights(module, weights, "MultiHeadAttention")
    for block, name in enumerate(("q_proj", "k_proj", "v_proj")):
        rows = slice(4 * block, 4 * (block + 1))
        assert torch.equal(module.qkv_proj.weight[rows], torch.tensor(weights[f"{name}.weight"]))
        assert torch.equal(module.qkv_proj.bias[rows], torch.tensor(weights[f"{name}.bias"]))


def test_a_sequential_feed_forward_network_takes_linear1_and_linear2_in_order():
    layer = nn.Module()
    layer.ff = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.1), nn.Linear(8, 4))
    weights = {"ff.linear1.weight": np.ones((8, 4)), "ff.linear1.bias": np.zeros(8)}
    weights |= {"ff.linear2.weight": 2 * np.ones((4, 8)), "ff.linear2.bias": np.zeros(4)}
    load_weights(layer, weights, "EncoderLayer")
    assert torch.equal(layer.ff[0].weight, torch.ones(8, 4)) and torch.equal(
        layer.ff[3].weight, 2 * torch.ones(4, 8)
    )


def test_a_missing_name_a_wrong_shape_and_an_unnamed_weight_each_fail_with_one_line():
    class Renamed(nn.Module):
        def __init__(self):
            super().__init__()
            self.w_q = nn.Linear(4, 4)

    with pytest.raises(AttributeError, match="MultiHeadAttention has no q_proj: lesson 8's contract"):
        load_weights(Renamed(), _weights(), "MultiHeadAttention")
    narrow = nn.Module()
    narrow.q_proj = nn.Linear(4, 2)
    with pytest.raises(ValueError, match=r"q_proj.weight has shape \(2, 4\), the contract expects \(4, 4\)"):
        load_weights(narrow, {"q_proj.weight": np.zeros((4, 4))}, "MultiHeadAttention")
    extra = nn.Module()
    extra.q_proj, extra.scale = nn.Linear(4, 4), nn.Parameter(torch.ones(1))
    with pytest.raises(ValueError, match=r"parameters the contract does not name \(scale\)"):
        load_weights(extra, {"q_proj.weight": np.zeros((4, 4)), "q_proj.bias": np.zeros(4)}, "it")
    extra.scale.requires_grad_(False)  # a frozen parameter is a constant, not a weight
    load_weights(extra, {"q_proj.weight": np.zeros((4, 4)), "q_proj.bias": np.zeros(4)}, "it")


def test_a_forward_that_returns_a_tuple_is_told_to_return_one_tensor():
    x = np.zeros((1, 3, 4), dtype=np.float32)
    with pytest.raises(TypeError, match=r"forward returned a tuple; return one tensor of shape \(1, 3, 4\)"):
        run_attention(_namespace()["Tupled"], _weights(), x, x, x, n_heads=2)


def test_adapted_refuses_a_name_that_holds_no_class():
    with pytest.raises(TypeError, match="the attention exercise needs a class"):
        adapted("attention", 3)


def _as_code(name: str, array: np.ndarray) -> str:
    return f"{name} = np.asarray({array.tolist()!r}, dtype=np.float32)\n"


def test_while_grading_the_adapter_runs_in_the_kernel_and_only_an_array_comes_back():
    namespace = _namespace()
    x = np.random.default_rng(1).normal(size=(2, 3, 4)).astype(np.float32)
    expected = run_attention(namespace["Fused"], _weights(), x, x, x, n_heads=2)
    weights = ", ".join(f"{k!r}: np.asarray({v.tolist()!r}, dtype=np.float32)" for k, v in _weights().items())
    code = (
        "import numpy as np\n"
        "from transformer_course.adapters import adapted\n"
        "from transformer_course.checks import close\n"
        + _as_code("X", x)
        + _as_code("EXPECTED", expected)
        + f"WEIGHTS = {{{weights}}}\n"
        "_run = adapted('attention', Fused)\n"
        "_out = _run(WEIGHTS, X, X, X, n_heads=2)\n"
        "assert type(_out) is np.ndarray and close(_out, EXPECTED)\n"
        "_outs = _run.call_many([((WEIGHTS, X, X, X), {'n_heads': 2})] * 2)\n"
        "assert close(_outs[0], EXPECTED) and close(_outs[1], EXPECTED)\n"
        "print('✓ through the adapter')\n"
    )
    result = run_test_cell(code, ["Fused"], ask_through_json(namespace))
    assert result == {"printed": {"stdout": "✓ through the adapter\n", "stderr": ""}, "error": None}


def test_while_grading_an_error_in_the_student_class_reaches_the_test_as_its_type_and_message():
    code = (
        "import numpy as np\n"
        "from transformer_course.adapters import adapted\n"
        "_x = np.zeros((1, 3, 4), dtype=np.float32)\n"
        "_w = {f'{n}.{p}': np.zeros((4, 4) if p == 'weight' else 4, dtype=np.float32) "
        "for n in ('q_proj', 'k_proj', 'v_proj', 'out_proj') for p in ('weight', 'bias')}\n"
        "adapted('attention', Tupled)(_w, _x, _x, _x, n_heads=2)\n"
    )
    result = run_test_cell(code, ["Tupled"], ask_through_json(_namespace()))
    assert result["error"]["ename"] == "TypeError"
    assert "forward returned a tuple" in result["error"]["evalue"]
