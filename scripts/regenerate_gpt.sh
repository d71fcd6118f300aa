#!/usr/bin/env bash
# Lesson 10's GPT rebuilt from today's lessons, in one command. Run it after any change to the prose
# of lessons 1-9 (`python -m transformer_course.language_model.lm_data --check` and tests/test_lm_data.py say when):
#   1. the course-prose snapshot   transformer_course/data/course_prose.{txt,json}
#   2. the shipped GPT             transformer_course/checkpoints/gpt_cpu.{pt,json}
#   3. the position study          transformer_course/checkpoints/gpt_positions.json
#   4. lesson 10's generated notebooks, which print and plot all three
# Everything is seeded and every model trains on one thread, so a rerun on the same machine writes
# the same snapshot, weights and losses; only the timings in the two reports differ.
# The position study trains 12 small models, two at a time (--jobs 2): most of the time is there.
# Measured on the project's 2-core machine: 6 min 23 s wall, nearly idle; 30 min wall (12 min of
# CPU time) while other jobs kept it busy, where a second run wrote the same snapshot, weights,
# losses and study curves as the first.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if [ -z "${VIRTUAL_ENV:-}" ] && [ -f .venv/bin/activate ]; then
  source .venv/bin/activate
fi
SECONDS=0
step() { echo "== $1 (after $((SECONDS / 60)) min $((SECONDS % 60)) s)"; }
step "1/4 the course-prose snapshot"
python -m transformer_course.language_model.lm_data --lessons lessons --out transformer_course/data
step "2/4 the GPT"
python -m transformer_course.train_gpt --preset cpu --seed 0 --threads 1 --quiet \
  --out-dir transformer_course/checkpoints
step "3/4 the position study"
python -m transformer_course.language_model.position_study --seeds 0 1 2 --threads 1 --jobs 2 \
  --out transformer_course/checkpoints/gpt_positions.json
step "4/4 lesson 10"
python -m course_build --lesson 10_decoder_only
step "done"
