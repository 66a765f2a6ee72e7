"""tf.config: the devices tapeflow runs on (this machine's CPU), threads, and execution switches.

tapeflow computes on the CPU only. GPU and TPU lists are empty, as in a CPU
build of TensorFlow; with soft device placement (TensorFlow's default) a
``tf.device("/GPU:0")`` scope runs on the CPU, as TensorFlow does when no GPU
is present.
"""

from . import experimental, optimizer, threading  # noqa: F401
from .devices import LogicalDevice, PhysicalDevice  # noqa: F401
from .devices import (get_logical_device_configuration, get_soft_device_placement, get_visible_devices,  # noqa: F401
                      list_logical_devices, list_physical_devices, set_logical_device_configuration,
                      set_soft_device_placement, set_visible_devices)
from .execution import functions_run_eagerly, run_functions_eagerly  # noqa: F401

