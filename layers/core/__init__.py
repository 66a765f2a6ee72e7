from .identity import Identity  # noqa: F401
