// A synthetic backward pass for configs/ddp.yaml: each layer's gradients from a small resident table of
// activations, a fixed number of dependent FMAs an element (the compute knob), and after the all-reduce one
// checksum per layer to verify. Elementwise with the global index, so any bucketing computes the same bits.

// grads[i] for the chunk whose first element is `offset` of the whole gradient buffer. Grid-stride: `grid: auto`.
extern "C" __global__ void layer_grads(const float* __restrict__ act, float* __restrict__ grads, unsigned long long n,
                                       unsigned long long offset, unsigned long long actMask, int iterations)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const unsigned long long g = offset + i;
        // The table repeats every actMask + 1 elements; the layer's index (every 2^20 elements) keeps layers apart.
        float x = act[g & actMask] + (float)(g >> 20) * 0.0001f;
        for (int k = 0; k < iterations; ++k) x = fmaf(x, 0.999f, 0.001f);
        grads[i] = x;
    }
}

// check[l] = the float32 sum of every `step`-th gradient of layer l, for the chunk's `layers` layers. One block a
// layer (grid-stride over layers, launched with a fixed grid), a fixed summing order (each thread a fixed stride,
// then a tree): every bucketing sums the same bits, and R ranks' all-reduce makes it exactly R times one rank's for R
// a power of two.
extern "C" __global__ void layer_checksum(const float* __restrict__ grads, float* __restrict__ check,
                                          unsigned long long layers, unsigned long long layerSize, int step)
{
    __shared__ float partial[256];
    for (unsigned long long l = blockIdx.x; l < layers; l += gridDim.x) {
        const float* layer = grads + l * layerSize;
        float sum = 0.0f;
        for (unsigned long long j = (unsigned long long)threadIdx.x * step; j < layerSize; j += (unsigned long long)blockDim.x * step) sum += layer[j];
        partial[threadIdx.x] = sum;
        __syncthreads();
        for (int half = blockDim.x / 2; half > 0; half /= 2) {
            if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
            __syncthreads();
        }
        if (threadIdx.x == 0) check[l] = partial[0];
        __syncthreads();
    }
}
