#!/usr/bin/env bash
# Builds what runs on a GPU machine (which has no LLVM and no cmocka) into
# gpu-build/ (Release, LLVM linked statically into libtlc.so), then gathers
# it in gpu-build/carry/: libtlc.so.MAJOR (and a libtlc.so link to it), the
# GPU test programs, jit_example and jit_bench, all stripped and finding
# libtlc.so.MAJOR beside themselves ($ORIGIN).
#
# It also builds tools/bench/launch_bench (host cost of tlrt_launch) into
# the carry, against libtlc.so.
#
#   tools/gpu/build.sh            # then carry gpu-build/carry and run tools/gpu/run.sh there
#   JOBS=8 tools/gpu/build.sh     # parallel build (default 2)
#   TLC_GPU_BUILD=build-gpu-x tools/gpu/build.sh   # another build folder (relative to the repo
#                                 # root; keep it git-ignored, e.g. build*/), carry in it
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/${TLC_GPU_BUILD:-gpu-build}
carry=$build/carry
# Every executable that tests/gpu/CMakeLists.txt defines, plus the JIT tools.
mapfile -t gpu_tests < <(sed -n 's/^ *add_executable(\(test_[A-Za-z0-9][A-Za-z0-9_]*\).*/\1/p' "$root/tests/gpu/CMakeLists.txt")
# tlc_add_gpu_test(<name> ...) defines test_<name>.
mapfile -t -O "${#gpu_tests[@]}" gpu_tests < <(sed -n 's/^ *tlc_add_gpu_test(\([A-Za-z0-9_]*\).*/test_\1/p' "$root/tests/gpu/CMakeLists.txt")
programs=("${gpu_tests[@]}" jit_example jit_bench)

mkdir -p "$build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DTLC_STATIC_LLVM=ON -DTLC_SANITIZE=OFF \
      -DTLC_BUILD_TESTS=ON >"$build/configure.log" 2>&1 || { cat "$build/configure.log"; exit 1; }
required=(tlc_shared test_rmsnorm test_runtime_smoke jit_example jit_bench)
cmake --build "$build" -j"${JOBS:-2}" --target "${required[@]}"
built=()
for p in "${programs[@]}"; do # another helper's GPU test that does not build yet is left out, loudly
    if cmake --build "$build" -j"${JOBS:-2}" --target "$p" >"$build/build-$p.log" 2>&1; then built+=("$p")
    else echo "build.sh: WARNING: $p did not build (log: $build/build-$p.log); not carried" >&2; fi
done
programs=("${built[@]}")

rm -rf "$carry"
mkdir -p "$carry"
# The programs need libtlc.so.MAJOR (the soname); libtlc.so is for Python's --lib.
soname=$(readelf -d "$build/compiler/libtlc.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
cp "$(readlink -f "$build/compiler/libtlc.so")" "$carry/$soname"
ln -s "$soname" "$carry/libtlc.so"
for p in "${programs[@]}"; do
    # the one the build just made: the newest of that name (an old copy elsewhere under the build folder must not win)
    cp "$(find "$build" -type f -name "$p" -perm -u+x -printf '%T@ %p\n' | sort -rn | head -1 | cut -d' ' -f2-)" "$carry/"
done
# launch_bench uses only the public API: built here against libtlc.so.
cc -O2 -std=c11 -Wall -Wextra -Werror -I"$root/include" "$root/tools/bench/launch_bench.c" -o "$carry/launch_bench" \
   -L"$carry" -ltlc -Wl,-rpath,'$ORIGIN'
find "$carry" -type f -exec strip --strip-unneeded {} +

# Nothing but the C library, libstdc++, libm, zlib/zstd and the loader may be needed there.
if readelf -d "$carry/$soname" | grep NEEDED | grep -vE 'lib(c|m|stdc\+\+|gcc_s|z|zstd|dl|rt|pthread)\.so|ld-linux'; then
    echo "build.sh: libtlc.so needs a library the GPU machine may lack (above)" >&2
    exit 1
fi
du -sh "$carry"/* | sort -h
echo "carry: $(du -sm "$carry" | cut -f1) MB in $carry"
