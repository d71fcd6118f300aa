"""Widgets and figures of the lessons, one module per topic, on the shared display base."""
