// pitwall: the NVRTC kernels of the CUDA `inference` suite over bf16 activations, stored as raw
// 16-bit patterns and computed in f32 (so no CUDA toolkit header is needed): RMS norm, bias +
// GELU, bias + residual add, and causal multi-head attention. The matrix products between them
// are cuBLAS GEMMs. Each kernel has a host reference in f64 (suites/cuda/src/infer_ref.rs).

__device__ __forceinline__ float pw_bf16_load(unsigned short h) {
    return __uint_as_float(((unsigned int)h) << 16);
}

// Round to nearest even, as the PTX conversion does.
__device__ __forceinline__ unsigned short pw_bf16_store(float f) {
    unsigned short h;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
    return h;
}

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

// y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * gamma, one block per row (Zhang and
// Sennrich 2019, "Root Mean Square Layer Normalization").
extern "C" __global__ void rmsnorm_bf16(const unsigned short* __restrict__ x,
                                        const unsigned short* __restrict__ gamma,
                                        unsigned short* __restrict__ y, int rows, int cols,
                                        float eps) {
    __shared__ float scratch[32];
    int r = blockIdx.x;
    if (r >= rows) return;
    const unsigned short* xr = x + (size_t)r * cols;
    unsigned short* yr = y + (size_t)r * cols;
    float ss = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        float v = pw_bf16_load(xr[j]);
        ss += v * v;
    }
    ss = pw_block_sum(ss, scratch);
    float inv = rsqrtf(ss / (float)cols + eps);
    for (int j = threadIdx.x; j < cols; j += blockDim.x) {
        yr[j] = pw_bf16_store(pw_bf16_load(xr[j]) * inv * pw_bf16_load(gamma[j]));
    }
}

// In place over a row-major n = rows x cols matrix: y = gelu(y + bias[col]), the exact GELU
// 0.5 z (1 + erf(z / sqrt 2)) (Hendrycks and Gimpel 2016).
extern "C" __global__ void bias_gelu_bf16(unsigned short* __restrict__ y,
                                          const unsigned short* __restrict__ bias,
                                          unsigned long long n, int cols) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        float z = pw_bf16_load(y[i]) + pw_bf16_load(bias[i % (unsigned long long)cols]);
        y[i] = pw_bf16_store(0.5f * z * (1.0f + erff(z * 0.70710678118654752f)));
    }
}

// In place: y = y + bias[col] + residual, the residual connection after a projection.
extern "C" __global__ void bias_residual_bf16(unsigned short* __restrict__ y,
                                              const unsigned short* __restrict__ bias,
                                              const unsigned short* __restrict__ residual,
                                              unsigned long long n, int cols) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        float v = pw_bf16_load(y[i]) + pw_bf16_load(bias[i % (unsigned long long)cols]) +
                  pw_bf16_load(residual[i]);
        y[i] = pw_bf16_store(v);
    }
}

// Causal multi-head attention, one block per (query i, head h, sequence b): qkv is row-major
// (batch * seq) x (3 * heads * head_dim), each row q | k | v with head h at h * head_dim;
// out is (batch * seq) x (heads * head_dim). Scores s_j = scale * q . k_j for j <= i, softmax
// with the maximum subtracted, out = sum_j p_j v_j. Dynamic shared memory: (head_dim + seq)
// floats.
extern "C" __global__ void attention_causal_bf16(const unsigned short* __restrict__ qkv,
                                                 unsigned short* __restrict__ out, int seq,
                                                 int heads, int head_dim, float scale) {
    extern __shared__ float smem[];
    __shared__ float scratch[32];
    int i = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
    if (i >= seq) return;
    int d = heads * head_dim;
    size_t ld = 3 * (size_t)d;
    const unsigned short* base = qkv + (size_t)b * seq * ld;
    float* q = smem;
    float* p = smem + head_dim;
    for (int c = threadIdx.x; c < head_dim; c += blockDim.x) {
        q[c] = pw_bf16_load(base[(size_t)i * ld + (size_t)h * head_dim + c]);
    }
    __syncthreads();
    float m = __int_as_float(0xff800000);
    for (int j = threadIdx.x; j <= i; j += blockDim.x) {
        const unsigned short* k = base + (size_t)j * ld + d + (size_t)h * head_dim;
        float s = 0.0f;
        for (int c = 0; c < head_dim; ++c) s += q[c] * pw_bf16_load(k[c]);
        s *= scale;
        p[j] = s;
        m = fmaxf(m, s);
    }
    m = pw_block_max(m, scratch);
    float l = 0.0f;
    for (int j = threadIdx.x; j <= i; j += blockDim.x) {
        float e = expf(p[j] - m);
        p[j] = e;
        l += e;
    }
    // The reduction synchronises the block, so every p[j] is visible below.
    l = pw_block_sum(l, scratch);
    float inv = 1.0f / l;
    unsigned short* o = out + ((size_t)b * seq + i) * d + (size_t)h * head_dim;
    for (int c = threadIdx.x; c < head_dim; c += blockDim.x) {
        const unsigned short* v = base + 2 * (size_t)d + (size_t)h * head_dim + c;
        float acc = 0.0f;
        for (int j = 0; j <= i; ++j) acc += p[j] * pw_bf16_load(v[(size_t)j * ld]);
        o[c] = pw_bf16_store(acc * inv);
    }
}
