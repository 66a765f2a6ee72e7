"""Helpers shared by layers and models: nested structures (tree) and the progress bar."""
