"""KV cache against recomputation: greedy generation with lesson 10's shipped GPT, timed both ways.

    python benchmarks/kv_cache_speedup.py --lengths 16 32 64 128 240 --threads 1

For each number of new tokens it prints the best-of-``--repeats`` time with and without the cache
and the speed-up, after checking that both ways generate the same tokens. Times are CPU seconds
of this process on one thread (``time.process_time``), so other programs on the machine disturb
them little.
"""

from __future__ import annotations

import argparse

import torch

from transformer_course.devices import hardware_description
from transformer_course.language_model.generation_timing import speedup_table
from transformer_course.language_model.lm_training import load_gpt, shipped_gpt_file


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", type=int, nargs="+", default=[16, 32, 64, 128, 240])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--prompt", default="The ")
    parser.add_argument("--checkpoint", default=None, help="a GPT checkpoint (default: the shipped one)")
    args = parser.parse_args(argv)
    trained = load_gpt(args.checkpoint or shipped_gpt_file("gpt_cpu.pt"))
    limit = trained.model.config.max_len - len(args.prompt)
    if max(args.lengths) > limit:
        parser.error(f"the model's context allows at most {limit} new tokens after the prompt")
    torch.set_num_threads(args.threads)
    print(f"{hardware_description(torch.device('cpu'))}; torch {torch.__version__}; "
          f"{trained.model.n_parameters:,} parameters; batch 1, greedy, best of {args.repeats}")  # fmt: skip
    table = speedup_table(
        trained.model, trained.tokenizer.encode(args.prompt), args.lengths, args.repeats, args.threads
    )
    print(f"{'new tokens':>10} {'recompute (CPU s)':>18} {'KV cache (CPU s)':>17} {'speed-up':>9}")
    for row in table:
        print(f"{row.n_new:>10} {row.recompute_s:>18.4f} {row.cached_s:>17.4f} {row.speedup:>8.1f}x")


if __name__ == "__main__":
    main()
