#!/usr/bin/env bash
# ctest install_consumer: installs the build into a temporary prefix and builds tests/consumer against it
# as engines do — with CMake's find_package(ifa), with pkg-config, and as C++ (the headers' extern "C") —
# then runs each program.
#   tests/check_install.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in include/ifa/ifa.h include/ifa/version.h lib/pkgconfig/ifa.pc lib/cmake/ifa/ifaConfig.cmake bin/ifa-run; do
  [ -e "$tmp/prefix/$f" ] || { echo "FAIL: the install lacks $f"; exit 1; }
done
# Only the installed files are on the paths below (the source tree gives just consumer.c), and the install
# is moved first: every path inside it must be relative to where it lies.
mv "$tmp/prefix" "$tmp/moved"
cmake -S "$src/tests/consumer" -B "$tmp/cmake-build" -DCMAKE_PREFIX_PATH="$tmp/moved" >/dev/null
cmake --build "$tmp/cmake-build" >/dev/null
echo "== find_package(ifa)"
"$tmp/cmake-build/ifa_consumer"
echo "== pkg-config ifa"
export PKG_CONFIG_PATH="$tmp/moved/lib/pkgconfig"
# shellcheck disable=SC2046 # pkg-config's output is meant to split into arguments
cc -std=c11 -Wall -Wextra -Werror -pedantic -o "$tmp/pc_consumer" "$src/tests/consumer/consumer.c" \
  $(pkg-config --cflags --libs ifa) -lm
LD_LIBRARY_PATH="$(pkg-config --variable=libdir ifa)" "$tmp/pc_consumer"
echo "== C++ (pkg-config)"
# shellcheck disable=SC2046
c++ -x c++ -std=c++11 -Wall -Wextra -Werror -pedantic -o "$tmp/cxx_consumer" "$src/tests/consumer/consumer.c" \
  $(pkg-config --cflags --libs ifa)
LD_LIBRARY_PATH="$(pkg-config --variable=libdir ifa)" "$tmp/cxx_consumer"
