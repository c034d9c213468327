#!/usr/bin/env bash
# Compares the machine code of two PTX snapshots (tools/dev/ptx_snapshot.sh)
# without a GPU: every NAME.ARCH.ptx present in both folders is assembled by
# ptxas for its arch and disassembled by nvdisasm, and the listings (code
# addresses dropped) are compared. Prints one line per file whose PTX
# differs: "same" (same SASS), "SASS" (different; with both instruction
# counts) or "fail"; then a summary.
# usage: tools/dev/sass_diff.sh DIR_A DIR_B
# Needs ptxas ($PTXAS, else /usr/local/cuda/bin/ptxas) and nvdisasm
# ($NVDISASM): PyPI's nvidia-cuda-nvdisasm wheel carries one
# (pip download --no-deps nvidia-cuda-nvdisasm; unzip; nvidia/cu*/bin/nvdisasm).
set -u
a=$1 b=$2
ptxas=${PTXAS:-/usr/local/cuda/bin/ptxas}
nvdisasm=${NVDISASM:-nvdisasm}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sass() { # PTX_FILE ARCH OUT
    sed '/^exit [0-9]*$/d' "$1" >"$tmp/in.ptx"
    "$ptxas" -arch="$2" "$tmp/in.ptx" -o "$tmp/out.cubin" 2>/dev/null &&
        "$nvdisasm" -c "$tmp/out.cubin" | sed -E 's@/\*[0-9a-f]+\*/@@' >"$3"
}
same=0 differ=0 failed=0
for pa in "$a"/*.ptx; do
    name=$(basename "$pa")
    pb=$b/$name
    [ -f "$pb" ] || continue
    cmp -s "$pa" "$pb" && continue
    grep -q '^\.entry\|^\.visible \.entry' "$pa" || continue
    arch=${name%.ptx}
    arch=${arch##*.}
    if sass "$pa" "$arch" "$tmp/a.sass" && sass "$pb" "$arch" "$tmp/b.sass"; then
        if cmp -s "$tmp/a.sass" "$tmp/b.sass"; then
            echo "same $name"; same=$((same + 1))
        else
            echo "SASS $name $(grep -c '^ ' "$tmp/a.sass") $(grep -c '^ ' "$tmp/b.sass")"; differ=$((differ + 1))
        fi
    else
        echo "fail $name"; failed=$((failed + 1))
    fi
done
echo "PTX differs in $((same + differ + failed)) files: SASS the same in $same, different in $differ, not assembled in $failed"
