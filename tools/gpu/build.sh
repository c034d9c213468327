#!/usr/bin/env bash
# Builds what runs on a GPU machine (which has no LLVM and no cmocka) into
# gpu-build/ (Release, LLVM linked statically into libtlc.so), then gathers
# it in gpu-build/carry/: libtlc.so, the GPU test programs, jit_example and
# jit_bench, all stripped and finding libtlc.so beside themselves ($ORIGIN).
#
#   tools/gpu/build.sh            # then carry gpu-build/carry and run tools/gpu/run.sh there
#   JOBS=8 tools/gpu/build.sh     # parallel build (default 2)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/gpu-build
carry=$build/carry
programs=(test_rmsnorm test_runtime_smoke jit_example jit_bench)

cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTLC_STATIC_LLVM=ON -DTLC_SANITIZE=OFF \
      -DTLC_BUILD_TESTS=ON >"$build.cmake.log" 2>&1 || { cat "$build.cmake.log"; exit 1; }
cmake --build "$build" -j"${JOBS:-2}" --target tlc_shared "${programs[@]}"

rm -rf "$carry"
mkdir -p "$carry"
cp "$build/dsl-examples/libtlc.so" "$carry/"
for p in "${programs[@]}"; do
    cp "$(find "$build" -type f -name "$p" -perm -u+x | head -1)" "$carry/"
done
strip --strip-unneeded "$carry"/*

# Nothing but the C library, libstdc++, libm, zlib/zstd and the loader may be needed there.
if readelf -d "$carry/libtlc.so" | grep NEEDED | grep -vE 'lib(c|m|stdc\+\+|gcc_s|z|zstd|dl|rt|pthread)\.so|ld-linux'; then
    echo "build.sh: libtlc.so needs a library the GPU machine may lack (above)" >&2
    exit 1
fi
du -sh "$carry"/* | sort -h
echo "carry: $(du -sm "$carry" | cut -f1) MB in $carry"
