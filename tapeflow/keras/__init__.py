"""tf.keras compatibility namespace: re-exports tapeflow.layers, tapeflow.optimizers, ..."""
