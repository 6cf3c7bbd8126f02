#!/usr/bin/env bash
# Installs what building and testing mxlite needs, only when something is missing (idempotent and
# quick when all is present). Sourced by tools/test.sh and tools/demo.sh.
set -euo pipefail

MXLITE_APT_PACKAGES=(
  build-essential cmake
  libgtest-dev libgmock-dev libbenchmark-dev
  libeigen3-dev libsqlite3-dev zlib1g-dev
  dataset-fashion-mnist
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  python3-numpy python3-pytest
  clang libclang-rt-14-dev  # the libFuzzer smoke test of the ONNX loader (tools/test.sh)
  libopenmpi-dev openmpi-bin
)

mxlite_missing_apt_packages() {
  local missing=()
  for package in "${MXLITE_APT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" \
      || missing+=("$package")
  done
  echo "${missing[@]:-}"
}

mxlite_install_deps() {
  local missing
  missing=$(mxlite_missing_apt_packages)
  if [ -n "$missing" ]; then
    echo "[mxlite] installing Debian packages: $missing"
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $missing >/dev/null
  fi
}
