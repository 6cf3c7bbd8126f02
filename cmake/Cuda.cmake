# Decides MXLITE_CUDA_ENABLED from MXLITE_USE_CUDA (AUTO|ON|OFF) and, when enabled, defines the
# interface target mxlite_cuda_deps (cudart, cuBLAS, cuDNN). CUDA code is compiled for sm_90 only.
set(MXLITE_CUDA_ENABLED OFF)
set(MXLITE_CUDA_REASON "MXLITE_USE_CUDA=OFF")
string(TOUPPER "${MXLITE_USE_CUDA}" _mxlite_cuda_mode)
if(NOT _mxlite_cuda_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "MXLITE_USE_CUDA='${MXLITE_USE_CUDA}': expected AUTO, ON or OFF")
endif()

if(NOT _mxlite_cuda_mode STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  find_package(CUDAToolkit QUIET)
  # cuDNN may live beside the toolkit or in a pip wheel (nvidia-cudnn-cu*); CUDNN_ROOT points at it.
  find_path(MXLITE_CUDNN_INCLUDE_DIR cudnn.h
    HINTS ${CUDNN_ROOT} $ENV{CUDNN_ROOT} ${CUDAToolkit_INCLUDE_DIRS}
    PATH_SUFFIXES include)
  find_library(MXLITE_CUDNN_LIBRARY NAMES cudnn libcudnn.so.9
    HINTS ${CUDNN_ROOT} $ENV{CUDNN_ROOT} ${CUDAToolkit_LIBRARY_DIR}
    PATH_SUFFIXES lib lib64)
  set(_missing "")
  if(NOT CMAKE_CUDA_COMPILER)
    list(APPEND _missing "nvcc")
  endif()
  if(NOT CUDAToolkit_FOUND OR NOT TARGET CUDA::cublas)
    list(APPEND _missing "cuBLAS")
  endif()
  if(NOT MXLITE_CUDNN_INCLUDE_DIR OR NOT MXLITE_CUDNN_LIBRARY)
    list(APPEND _missing "cuDNN")
  endif()
  if(_missing)
    string(JOIN ", " _missing_text ${_missing})
    if(_mxlite_cuda_mode STREQUAL "ON")
      message(FATAL_ERROR "MXLITE_USE_CUDA=ON but not found: ${_missing_text} (set CUDAToolkit_ROOT / CUDNN_ROOT)")
    endif()
    set(MXLITE_CUDA_REASON "AUTO: not found: ${_missing_text}")
  else()
    set(MXLITE_CUDA_ENABLED ON)
    set(MXLITE_CUDA_REASON "${_mxlite_cuda_mode}: nvcc, cuBLAS and cuDNN found")
  endif()
endif()

if(MXLITE_CUDA_ENABLED)
  set(CMAKE_CUDA_ARCHITECTURES 90)
  set(CMAKE_CUDA_STANDARD 17)  # CMake 3.25 knows no CUDA20 flags for nvcc; .cu files are C++17
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  enable_language(CUDA)
  add_library(mxlite_cuda_deps INTERFACE)
  target_include_directories(mxlite_cuda_deps INTERFACE ${MXLITE_CUDNN_INCLUDE_DIR})
  target_link_libraries(mxlite_cuda_deps INTERFACE CUDA::cudart CUDA::cublas ${MXLITE_CUDNN_LIBRARY})
endif()
