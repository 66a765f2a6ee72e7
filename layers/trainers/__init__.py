"""Training loop: Trainer (compile/fit/evaluate/predict), compiled losses and metrics, data adapters."""
