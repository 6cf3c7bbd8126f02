"""The nodes of an ONNX model file without the onnx package: name, op_type, inputs and outputs.

Walks the protobuf wire format for ModelProto.graph (7) -> GraphProto.node (1) -> NodeProto's
input (1), output (2), name (3) and op_type (4); every other field is skipped by its wire type.
Initialiser data is skipped, not decoded, so a large model reads in a fraction of a second.
"""
import collections

from tensor_pb import _read_varint

Node = collections.namedtuple("Node", "name op_type inputs outputs")


def _fields(data, start=0, end=None):
    """(field number, wire type, value) of each field in data[start:end]; length-delimited values
    come as (begin, end) offsets into data."""
    pos, end = start, len(data) if end is None else end
    while pos < end:
        key, pos = _read_varint(data, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
        elif wire == 1:
            value, pos = None, pos + 8
        elif wire == 2:
            length, pos = _read_varint(data, pos)
            value, pos = (pos, pos + length), pos + length
        elif wire == 5:
            value, pos = None, pos + 4
        else:
            raise ValueError(f"unsupported protobuf wire type {wire} at byte {pos}")
        yield number, wire, value


def read_nodes(path):
    """The model's top-level graph nodes, in file order."""
    with open(path, "rb") as f:
        data = f.read()
    text = lambda span: data[span[0]:span[1]].decode()
    nodes = []
    for number, wire, graph in _fields(data):
        if number != 7 or wire != 2:
            continue
        for field, kind, span in _fields(data, *graph):
            if field != 1 or kind != 2:
                continue
            parts = {1: [], 2: [], 3: [""], 4: [""]}
            for part, part_kind, value in _fields(data, *span):
                if part in parts and part_kind == 2:
                    parts[part].append(text(value))
            nodes.append(Node(parts[3][-1], parts[4][-1], parts[1], parts[2]))
    return nodes
