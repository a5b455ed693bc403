// pitwall: device-to-device copy by a kernel, 16 bytes per thread and step (the NVRTC twin of
// cuMemcpyDtoD in the `kernel` suite). Reads n16 16-byte words of src, writes them to dst.
extern "C" __global__ void copy_u128(uint4* __restrict__ dst, const uint4* __restrict__ src,
                                     unsigned long long n16) {
    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
         i < n16; i += stride) {
        dst[i] = src[i];
    }
}
