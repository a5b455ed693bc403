// Shared by the example's kernels; found beside the source that includes it.
#pragma once
__device__ inline int global_index() { return blockIdx.x * blockDim.x + threadIdx.x; }
