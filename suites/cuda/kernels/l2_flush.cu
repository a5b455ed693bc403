// pitwall: overwrites a buffer at least twice the L2 size between samples, so a cold-cache
// sample starts with none of the benchmark's data in L2. The value changes every call, so the
// writes cannot be elided.
extern "C" __global__ void l2_flush(unsigned int* __restrict__ buf, unsigned long long n,
                                    unsigned int value) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        buf[i] = value ^ (unsigned int)i;
    }
}
