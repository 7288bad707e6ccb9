// The activation between two dense layers of configs/inference.yaml: h = max(h + bias, 0) over a chunk of rows of
// bfloat16 activations, with a float32 bias per column. bf16 is handled as its raw 16 bits (the upper half of a
// float32), so the kernel needs no headers NVRTC may lack; rounding back is to nearest, ties to even, as cuBLAS does.

__device__ __forceinline__ float bf16_to_float(unsigned short bits) { return __uint_as_float(((unsigned int)bits) << 16); }

__device__ __forceinline__ unsigned short float_to_bf16(float value)
{
    unsigned int bits = __float_as_uint(value);
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    return (unsigned short)(bits >> 16);
}

extern "C" __global__ void bias_relu(void* h, const void* bias, unsigned long long rows, int cols)
{
    unsigned short* values = (unsigned short*)h;
    const float* b = (const float*)bias;
    const unsigned long long n = rows * (unsigned long long)cols;
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = bf16_to_float(values[i]) + b[i % cols];
        values[i] = float_to_bf16(v > 0.0f ? v : 0.0f);
    }
}
