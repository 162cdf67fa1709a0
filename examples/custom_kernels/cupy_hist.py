"""CuPy kernels for class-weighted label statistics in a data pipeline.

The float histogram accumulates with atomicAdd (BX404, reported on the line inside the string);
the integer counts are exact; the compaction takes output rows from an atomic (BX405).
"""
import cupy as cp

LABEL_STATS = r"""
extern "C" __global__ void label_stats(const int* label, const float* weight, float* mass, int* count, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&mass[label[i]], weight[i]);
        atomicAdd(&count[label[i]], 1);
    }
}
"""

KEEP_RARE = r"""
extern "C" __global__ void keep_rare(const int* label, const int* count, int* kept, int* n_kept, int n, int cutoff) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && count[label[i]] < cutoff) {
        int row = atomicAdd(n_kept, 1);
        kept[row] = i;
    }
}
"""

label_stats = cp.RawKernel(LABEL_STATS, "label_stats")
keep_rare = cp.RawKernel(KEEP_RARE, "keep_rare")
