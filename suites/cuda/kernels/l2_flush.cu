// pitwall: empties the L2 between samples, so a cold-cache sample starts with none of the
// benchmark's data in L2 and with no dirty line whose write-back the timed op would pay for.
// `l2_flush` overwrites a buffer at least twice the L2 size (the value changes every call, so
// the writes cannot be elided); `l2_read_sweep` then reads a second buffer at least twice the
// L2 size, so the lines left in L2 are clean copies of it and the dirty lines of the first
// were written back inside the (untimed) flush.
extern "C" __global__ void l2_flush(unsigned int* __restrict__ buf, unsigned long long n,
                                    unsigned int value) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        buf[i] = value ^ (unsigned int)i;
    }
}

// Reads `n` words of `buf`; writes `sink` only when the xor of a thread's words equals
// `never` (a value the caller knows it cannot be), so the loads cannot be elided and nothing
// is written in practice.
extern "C" __global__ void l2_read_sweep(const unsigned int* __restrict__ buf,
                                         unsigned long long n, unsigned int never,
                                         unsigned int* __restrict__ sink) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    unsigned int acc = 0;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        acc ^= __ldcg(buf + i);
    }
    if (acc == never) {
        *sink = acc;
    }
}
