"""The protobuf messages of a TensorFlow checkpoint bundle, decoded with the ``protobuf`` runtime.

``TrackableObjectGraph``, ``TensorShapeProto``, ``DataType`` and ``VersionDef`` come with tensorboard
(``tensorboard.compat.proto``); the bundle's own ``BundleHeaderProto`` and ``BundleEntryProto`` are
declared here from their documented fields (``slices``, only present for partitioned variables, is kept
as raw bytes: tapeflow refuses such entries). Imported only when a TensorFlow checkpoint is read.
"""
try:
    from google.protobuf import descriptor_pb2, message_factory
    from google.protobuf.message import DecodeError
    from tensorboard.compat.proto import tensor_shape_pb2, types_pb2, versions_pb2
    from tensorboard.compat.proto.trackable_object_graph_pb2 import TrackableObjectGraph
except ImportError as e:  # pragma: no cover - depends on the installation
    raise ImportError("Reading TensorFlow's checkpoint format needs the `protobuf` and `tensorboard` packages: "
                      "pip install 'tapeflow[tfcheckpoint]'.") from e

__all__ = ["BundleEntryProto", "BundleHeaderProto", "DecodeError", "TrackableObjectGraph", "types_pb2"]

_FIELD = descriptor_pb2.FieldDescriptorProto


def _file():
    proto = descriptor_pb2.FileDescriptorProto(
        name="tapeflow/saving/tensor_bundle.proto", package="tapeflow_bundle", syntax="proto3",
        dependency=[tensor_shape_pb2.DESCRIPTOR.name, types_pb2.DESCRIPTOR.name, versions_pb2.DESCRIPTOR.name])

    def message(name, fields):
        msg = proto.message_type.add(name=name)
        for number, (field_name, kind, type_name, label) in enumerate(fields, 1):
            msg.field.add(name=field_name, number=number, type=kind, type_name=type_name,
                          label=label or _FIELD.LABEL_OPTIONAL)

    message("BundleHeaderProto", [
        ("num_shards", _FIELD.TYPE_INT32, None, None),
        ("endianness", _FIELD.TYPE_INT32, None, None),          # LITTLE = 0, BIG = 1 (an enum on the wire)
        ("version", _FIELD.TYPE_MESSAGE, ".tensorboard.VersionDef", None),
    ])
    message("BundleEntryProto", [
        ("dtype", _FIELD.TYPE_ENUM, ".tensorboard.DataType", None),
        ("shape", _FIELD.TYPE_MESSAGE, ".tensorboard.TensorShapeProto", None),
        ("shard_id", _FIELD.TYPE_INT32, None, None),
        ("offset", _FIELD.TYPE_INT64, None, None),
        ("size", _FIELD.TYPE_INT64, None, None),
        ("crc32c", _FIELD.TYPE_FIXED32, None, None),
        ("slices", _FIELD.TYPE_BYTES, None, _FIELD.LABEL_REPEATED),
    ])
    return proto


def _classes():
    pool = tensor_shape_pb2.DESCRIPTOR.pool
    file_proto = _file()
    try:
        pool.FindFileByName(file_proto.name)
    except KeyError:
        pool.AddSerializedFile(file_proto.SerializeToString())
    return [message_factory.GetMessageClass(pool.FindMessageTypeByName(f"tapeflow_bundle.{name}"))
            for name in ("BundleHeaderProto", "BundleEntryProto")]


BundleHeaderProto, BundleEntryProto = _classes()
