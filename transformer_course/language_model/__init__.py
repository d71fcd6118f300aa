"""The decoder-only GPT of lesson 10: model, corpus, training and studies.

``gpt`` (the model), ``lm_data`` (the character corpus: a snapshot of lessons 1-9's prose),
``lm_training`` (training, checkpoints, per-position loss), ``position_study`` (the seeds
study of position schemes) and ``generation_timing`` (the KV cache's speed-up). Its attention
and feed-forward layers are the translator's, shared in :mod:`transformer_course.layers`.
"""
