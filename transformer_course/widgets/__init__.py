"""The lessons' widgets and figures, one module per lesson, named after the lesson's slug.

``sequence_problem`` (lesson 1), ``dot_products`` (2), ``attention`` (3),
``multi_head_attention`` (4), ``positional_encoding`` (5), ``ffn_residual_layer_norm`` (6),
``transformer`` (the training pieces of the complete Transformer), ``translator`` (9), and the
shared parts: ``base`` (:class:`~transformer_course.widgets.base.ShowsView`, the display base
every widget subclasses), ``figures`` (matplotlib figures drawn into HTML widgets) and ``quiz``
(the quick-check quiz, read from ``transformer_course/quizzes/``).

A widget is a small class that builds its controls in ``__init__``, keeps them as attributes,
lays them out in ``self.view`` and redraws in callbacks a unit test can call directly.
"""
