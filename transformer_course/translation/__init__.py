"""The encoder-decoder translator of lessons 8 and 9: model, data, training, decoding, studies.

The model (``model``, and ``torch_reference`` built from ``torch.nn``'s layers for the
throughput race), its data (``corpus``, ``parallel_data``, ``downloads``, ``tokenization``,
``batching``), its training (``settings``, ``schedule``, ``training``, ``checkpoint``), using
it (``translator``, ``decoding``, ``evaluation``), lesson 9's studies (``sanity_task``,
``exposure_bias``, ``paired_bootstrap``) and the student's own translator: ``solution_export``
saves lessons 8 and 9's solutions to ``my_transformer.py``, ``your_pieces`` checks each piece
and ``your_translator`` trains the model built from them. Those three live here because what
they export, check and train is this translator and nothing else.

The layers it shares with lesson 10's GPT are in :mod:`transformer_course.layers`.
"""
