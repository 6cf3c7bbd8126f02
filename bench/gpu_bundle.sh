#!/usr/bin/env bash
# Packs what bench/gpu_check.sh needs on a GPU machine that has CUDA, cuDNN (PyTorch's wheels) and
# PyTorch but none of mxlite's Debian dependencies and no package registry: the CUDA-enabled test
# binaries and programs of a build made here (stripped), the Debian shared libraries they link
# (protobuf, ONNX, SQLite, Open MPI, Google Benchmark), Open MPI's runtime for the NCCL stage
# (mpirun, orted, its plugins and help files, as Debian lays them out under /: .gpu/openmpi.tar.xz,
# unpacked in a folder of its own there and relocated with OPAL_PREFIX, since the GPU machine may
# carry another Open MPI's plugins in Debian's places) and Fashion-MNIST's training split.
#
#   bench/gpu_bundle.sh                  # from build/ (MXLITE_BUILD_DIR), into .gpu/
#
# .gpu/ is ignored by git; pass it to the device tool as `carry: [".gpu"]`. The CUDA, cuBLAS,
# cuDNN and NCCL libraries are not packed: the GPU machine's own are used.
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${MXLITE_BUILD_DIR:-build}
grep -q "MXLITE_USE_CUDA=1" "$build_dir/CMakeFiles/mxlite_objects.dir/flags.make" 2>/dev/null ||
  { echo "$build_dir was built without CUDA: nothing to check on a GPU" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/build/bin" "$stage/lib"
binaries=("$build_dir"/tests/*/*_test "$build_dir"/bin/*)
[ -x "$build_dir/tests/scheduler/kvstore_dist_check" ] &&
  binaries+=("$build_dir/tests/scheduler/kvstore_dist_check")
for binary in "${binaries[@]}"; do
  relative=build/${binary#"$build_dir"/}
  mkdir -p "$stage/$(dirname "$relative")"
  strip -o "$stage/$relative" "$binary"
done
# Shared libraries from Debian packages, i.e. everything but glibc, libstdc++ and CUDA's own.
# Open MPI's plugins (dlopened from its own folders) bring their libraries too.
mpi_files=()
if dpkg -s openmpi-bin >/dev/null 2>&1; then
  while read -r file; do
    [ -f "$file" ] && mpi_files+=("$file")
  done < <(dpkg -L openmpi-bin libopenmpi3 openmpi-common libpmix2 | grep -vE '/share/(doc|man|lintian)/')
fi
elf_files=("${binaries[@]}")
for file in "${mpi_files[@]}"; do
  file -L "$file" | grep -q ELF && elf_files+=("$file")
done
ldd "${elf_files[@]}" 2>/dev/null | awk '$2 == "=>" {print $3}' | sort -u |
  grep -vE '/(libc|libm|libdl|librt|libpthread|libgcc_s|libstdc\+\+)\.so|/usr/local/cuda' |
  while read -r library; do cp -L "$library" "$stage/lib/"; done

mkdir -p .gpu
# xz -9: its 64 MiB window holds a whole binary, so the library every binary links is packed once.
XZ_OPT=-9 tar -C "$stage" -cJf .gpu/bundle.tar.xz build lib
# Links are packed as the files they name (mpirun -> /etc/alternatives/mpirun -> orterun).
rm -f .gpu/openmpi.tar.xz
[ ${#mpi_files[@]} -eq 0 ] ||
  printf '%s\n' "${mpi_files[@]#/}" | tar -C / --no-recursion --dereference -cJf .gpu/openmpi.tar.xz -T -
mkdir -p .gpu/fashion-mnist
cp /usr/share/datasets/fashion-mnist/{train,t10k}-*-idx*-ubyte.gz .gpu/fashion-mnist/
du -sh .gpu/*.tar.xz .gpu/fashion-mnist
