"""Helper package of the course *Attention, Built Up*.

It holds what the lessons share and what is not an exercise: widgets, plots, the quiz, data
generators and the PyTorch model. It never holds the solution of a graded exercise.
"""

__version__ = "0.1.0"
