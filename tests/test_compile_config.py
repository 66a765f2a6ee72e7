"""compile configs: Keras's optimizer entry, registered custom optimizers, tf.keras.models.save_model."""
import numpy as np

import tapeflow as tf
from tapeflow import optimizers


def _model():
    return tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(1)])


def test_builtin_optimizer_entry_names_the_keras_module():
    model = _model()
    model.compile(optimizer="adam", loss="mse")
    entry = model.get_compile_config()["optimizer"]
    assert (entry["module"], entry["class_name"], entry["registered_name"]) == ("keras.optimizers", "Adam", None)


def test_registered_custom_optimizer_round_trips_through_compile_config():
    @tf.keras.saving.register_keras_serializable(package="tests")
    class HalfSGD(optimizers.SGD):
        pass

    model = _model()
    model.compile(optimizer=HalfSGD(learning_rate=0.5), loss="mse")
    config = model.get_compile_config()
    assert config["optimizer"]["registered_name"] == "tests>HalfSGD"
    other = _model()
    other.compile_from_config(config)
    assert type(other.optimizer).__name__ == "HalfSGD" and float(other.optimizer.learning_rate) == 0.5


def test_keras_models_save_model(tmp_path):
    model = _model()
    model.compile(optimizer="sgd", loss="mse")
    tf.keras.models.save_model(model, str(tmp_path / "m.keras"))
    restored = tf.keras.models.load_model(str(tmp_path / "m.keras"))
    x = np.ones((3, 2), np.float32)
    np.testing.assert_array_equal(model.predict(x, verbose=0), restored.predict(x, verbose=0))
