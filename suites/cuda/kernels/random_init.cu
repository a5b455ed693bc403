// pitwall: random inputs on the device. A counter-based hash (splitmix64 of seed and index)
// gives element i the same value on every run and every launch shape; values are uniform in
// (-1, 1) on a grid of 2^-21 offset by half a step, so none is ever zero (also after rounding
// to fp16 or bf16, whose smallest normal magnitudes are far below 2^-22).

__device__ __forceinline__ unsigned long long pw_mix(unsigned long long z) {
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

__device__ __forceinline__ float pw_uniform(unsigned long long seed, unsigned long long i) {
    unsigned long long h = pw_mix(seed ^ pw_mix(i));
    unsigned int k = (unsigned int)(h >> 42);  // 22 bits
    return ((float)k + 0.5f) * (1.0f / 2097152.0f) - 1.0f;  // (k + 0.5) / 2^21 - 1
}

extern "C" __global__ void random_uniform_f32(float* __restrict__ out, unsigned long long n,
                                              unsigned long long seed) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        out[i] = pw_uniform(seed, i);
    }
}

extern "C" __global__ void random_uniform_f64(double* __restrict__ out, unsigned long long n,
                                              unsigned long long seed) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        out[i] = (double)pw_uniform(seed, i);
    }
}

// fp16 and bf16 as raw 16-bit patterns (round to nearest even by the PTX conversions), so no
// header of the CUDA toolkit is needed.
extern "C" __global__ void random_uniform_f16(unsigned short* __restrict__ out,
                                              unsigned long long n, unsigned long long seed) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        unsigned short h;
        asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h) : "f"(pw_uniform(seed, i)));
        out[i] = h;
    }
}

extern "C" __global__ void random_uniform_bf16(unsigned short* __restrict__ out,
                                               unsigned long long n, unsigned long long seed) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        unsigned short h;
        asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(pw_uniform(seed, i)));
        out[i] = h;
    }
}
