"""The devices tapeflow knows: one CPU, physical and logical."""
import collections
import contextlib
import re

from ..framework.errors import InvalidArgumentError

PhysicalDevice = collections.namedtuple("PhysicalDevice", ["name", "device_type"])
LogicalDevice = collections.namedtuple("LogicalDevice", ["name", "device_type"])

CPU = PhysicalDevice("/physical_device:CPU:0", "CPU")
LOGICAL_CPU = LogicalDevice("/device:CPU:0", "CPU")
_soft_placement = [True]


def _of_type(devices, device_type):
    if device_type is None:
        return list(devices)
    return [d for d in devices if d.device_type == str(device_type).upper()]


def list_physical_devices(device_type=None):
    return _of_type([CPU], device_type)


def list_logical_devices(device_type=None):
    return _of_type([LOGICAL_CPU], device_type)


def get_visible_devices(device_type=None):
    return list_physical_devices(device_type)


def set_visible_devices(devices, device_type=None):
    """Only this machine's CPU exists; hiding GPUs (an empty list) is accepted, hiding the CPU is not."""
    devices = [devices] if isinstance(devices, PhysicalDevice) else list(devices)
    for d in devices:
        if d not in (CPU,):
            raise ValueError(f"Unrecognized device: {d!r}. tapeflow knows only {CPU!r}.")
    if (device_type is None or str(device_type).upper() == "CPU") and CPU not in devices:
        raise ValueError("Could not set visible devices: the CPU cannot be hidden (tapeflow computes on the CPU).")


def get_logical_device_configuration(device):
    return None


def set_logical_device_configuration(device, logical_devices):
    raise ValueError(f"Cannot split {device.name} into logical devices: tapeflow runs on one logical CPU.")


def set_soft_device_placement(enabled):
    _soft_placement[0] = bool(enabled)


def get_soft_device_placement():
    return _soft_placement[0]


def check_placeable(spec, device_type):
    """Ops under ``tf.device(spec)`` run on the CPU; without soft placement a GPU/TPU request fails."""
    if device_type not in (None, "CPU") and not _soft_placement[0]:
        raise InvalidArgumentError(f"Could not satisfy device specification '{spec}': no {device_type} device is "
                                   "available (tapeflow computes on the CPU). Enable soft device placement "
                                   "(tf.config.set_soft_device_placement(True)) to run such code on the CPU.")


_SPEC = re.compile(r"^(?:/?job:[^/]+)?(?:/replica:\d+)?(?:/task:\d+)?(?:/?(?:device:)?(?P<type>[A-Za-z_]+)(?::(?P<index>\d+|\*))?)?$")


def parse_device(spec):
    """The device type ('CPU', 'GPU', ...) named by a device string, or None for an empty one."""
    match = _SPEC.match(spec.strip())
    if match is None or (match.group("type") and match.group("type").upper() not in _TYPES):
        raise ValueError(f"Unrecognized device specification {spec!r}: expected something like '/CPU:0', "
                         "'/device:GPU:0' or '/job:localhost/replica:0/task:0/device:CPU:0'.")
    kind = match.group("type")
    return None if kind is None else kind.upper()


_TYPES = {"CPU", "GPU", "TPU", "XLA_CPU", "XLA_GPU"}


@contextlib.contextmanager
def device(device_name):
    """``with tf.device(...)``: names where ops run. tapeflow runs them on the CPU (see the module doc)."""
    if device_name is not None:
        if not isinstance(device_name, str):
            raise TypeError(f"tf.device expects a device name string or None, got {type(device_name).__name__}")
        check_placeable(device_name, parse_device(device_name))
    yield
