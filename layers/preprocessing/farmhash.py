"""FarmHash Fingerprint64 now lives in tapeflow.kernels (tf.strings.to_hash_bucket_fast uses it too)."""
from tapeflow.kernels.farmhash import fingerprint64  # noqa: F401
