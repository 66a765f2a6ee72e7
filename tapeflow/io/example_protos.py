"""The protobuf messages of ``tf.train.Example`` (``Feature``, ``Features``, ``BytesList``, ...).

Declared here from their documented fields (TensorFlow's example.proto and feature.proto, proto3, package
``tensorflow``) in a private descriptor pool, so they never clash with another copy of the same names. Needs
the optional ``protobuf`` package; imported only when Examples are built or parsed.
"""
try:
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
    from google.protobuf.message import DecodeError
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError("tf.train.Example and tf.io.parse_example need the `protobuf` package: "
                      'pip install "tapeflow[examples]".') from e

__all__ = ["BytesList", "DecodeError", "Example", "Feature", "FeatureList", "FeatureLists", "Features",
           "FloatList", "Int64List", "SequenceExample"]

_FIELD = descriptor_pb2.FieldDescriptorProto
_OPTIONAL, _REPEATED = _FIELD.LABEL_OPTIONAL, _FIELD.LABEL_REPEATED


def _file():
    proto = descriptor_pb2.FileDescriptorProto(name="tensorflow/core/example/example.proto",
                                               package="tensorflow", syntax="proto3")

    def message(name, fields, oneof=None):
        msg = proto.message_type.add(name=name)
        if oneof:
            msg.oneof_decl.add(name=oneof)
        for number, (field_name, kind, type_name, label) in enumerate(fields, 1):
            field = msg.field.add(name=field_name, number=number, type=kind, label=label)
            if type_name:
                field.type_name = type_name
            if oneof:
                field.oneof_index = 0
        return msg

    def map_message(name, field_name, value_type):
        msg = message(name, [])
        entry = msg.nested_type.add(name=field_name.title().replace("_", "") + "Entry")
        entry.options.map_entry = True
        entry.field.add(name="key", number=1, type=_FIELD.TYPE_STRING, label=_OPTIONAL)
        entry.field.add(name="value", number=2, type=_FIELD.TYPE_MESSAGE, label=_OPTIONAL, type_name=value_type)
        msg.field.add(name=field_name, number=1, type=_FIELD.TYPE_MESSAGE, label=_REPEATED,
                      type_name=f".tensorflow.{name}.{entry.name}")

    message("BytesList", [("value", _FIELD.TYPE_BYTES, None, _REPEATED)])
    message("FloatList", [("value", _FIELD.TYPE_FLOAT, None, _REPEATED)])       # proto3: packed
    message("Int64List", [("value", _FIELD.TYPE_INT64, None, _REPEATED)])
    message("Feature", [("bytes_list", _FIELD.TYPE_MESSAGE, ".tensorflow.BytesList", _OPTIONAL),
                        ("float_list", _FIELD.TYPE_MESSAGE, ".tensorflow.FloatList", _OPTIONAL),
                        ("int64_list", _FIELD.TYPE_MESSAGE, ".tensorflow.Int64List", _OPTIONAL)], oneof="kind")
    map_message("Features", "feature", ".tensorflow.Feature")
    message("FeatureList", [("feature", _FIELD.TYPE_MESSAGE, ".tensorflow.Feature", _REPEATED)])
    map_message("FeatureLists", "feature_list", ".tensorflow.FeatureList")
    message("Example", [("features", _FIELD.TYPE_MESSAGE, ".tensorflow.Features", _OPTIONAL)])
    message("SequenceExample", [("context", _FIELD.TYPE_MESSAGE, ".tensorflow.Features", _OPTIONAL),
                                ("feature_lists", _FIELD.TYPE_MESSAGE, ".tensorflow.FeatureLists", _OPTIONAL)])
    return proto


def _classes():
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(_file().SerializeToString())
    return [message_factory.GetMessageClass(pool.FindMessageTypeByName(f"tensorflow.{name}"))
            for name in ("BytesList", "FloatList", "Int64List", "Feature", "Features", "FeatureList",
                         "FeatureLists", "Example", "SequenceExample")]


(BytesList, FloatList, Int64List, Feature, Features, FeatureList, FeatureLists, Example,
 SequenceExample) = _classes()
