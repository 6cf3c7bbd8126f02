"""NDArray: NumPy in and out for every dtype, with dtype and shape checked on the way in."""

import numpy as np
import pytest

INTEGER_LIMITS = {"int32": np.int32, "int64": np.int64, "uint8": np.uint8}


def sample(dtype, shape=(2, 3, 4)):
    """Values that survive the dtype exactly, the extremes of integer types included."""
    count = int(np.prod(shape))
    if dtype in INTEGER_LIMITS:
        info = np.iinfo(INTEGER_LIMITS[dtype])
        values = np.arange(count, dtype=INTEGER_LIMITS[dtype]) * (info.max // count)
        values[0], values[-1] = info.min, info.max
        return values.reshape(shape)
    values = (np.arange(count) - count / 2) / 8.0  # multiples of 1/8: exact in every float type
    return values.astype(np.float32 if dtype == "bfloat16" else dtype).reshape(shape)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int32", "int64",
                                   "uint8"])
def test_round_trip_of_each_dtype(mxlite, dtype):
    values = sample(dtype)
    array = mxlite.array(values, dtype=dtype)
    assert array.dtype == dtype
    assert array.shape == values.shape
    assert array.context == "cpu(0)"
    back = array.asnumpy()
    assert back.dtype == values.dtype
    np.testing.assert_array_equal(back, values)
    replacement = values[::-1].copy()
    array.copy_from(replacement)
    np.testing.assert_array_equal(array.asnumpy(), replacement)


def test_dtype_is_kept_from_numpy(mxlite):
    for dtype in ("float32", "float64", "float16", "int32", "int64", "uint8"):
        assert mxlite.array(np.zeros((2,), dtype=dtype)).dtype == dtype


def test_bfloat16_rounds_to_nearest_even(mxlite):
    # 1 + 2^-8 lies halfway between bfloat16 neighbours 1 and 1 + 2^-7: ties go to the even one (1).
    # 1 + 3 * 2^-8 lies halfway between 1 + 2^-7 and 1 + 2^-6: ties go to 1 + 2^-6.
    values = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, np.nan, -np.inf],
                      dtype=np.float32)
    back = mxlite.array(values, dtype="bfloat16").asnumpy()
    np.testing.assert_array_equal(back[:3], [1.0, 1 + 2 ** -6, 1 + 2 ** -7])
    assert np.isnan(back[3]) and back[4] == -np.inf


def test_scalars_and_empty_arrays(mxlite):
    scalar = mxlite.array(np.float64(2.5))
    assert scalar.shape == () and scalar.asnumpy() == 2.5
    empty = mxlite.zeros((0, 3), "int32")
    assert empty.shape == (0, 3) and empty.asnumpy().shape == (0, 3)


def test_zeros_and_non_contiguous_input(mxlite):
    np.testing.assert_array_equal(mxlite.zeros((2, 2), "float64").asnumpy(), np.zeros((2, 2)))
    strided = np.arange(12, dtype=np.float32).reshape(3, 4).T  # a transposed view
    np.testing.assert_array_equal(mxlite.array(strided).asnumpy(), strided)


def test_dtype_mismatch_names_the_array_and_both_dtypes(mxlite):
    g = mxlite.GraphBuilder()
    executor = g.build([g.relu(g.input("data", (2, 3)))]).bind()
    with pytest.raises(mxlite.MXLiteError) as error:
        executor.forward(data=np.zeros((2, 3), dtype=np.float64))
    assert str(error.value) == ("cannot copy float64 data into NDArray 'data' (float32 (2,3)): "
                                "expected float32 (convert with .astype(numpy.float32))")


def test_shape_mismatch_names_both_shapes(mxlite):
    array = mxlite.zeros((2, 3))
    with pytest.raises(mxlite.MXLiteError, match=r"shape \(3,2\) into NDArray \(float32 \(2,3\)\)"):
        array.copy_from(np.zeros((3, 2), dtype=np.float32))


def test_unsupported_dtypes_list_the_supported_ones(mxlite):
    with pytest.raises(mxlite.MXLiteError, match="dtype complex64 is not supported by mxlite; "
                                                 "supported: float32, float64"):
        mxlite.array(np.zeros(2, dtype=np.complex64))
    with pytest.raises(mxlite.MXLiteError, match="dtype float8 is not supported"):
        mxlite.zeros((2,), dtype="float8")


def test_byte_count_is_checked_on_the_c_side(mxlite):
    from mxlite._library import call
    array = mxlite.zeros((2, 3))
    buffer = np.zeros(5, dtype=np.float32)
    with pytest.raises(mxlite.MXLiteError) as error:
        call.MXNDArraySyncCopyFromCPU(array.handle, buffer.ctypes.data, buffer.nbytes)
    assert "copying 20 bytes into an array (2,3) float32 of 24 bytes" in str(error.value)
