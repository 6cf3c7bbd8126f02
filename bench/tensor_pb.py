"""ONNX TensorProto files (the .pb files of the ONNX test data) without the onnx package.

Writes and reads the fields mxlite's `run` uses: dims (1), data_type (2), name (8) and raw_data (9),
little-endian float32. Enough for the benchmark scripts' inputs and outputs; anything else in a
file (other dtypes, typed data fields) is an error, not a guess.
"""
import numpy as np

_FLOAT = 1  # TensorProto.DataType.FLOAT


def _varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _read_varint(data, pos):
    value, shift = 0, 0
    while True:
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, pos


def write(path, array, name):
    array = np.ascontiguousarray(array, dtype="<f4")
    out = bytearray()
    for dim in array.shape:
        out += _varint(1 << 3 | 0) + _varint(dim)
    out += _varint(2 << 3 | 0) + _varint(_FLOAT)
    encoded = name.encode()
    out += _varint(8 << 3 | 2) + _varint(len(encoded)) + encoded
    raw = array.tobytes()
    out += _varint(9 << 3 | 2) + _varint(len(raw)) + raw
    with open(path, "wb") as f:
        f.write(bytes(out))


def read(path):
    """Returns (name, float32 array) of a TensorProto file with raw_data."""
    data = open(path, "rb").read()
    pos, dims, dtype, name, raw = 0, [], None, "", None
    while pos < len(data):
        key, pos = _read_varint(data, pos)
        field, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = _read_varint(data, pos)
            if field == 1:
                dims.append(value)
            elif field == 2:
                dtype = value
        elif wire == 2:
            length, pos = _read_varint(data, pos)
            chunk = data[pos:pos + length]
            pos += length
            if field == 1:  # packed dims
                p = 0
                while p < len(chunk):
                    value, p = _read_varint(chunk, p)
                    dims.append(value)
            elif field == 8:
                name = chunk.decode()
            elif field == 9:
                raw = chunk
        elif wire == 5:
            pos += 4
        elif wire == 1:
            pos += 8
        else:
            raise ValueError(f"{path}: unexpected protobuf wire type {wire}")
    if dtype != _FLOAT or raw is None:
        raise ValueError(f"{path}: expected float32 raw_data, got data_type {dtype}")
    return name, np.frombuffer(raw, dtype="<f4").reshape(dims)


if __name__ == "__main__":  # self-check: round trip
    import os
    import tempfile
    a = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    p = os.path.join(tempfile.mkdtemp(), "t.pb")
    write(p, a, "x")
    assert read(p)[0] == "x" and np.array_equal(read(p)[1], a)
    print("ok")
