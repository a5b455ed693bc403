// pitwall: STREAM triad a[i] = b[i] + s*c[i] over f64, as the CPU suite's stream_triad, so the
// two backends count the same 3 arrays of bytes per element.
extern "C" __global__ void triad_f64(double* __restrict__ a, const double* __restrict__ b,
                                     const double* __restrict__ c, double s,
                                     unsigned long long n) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        a[i] = b[i] + s * c[i];
    }
}
