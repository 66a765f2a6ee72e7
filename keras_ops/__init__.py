"""Keras 3's backend-independent ops (``keras.ops``, ``keras.random``, ``keras.config``) on tapeflow.

Installed as ``tapeflow.keras_ops``; users reach it as ``tf.keras.ops`` (see
``tapeflow/keras/ops.py``). Modules: ``numpy`` (gathering ``creation``,
``elementwise``, ``indexing``, ``products``, ``reductions``, ``shapes``),
``nn``, ``core``, ``math``, ``linalg``, ``image``, ``random``, ``config``,
and ``dtypes`` (Keras's type promotion). Every op maps onto tapeflow's op
library, so gradients of any order flow through the tape.
"""
