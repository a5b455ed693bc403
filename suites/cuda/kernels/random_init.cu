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

// fp8 e4m3 (OCP 8-bit floating point, "E4M3": bias 7, no infinity, 2^-9 subnormal step) as raw
// bytes, rounded to nearest even in integer arithmetic (no fp8 instruction, so it compiles for
// sm_80 too). |v| < 1 never overflows; a value that would round to zero becomes the smallest
// subnormal, so none is zero. Mirrored on the host by `fp8::encode_e4m3` and its tests.
extern "C" __global__ void random_uniform_fp8_e4m3(unsigned char* __restrict__ out,
                                                   unsigned long long n,
                                                   unsigned long long seed) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        float v = pw_uniform(seed, i);
        unsigned int bits = __float_as_uint(v);
        unsigned int sign = (bits >> 24) & 0x80u;
        float a = fabsf(v);
        unsigned int code;
        if (a < 0.015625f) {  // below 2^-6: subnormal, steps of 2^-9
            int m = __float2int_rn(a * 512.0f);  // 0..8; 8 is the smallest normal's code
            code = m == 0 ? 1u : (unsigned int)m;
        } else {
            unsigned int ab = __float_as_uint(a);
            int e = (int)((ab >> 23) & 0xffu) - 127;  // -6..-1
            unsigned int mant = ab & 0x7fffffu;
            code = ((unsigned int)(e + 7) << 3) | (mant >> 20);
            unsigned int rem = mant & 0xfffffu, half = 0x80000u;
            if (rem > half || (rem == half && (code & 1u))) code += 1u;  // carries into e
        }
        out[i] = (unsigned char)(sign | code);
    }
}
