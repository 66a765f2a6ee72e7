"""One registry for every serializable object (issue 12): layers, losses, metrics, optimizers and schedules
are found by the same lookup, so keras.saving's functions, custom_objects and custom_object_scope work the
same for all of them."""
import json

import numpy as np
import pytest

import tapeflow as tf
from tapeflow import optimizers
from tapeflow.optimizers import schedules
from tapeflow.saving import (custom_object_scope, deserialize_keras_object, get_custom_objects, get_registered_name,
                             get_registered_object, register_keras_serializable, serialize_keras_object)


def _round_trip(obj):
    return deserialize_keras_object(json.loads(json.dumps(serialize_keras_object(obj))))


@pytest.mark.parametrize("make, module", [
    (lambda: tf.keras.layers.Dense(3, activation="relu"), "keras.layers"),
    (lambda: tf.keras.losses.Huber(delta=0.5), "keras.losses"),
    (lambda: tf.keras.metrics.AUC(num_thresholds=7), "keras.metrics"),
    (lambda: optimizers.Adam(learning_rate=0.25, beta_1=0.5), "keras.optimizers"),
    (lambda: schedules.CosineDecay(0.1, 100, alpha=0.1), "keras.optimizers.schedules"),
])
def test_every_kind_of_built_in_object_round_trips_through_the_one_deserializer(make, module):
    obj = make()
    entry = serialize_keras_object(obj)
    assert (entry["module"], entry["class_name"], entry["registered_name"]) == (module, type(obj).__name__, None)
    again = _round_trip(obj)
    assert type(again) is type(obj) and again.get_config() == obj.get_config()


def test_module_level_serialize_is_the_registry_serialization():
    opt = optimizers.RMSprop(learning_rate=schedules.ExponentialDecay(0.5, 10, 0.9))
    assert optimizers.serialize(opt) == serialize_keras_object(opt)
    assert schedules.serialize(opt._learning_rate) == serialize_keras_object(opt._learning_rate)


def test_a_registered_optimizer_and_schedule_load_by_their_registered_names():
    @register_keras_serializable(package="registry_tests")
    class Halving(schedules.LearningRateSchedule):
        def __init__(self, start):
            self.start = start

        def __call__(self, step):
            return self.start / 2.0

        def get_config(self):
            return {"start": self.start}

    @register_keras_serializable(package="registry_tests")
    class SlowSGD(optimizers.SGD):
        pass

    opt = SlowSGD(learning_rate=Halving(0.5))
    entry = json.loads(json.dumps(optimizers.serialize(opt)))
    assert entry["registered_name"] == "registry_tests>SlowSGD" == get_registered_name(SlowSGD)
    assert entry["config"]["learning_rate"]["registered_name"] == "registry_tests>Halving"
    for restored in (optimizers.deserialize(entry), deserialize_keras_object(entry)):
        assert type(restored) is SlowSGD and type(restored._learning_rate) is Halving
        assert restored._learning_rate.start == 0.5
    assert get_registered_object("registry_tests>Halving") is Halving


def test_an_unregistered_class_loads_through_custom_objects_or_a_scope_for_every_kind():
    class Quartering(schedules.LearningRateSchedule):
        def __call__(self, step):
            return 0.25

        def get_config(self):
            return {}

    class MyAdam(optimizers.Adam):
        pass

    entry = optimizers.serialize(MyAdam(learning_rate=Quartering()))
    assert entry["registered_name"] == "MyAdam"
    with pytest.raises(ValueError, match="Unknown learning rate schedule: 'Quartering'"):
        optimizers.deserialize(entry, custom_objects={"MyAdam": MyAdam})
    objects = {"MyAdam": MyAdam, "Quartering": Quartering}
    restored = optimizers.deserialize(entry, custom_objects=objects)
    assert type(restored) is MyAdam and type(restored._learning_rate) is Quartering
    with custom_object_scope(objects):
        assert type(optimizers.deserialize(entry)._learning_rate) is Quartering
        assert type(schedules.deserialize(entry["config"]["learning_rate"])) is Quartering
    with pytest.raises(ValueError, match="Unknown optimizer: 'MyAdam'"):
        optimizers.deserialize(entry)


def test_objects_added_to_get_custom_objects_are_found():
    class Doubling(schedules.LearningRateSchedule):
        def __call__(self, step):
            return 2.0

        def get_config(self):
            return {}

    entry = schedules.serialize(Doubling())
    get_custom_objects()["Doubling"] = Doubling
    try:
        assert type(schedules.deserialize(entry)) is Doubling
    finally:
        del get_custom_objects()["Doubling"]
    with pytest.raises(ValueError, match="Unknown learning rate schedule"):
        schedules.deserialize(entry)


def test_built_in_optimizer_names_match_case_insensitively_and_custom_objects_come_first():
    assert type(optimizers.get("adam")) is optimizers.Adam
    assert type(optimizers.deserialize({"class_name": "RMSPROP", "config": {}})) is optimizers.RMSprop

    class Adam(optimizers.SGD):     # a user's class that shadows a built-in name
        pass

    entry = {"module": None, "class_name": "Adam", "config": {}, "registered_name": "Adam"}
    assert type(optimizers.deserialize(entry, custom_objects={"Adam": Adam})) is Adam
    assert type(optimizers.deserialize(entry)) is optimizers.Adam


def test_a_model_with_a_registered_optimizer_and_schedule_reloads_from_a_keras_file(tmp_path):
    @register_keras_serializable(package="registry_tests")
    class Steady(schedules.LearningRateSchedule):
        def __init__(self, rate):
            self.rate = rate

        def __call__(self, step):
            return tf.constant(self.rate, tf.float32)

        def get_config(self):
            return {"rate": self.rate}

    @register_keras_serializable(package="registry_tests")
    class PlainSGD(optimizers.SGD):
        pass

    model = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(1)])
    model.compile(optimizer=PlainSGD(learning_rate=Steady(0.125)), loss="mse")
    x, y = np.ones((4, 2), np.float32), np.zeros((4, 1), np.float32)
    model.fit(x, y, epochs=1, verbose=0)
    path = str(tmp_path / "m.keras")
    model.save(path)
    restored = tf.keras.models.load_model(path)
    assert type(restored.optimizer) is PlainSGD and type(restored.optimizer._learning_rate) is Steady
    assert restored.optimizer._learning_rate.rate == 0.125
