// y = a * x + y over the chunk: y is read and written in place, the classic in/out buffer.
extern "C" __global__ void saxpy(unsigned long long n, float a, const float* __restrict__ x, float* __restrict__ y)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        y[i] = a * x[i] + y[i];
    }
}
