// racecheck_arrive.cu: does compute-sanitizer's racecheck take bar.arrive
// as ordering the arriving threads' shared-memory accesses before those of
// the threads that wait at the barrier (PTX ISA: when the barrier
// completes, the accesses each participant requested before it are
// performed relative to all participants)?
//
// The kernel is the protocol of tlc's warpgroup turns
// (docs/architecture.md, "Warp specialization"): two warpgroups take
// iterations in turns; the owner writes a per-row slot and arrives at a
// named barrier (one per parity of k); the other warpgroup waits there and
// reads the slot; a third warpgroup takes no part, and a barrier of the
// 256 consumers separates runs of the loop. Mode 0 arrives, mode 1 waits
// at the same barrier instead: the same order, a stronger barrier.
// Checked on the H100 with CUDA 13.0: mode 0 is reported as racy, mode 1
// is clean, and both compute the same sums.
//
//   nvcc -arch=sm_90a -lineinfo -o racecheck_arrive tools/gpu/racecheck_arrive.cu
//   compute-sanitizer --tool racecheck ./racecheck_arrive
#include <cstdio>

__device__ __forceinline__ void bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(n) : "memory"); }
__device__ __forceinline__ void bar_arrive(int id, int n) { asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(n) : "memory"); }

template <int MODE>
__global__ void turns(float *out, int n, int runs) {
    __shared__ float slot[64];
    int t = threadIdx.x, wg = t / 128, row = (t % 128) / 2;
    if (wg == 2) { // the producer warpgroup of a warp-specialized kernel
        out[blockIdx.x * 384 + t] = 0;
        return;
    }
    float acc = 0.f, mine = 0.f;
    for (int r = 0; r < runs; r++) {
        bar_sync(1, 256);
        for (int k = 0; k < n; k++) {
            if ((k & 1) == wg) { // the owner: publish, arrive
                mine = (float)(k + r);
                __syncwarp();                    // the row's other lane has read the slot
                if (t % 2 == 0) slot[row] = mine; // one lane per row
                if (MODE == 0) bar_arrive(2 + (k & 1), 256);
                else bar_sync(2 + (k & 1), 256);
            } else { // the other warpgroup: wait, read
                bar_sync(2 + (k & 1), 256);
                mine = slot[row];
            }
            acc += mine;
        }
    }
    out[blockIdx.x * 384 + t] = acc;
}

int main() {
    const int blocks = 4, n = 9, runs = 3;
    float *d, h[blocks * 384];
    cudaMalloc(&d, sizeof h);
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 0) turns<0><<<blocks, 384>>>(d, n, runs);
        else turns<1><<<blocks, 384>>>(d, n, runs);
        cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
        // every consumer sums k + r over all iterations and runs
        float want = 0;
        for (int r = 0; r < runs; r++)
            for (int k = 0; k < n; k++) want += (float)(k + r);
        int bad = 0;
        for (int b = 0; b < blocks; b++)
            for (int t = 0; t < 256; t++) bad += h[b * 384 + t] != want;
        printf("mode %d (%s): %s, %d wrong sums\n", mode, mode ? "bar.sync" : "bar.arrive",
               cudaGetErrorString(cudaGetLastError()), bad);
    }
    cudaFree(d);
    return 0;
}
