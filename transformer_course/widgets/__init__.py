"""The lessons' widgets and figures, one module per lesson, named after the lesson's slug.

``sequence_problem`` (lesson 1), ``dot_products`` (2), ``attention`` (3, with the softmax
saturation study), ``multi_head_attention`` (4), ``positional_encoding`` (5),
``ffn_residual_layer_norm`` (6), ``encoder_layer`` (7), ``encoder_decoder`` (8, the training
pieces of the complete Transformer), ``translator`` (9), ``decoder_only`` (10, sampling and rotary
positions), and the shared parts: ``base`` (:class:`~transformer_course.widgets.base.ShowsView`,
the display base every widget subclasses), ``figures`` (matplotlib figures drawn into HTML
widgets), ``quiz`` (the quick-check quiz, read from ``transformer_course/quizzes/``) and
``architecture`` (the course's drawing of the Transformer: the book's course map, lesson 7's
picture and lesson 8's explorer).

A widget is a small class that builds its controls in ``__init__``, keeps them as attributes,
lays them out in ``self.view`` and redraws in callbacks a unit test can call directly.
"""
