"""Helper package of the course *Attention, Built Up*.

It holds what the lessons share and what is not an exercise, laid out as the course goes:

* lesson-wide helpers every lesson's cells use: ``checks``, ``adapters``, ``exercise_errors``,
  ``runtime``, ``roundoff``, ``lesson_contents``, ``widgets/`` and ``quizzes/``;
* what both model families share: ``layers`` (attention, feed-forward, dropout, positions),
  ``devices``, ``step_progress`` and ``shipped`` (where ``checkpoints/`` and ``data/`` are);
* ``translation/``: the encoder-decoder translator of lessons 8 and 9, its data, training and
  studies; ``language_model/``: lesson 10's GPT, its corpus, training and studies;
* the commands ``python -m transformer_course.train`` (the translator), ``.train_gpt`` (the GPT)
  and ``.ablations`` (lesson 9's ablation runs).

It never holds the solution of a graded exercise.
"""

__version__ = "0.1.0"
