// pitwall: row-wise kernels of the `kernel` suite over a row-major rows x cols f32 matrix, one
// block per row (blockDim.x a multiple of 32, at most 1024): a row sum, a softmax and a layer
// norm. Each reads its row from memory once per pass; see docs/SUITES.md for the bytes counted.

// Sum over the block; every thread gets the result. `scratch` holds 32 floats.
__device__ __forceinline__ float pw_block_sum(float v, float* scratch) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();  // scratch may still be read by a previous reduction
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    int warps = (blockDim.x + 31) >> 5;
    v = lane < warps ? scratch[lane] : 0.0f;
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

__device__ __forceinline__ float pw_block_max(float v, float* scratch) {
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    __syncthreads();
    if (lane == 0) scratch[warp] = v;
    __syncthreads();
    int warps = (blockDim.x + 31) >> 5;
    v = lane < warps ? scratch[lane] : __int_as_float(0xff800000);
    for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

// out[r] = sum of row r.
extern "C" __global__ void reduce_rows_f32(const float* __restrict__ x, float* __restrict__ out,
                                           int rows, int cols) {
    __shared__ float scratch[32];
    int r = blockIdx.x;
    if (r >= rows) return;
    const float* row = x + (size_t)r * cols;
    float acc = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) acc += row[j];
    acc = pw_block_sum(acc, scratch);
    if (threadIdx.x == 0) out[r] = acc;
}

// y = softmax(x) along each row, max-subtracted.
extern "C" __global__ void softmax_rows_f32(const float* __restrict__ x, float* __restrict__ y,
                                            int rows, int cols) {
    __shared__ float scratch[32];
    int r = blockIdx.x;
    if (r >= rows) return;
    const float* row = x + (size_t)r * cols;
    float* dst = y + (size_t)r * cols;
    float m = __int_as_float(0xff800000);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) m = fmaxf(m, row[j]);
    m = pw_block_max(m, scratch);
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += __expf(row[j] - m);
    s = pw_block_sum(s, scratch);
    float inv = 1.0f / s;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) dst[j] = __expf(row[j] - m) * inv;
}

// y = (x - mean) / sqrt(var + eps) * gamma + beta along each row (biased variance, two
// passes over the row for the statistics).
extern "C" __global__ void layernorm_rows_f32(const float* __restrict__ x,
                                              const float* __restrict__ gamma,
                                              const float* __restrict__ beta,
                                              float* __restrict__ y, int rows, int cols,
                                              float eps) {
    __shared__ float scratch[32];
    int r = blockIdx.x;
    if (r >= rows) return;
    const float* row = x + (size_t)r * cols;
    float* dst = y + (size_t)r * cols;
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) s += row[j];
    float mean = pw_block_sum(s, scratch) / (float)cols;
    float q = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        float d = row[j] - mean;
        q += d * d;
    }
    float rstd = rsqrtf(pw_block_sum(q, scratch) / (float)cols + eps);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        dst[j] = (row[j] - mean) * rstd * gamma[j] + beta[j];
    }
}
