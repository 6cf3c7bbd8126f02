// MXLITE_HOST_DEVICE marks a function that the CPU kernels and the CUDA kernels both call (the
// shared arithmetic of an op, e.g. ops/grid_sample_taps.h, ops/topk_order.h), so both devices
// compute the same formulas: __host__ __device__ under nvcc, nothing under g++. Headers that use
// it are included by nvcc (C++17) and g++ (C++20): plain structs, no other mxlite headers.
#pragma once

#ifdef __CUDACC__
#define MXLITE_HOST_DEVICE __host__ __device__
#else
#define MXLITE_HOST_DEVICE
#endif
