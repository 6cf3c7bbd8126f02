# Decides MXLITE_MPI_ENABLED from MXLITE_USE_MPI (AUTO|ON|OFF), like cmake/Cuda.cmake for CUDA.
# MPI (Debian libopenmpi-dev) is needed by the dist_sync KVStore only; the local KVStore is always
# built.
set(MXLITE_MPI_ENABLED OFF)
set(MXLITE_MPI_REASON "MXLITE_USE_MPI=OFF")
string(TOUPPER "${MXLITE_USE_MPI}" _mxlite_mpi_mode)
if(NOT _mxlite_mpi_mode MATCHES "^(AUTO|ON|OFF)$")
  message(FATAL_ERROR "MXLITE_USE_MPI='${MXLITE_USE_MPI}': expected AUTO, ON or OFF")
endif()

if(NOT _mxlite_mpi_mode STREQUAL "OFF")
  # The C API only (compiled as C++): Open MPI's deprecated C++ bindings are left out.
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND AND MPIEXEC_EXECUTABLE)
    set(MXLITE_MPI_ENABLED ON)
    set(MXLITE_MPI_REASON "${_mxlite_mpi_mode}: MPI ${MPI_CXX_VERSION} found, ${MPIEXEC_EXECUTABLE}")
  elseif(_mxlite_mpi_mode STREQUAL "ON")
    message(FATAL_ERROR "MXLITE_USE_MPI=ON but MPI (libopenmpi-dev and mpirun) was not found")
  else()
    set(MXLITE_MPI_REASON "AUTO: MPI not found (install libopenmpi-dev openmpi-bin)")
  endif()
endif()
