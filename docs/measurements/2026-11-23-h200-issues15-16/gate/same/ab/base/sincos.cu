// The kernel of the classic "overlap data transfers" example: each element gains sqrt(sin²x + cos²x) with x its
// global index, so it needs the chunk's offset to compute the same thing chunked as whole. `a` is read and written
// in place.
extern "C" __global__ void sincos_accumulate(float* __restrict__ a, unsigned long long n, unsigned long long offset)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float x = (float)(offset + i);
        const float s = sinf(x);
        const float c = cosf(x);
        a[i] = a[i] + sqrtf(s * s + c * c);
    }
}
