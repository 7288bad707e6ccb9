// A compute knob: each element goes through `iterations` dependent fused multiply-adds, so the kernel's time grows
// linearly with `iterations` while the bytes it reads and writes stay fixed. Raise it to make a pipeline
// compute-bound, lower it to make it copy-bound. The map x → x * 0.999f + 0.001f is contracting, so values stay
// finite for any count. Grid-stride: launch it with `grid: auto`.
extern "C" __global__ void fma_loop(const float* __restrict__ in, float* __restrict__ out,
                                    unsigned long long n, int iterations)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        float x = in[i];
        for (int k = 0; k < iterations; ++k) x = fmaf(x, 0.999f, 0.001f);
        out[i] = x;
    }
}
