"""Saving and loading (tapeflow.saving); filled in by the saving issue."""
