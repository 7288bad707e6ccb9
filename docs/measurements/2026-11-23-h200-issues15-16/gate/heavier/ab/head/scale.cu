// Memory-bound element-wise kernels: one read and one write per element, next to no arithmetic.

// out = in * factor
extern "C" __global__ void scale(const float* __restrict__ in, float* __restrict__ out, unsigned long long n, float factor)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = in[i] * factor;
    }
}

// out = in, for any 4-byte element type
extern "C" __global__ void copy32(const unsigned int* __restrict__ in, unsigned int* __restrict__ out, unsigned long long n)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        out[i] = in[i];
    }
}
