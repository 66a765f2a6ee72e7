"""tf.config.experimental: memory growth (GPU only), op determinism (always on here)."""
from .devices import get_visible_devices, list_logical_devices, list_physical_devices, set_visible_devices  # noqa: F401

_determinism = [False]


def set_memory_growth(device, enable):
    raise ValueError(f"Cannot set memory growth on device {device.name}: memory growth applies to GPUs, and "
                     "tapeflow computes on the CPU.")


def get_memory_growth(device):
    raise ValueError(f"Memory growth is defined for GPUs only; {device.name} is a {device.device_type}.")


def enable_op_determinism():
    """tapeflow's ops are deterministic already (no atomics, fixed reduction orders); this records the request."""
    _determinism[0] = True


def disable_op_determinism():
    _determinism[0] = False


def is_op_determinism_enabled():
    return _determinism[0]


def get_device_details(device):
    return {}
