#!/usr/bin/env bash
# Installs the build into a temporary prefix and checks what a user of the
# installed tlc gets: the files in place (versioned soname and its links,
# the CMake package, tlc.pc), every public header compiling alone as C11 and
# as C++17, and tests/package/consumer built and run once through
# find_package(tlc) and once through pkg-config.
# usage: check_install.sh BUILD_DIR SOURCE_DIR VERSION CC "EXTRA_FLAGS"
# (EXTRA_FLAGS: the sanitizer flags the library was built with, if any.)
set -euo pipefail
build=$1 src=$2 version=$3 cc=$4 flags=${5:-}
major=${version%%.*}
work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
prefix=$work/prefix
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; fail "cmake --install"; }

for f in bin/tlc lib/libtlc.so.$version lib/cmake/tlc/tlcConfig.cmake lib/cmake/tlc/tlcConfigVersion.cmake \
         lib/cmake/tlc/tlcTargets.cmake lib/pkgconfig/tlc.pc; do
  [[ -f $prefix/$f ]] || fail "$f is not installed"
done
[[ $(readlink "$prefix/lib/libtlc.so.$major") == libtlc.so.$version ]] || fail "lib/libtlc.so.$major is not a link to libtlc.so.$version"
[[ $(readlink "$prefix/lib/libtlc.so") == libtlc.so.$major ]] || fail "lib/libtlc.so is not a link to libtlc.so.$major"
soname=$(readelf -d "$prefix/lib/libtlc.so.$version" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[[ $soname == libtlc.so.$major ]] || fail "soname is '$soname', expected libtlc.so.$major"
installed=$(cd "$prefix/include/tlc" && ls) shipped=$(cd "$src/include/tlc" && ls)
[[ $installed == "$shipped" ]] || fail "include/tlc holds [$installed], the tree has [$shipped]"
"$prefix/bin/tlc" --version | grep -q "$version" || fail "bin/tlc --version does not say $version"
echo "installed: bin/tlc, lib/libtlc.so.$version (+ .so.$major, .so), include/tlc, lib/cmake/tlc, lib/pkgconfig/tlc.pc"

# Each public header alone, outside the tree, as C11 and as C++17.
cxx=$(command -v "${CXX:-c++}" || command -v clang++ || command -v g++ || true)
[[ -n $cxx ]] || fail "no C++ compiler to compile the headers as C++17"
for h in "$prefix"/include/tlc/*.h; do
  name=tlc/$(basename "$h")
  printf '#include <%s>\nint tlc_header_alone;\n' "$name" >"$work/alone.c"
  "$cc" -std=c11 -Wall -Wextra -Wpedantic -Werror -I"$prefix/include" -c "$work/alone.c" -o "$work/alone.o" \
    || fail "$name does not compile alone as C11"
  cp "$work/alone.c" "$work/alone.cpp"
  "$cxx" -std=c++17 -Wall -Wextra -Wpedantic -Werror -I"$prefix/include" -c "$work/alone.cpp" -o "$work/alone.o" \
    || fail "$name does not compile alone as C++17"
done
echo "headers: each of $(ls "$prefix/include/tlc" | wc -l) compiles alone as C11 and as C++17"

# find_package(tlc) -> tlc::tlc
cmake -S "$src/tests/package/consumer" -B "$work/cmake-consumer" -DCMAKE_PREFIX_PATH="$prefix" \
      -DCMAKE_C_COMPILER="$cc" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
      >"$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; fail "configuring the find_package consumer"; }
cmake --build "$work/cmake-consumer" >>"$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; fail "building the find_package consumer"; }
"$work/cmake-consumer/consumer" "$version" || fail "the find_package consumer"

# pkg-config tlc
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
[[ $(pkg-config --modversion tlc) == "$version" ]] || fail "pkg-config --modversion tlc is not $version"
# shellcheck disable=SC2046,SC2086 # pkg-config's output is a list of flags
"$cc" -std=c11 -Wall -Wextra -Werror $flags $(pkg-config --cflags tlc) "$src/tests/package/consumer/consumer.c" \
      -o "$work/pc-consumer" $(pkg-config --libs tlc) -Wl,-rpath,"$(pkg-config --variable=libdir tlc)" \
  || fail "building the consumer with pkg-config's flags"
"$work/pc-consumer" "$version" || fail "the pkg-config consumer"
echo "install: ok"
