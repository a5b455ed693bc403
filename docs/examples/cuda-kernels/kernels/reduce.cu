// Row sums of an n×1024 matrix: a shared-memory tree (one block of 256 threads per row) and the
// simple loop it is checked against.
extern "C" __global__ void row_sum_fast(const float* x, float* out) {
  extern __shared__ float part[];  // blockDim.x floats
  const float* row = x + (size_t)blockIdx.x * 1024;
  float s = 0.0f;
  for (int c = threadIdx.x; c < 1024; c += blockDim.x) s += row[c];
  part[threadIdx.x] = s;
  __syncthreads();
  for (int w = blockDim.x / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = part[0];
}

extern "C" __global__ void row_sum_simple(const float* x, float* out) {
  if (threadIdx.x != 0) return;
  float s = 0.0f;
  for (int c = 0; c < 1024; ++c) s += x[(size_t)blockIdx.x * 1024 + c];
  out[blockIdx.x] = s;
}
