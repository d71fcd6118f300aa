"""The Jupytext header every lesson source starts with, for tests that write a small lesson."""

MYST_HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""
