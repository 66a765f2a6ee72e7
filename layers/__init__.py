"""Keras layers and models (tapeflow.layers); filled in by the Keras issue."""
