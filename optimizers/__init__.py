"""Optimizers (tapeflow.optimizers); filled in by the optimizers issue."""
