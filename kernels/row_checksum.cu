// A layer's output reduced to one number to verify: the float32 sum of the first row of a bf16 matrix (raw 16-bit
// values). One block, a fixed summing order (each thread a fixed stride, then a tree), so every layout sums the same
// bits and verifies byte for byte; the cost is a few microseconds a layer, small beside the layer's GEMM.

extern "C" __global__ void row_checksum(const void* y, float* out, int cols)
{
    __shared__ float partial[256];
    const unsigned short* row = (const unsigned short*)y;
    float sum = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x) sum += __uint_as_float(((unsigned int)row[j]) << 16);
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (int half = blockDim.x / 2; half > 0; half /= 2) {
        if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[0] = partial[0];
}
