// A kernel that does next to nothing, so that a rep of many of them measures what issuing them costs.

// x += 1 over the chunk
extern "C" __global__ void bump(float* x, unsigned long long n)
{
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] += 1.0f;
}
