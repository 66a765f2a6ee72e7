"""TFSMLayer: a TensorFlow SavedModel (``Model.export``, ``tf.saved_model.save``) used as a layer.

The SavedModel is loaded with ``tf.saved_model.load`` (data only: no code runs) and the layer calls one of its
endpoints; the loaded variables are the layer's weights, trainable if ``trainable``.
"""
from ..layer import Layer
from ..serialization_lib import keras_export


@keras_export("keras.layers.TFSMLayer")
class TFSMLayer(Layer):
    def __init__(self, filepath, call_endpoint="serve", call_training_endpoint=None, trainable=True, name=None,
                 dtype=None):
        super().__init__(trainable=trainable, name=name, dtype=dtype)
        from tapeflow.saving.saved_model import load
        self.filepath = filepath
        self.call_endpoint = call_endpoint
        self.call_training_endpoint = call_training_endpoint
        # Kept out of attribute tracking: the loaded object's variables are listed below, once.
        self.__dict__["_reloaded_obj"] = load(filepath)
        self.__dict__["call_endpoint_fn"] = self._endpoint(call_endpoint)
        self.__dict__["call_training_endpoint_fn"] = (None if call_training_endpoint is None
                                                      else self._endpoint(call_training_endpoint))
        for variable in getattr(self._reloaded_obj, "variables", None) or []:
            kind = self._trainable_variables if variable.trainable else self._non_trainable_variables
            kind.append(variable)
        self.built = True

    def _endpoint(self, name):
        fn = getattr(self._reloaded_obj, name, None)
        if fn is None or not callable(fn):
            raise ValueError(f"The endpoint '{name}' is not a callable attribute of the SavedModel at "
                             f"'{self.filepath}'.")
        return fn

    def call(self, inputs, training=False):
        if training and self.call_training_endpoint_fn is not None:
            return self.call_training_endpoint_fn(inputs)
        return self.call_endpoint_fn(inputs)

    def get_config(self):
        config = super().get_config()
        config.update({"filepath": self.filepath, "call_endpoint": self.call_endpoint,
                       "call_training_endpoint": self.call_training_endpoint})
        return config
