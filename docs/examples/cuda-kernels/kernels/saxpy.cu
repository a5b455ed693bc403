// y = a·x + y, one element per thread.
#include "common.cuh"
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
  int i = global_index();
  if (i < n) y[i] = a * x[i] + y[i];
}
