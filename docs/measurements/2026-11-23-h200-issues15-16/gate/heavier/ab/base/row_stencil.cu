// A 5-point smoothing stencil along the rows of an image stored row after row (row-major), for example one line of
// a Sobel-like filter pass.
//
// Halo-free chunking: every row is filtered on its own, and at both ends of a row the stencil clamps to the row's
// first and last element instead of reading the neighbouring row. A row therefore never needs data from outside
// itself, so a pipeline can cut the image into chunks at row boundaries and each chunk can be copied, filtered and
// copied back with no halo exchange. Chunks must start at row boundaries: set `pipeline.align` to `row_length`
// elements so that the planner only cuts there. Pass the chunk's element count as `n` (a multiple of
// `row_length`, except that it need not be for the very last, shorter chunk: a partial row is clamped the same way).
extern "C" __global__ void row_stencil(const float* __restrict__ in, float* __restrict__ out,
                                       unsigned long long n, unsigned int row_length)
{
    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const unsigned long long row_start = i - i % row_length;
        unsigned long long row_end = row_start + row_length;
        if (row_end > n) row_end = n;
        const unsigned long long last = row_end - 1;
        const unsigned long long l2 = i >= row_start + 2 ? i - 2 : row_start;
        const unsigned long long l1 = i >= row_start + 1 ? i - 1 : row_start;
        const unsigned long long r1 = i + 1 <= last ? i + 1 : last;
        const unsigned long long r2 = i + 2 <= last ? i + 2 : last;
        out[i] = 0.0625f * in[l2] + 0.25f * in[l1] + 0.375f * in[i] + 0.25f * in[r1] + 0.0625f * in[r2];
    }
}
