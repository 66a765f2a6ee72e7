"""What the callbacks that watch a logged quantity share: whether it should go down or up."""


def _monitor_direction(model, monitor):
    """'min' or 'max' for a monitored quantity, from its name and the model's metrics."""
    name = monitor[4:] if monitor.startswith("val_") else monitor
    if name.endswith("loss"):
        return "min"
    metrics = []
    for m in (getattr(model, "metrics", None) or []):
        metrics.extend(m.metrics if hasattr(m, "metrics") else [m])
    for m in metrics:
        if getattr(m, "name", None) == name and getattr(m, "_direction", None):
            return "max" if m._direction == "up" else "min"
    lowered = name.lower()
    if lowered in ("acc", "accuracy", "auc") or lowered.endswith(("accuracy", "_acc", "auc", "precision", "recall")):
        return "max"
    if lowered.endswith(("error", "mse", "mae", "mape", "msle", "crossentropy", "hinge", "divergence")):
        return "min"
    return None


class _MonitorMixin:
    def _resolve_mode(self, owner_name):
        if self.mode == "min":
            return "min"
        if self.mode == "max":
            return "max"
        direction = _monitor_direction(self.model, self.monitor)
        if direction is None:
            raise ValueError(f"{owner_name} callback received monitor={self.monitor}, but tapeflow isn't able to "
                             "automatically determine whether that metric should be maximized or minimized. Pass "
                             "`mode='max'` in order to monitor based on the highest metric value, or pass "
                             "`mode='min'` in order to use the lowest value.")
        return direction
