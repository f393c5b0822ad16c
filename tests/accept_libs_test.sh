#!/usr/bin/env bash
# gpurent-accept runs in a plain Debian container (docs/acceptance.md): it may need no shared
# library beyond the C and C++ runtimes. A library file that starts pulling in yaml-cpp or OpenSSL
# (or a unity batch that puts such a file beside one the runner uses, CMakeLists.txt) fails here
# without a container. Usage: accept_libs_test.sh PATH_TO_GPURENT_ACCEPT
set -euo pipefail
bin=$1
command -v ldd >/dev/null || { echo "accept libs: ldd not found, skipped"; exit 77; }
extra=$(ldd "$bin" | awk '{print $1}' |
  grep -Ev '^(linux-vdso\.so\.1|/lib64/ld-linux-x86-64\.so\.2|/lib/ld-linux-aarch64\.so\.1|libc\.so\.6|libm\.so\.6|libstdc\+\+\.so\.6|libgcc_s\.so\.1)$' || true)
if [ -n "$extra" ]; then
  echo "accept libs: $bin needs more than the C and C++ runtimes:"
  echo "$extra"
  exit 1
fi
echo "accept libs: $bin needs only the C and C++ runtimes"
