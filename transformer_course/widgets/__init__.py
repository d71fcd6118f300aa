"""Widgets and figures of the lessons, one module per lesson topic, on one shared display base."""
