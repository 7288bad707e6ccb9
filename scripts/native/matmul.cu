// The native baseline for cuda-pipe's matmul stage (issue 28): the two products of configs/inference-matmul.yaml,
// each alone on whole buffers as cuda-pipe's stage modes run them, through cublasLtMatmul with the calls
// src/kinds/matmul/runtime.ts makes (compute and scale 32F, row-major operands as the column-major Dᵀ = Bᵀ·Aᵀ, B stored
// as Bᵀ, the heuristic's first algorithm within a 32 MiB workspace, D written over C):
//   layer1: h[8192×4096] = relu(x[8192×4096] · w1ᵀ + b1), bf16, the bias and ReLU in the epilogue (RELU_BIAS);
//   layer2: logits[8192×1000] = h · w2ᵀ, bf16, no epilogue, h as layer1 left it (about half zeros, as in cuda-pipe's
//   layer2 mode, which reads the h the earlier modes wrote).
// x, w1 and w2 hold cuda-pipe's random distribution (src/data/patterns.ts: bf16 of either sign, magnitude in
// [0.125, 0.25), every mantissa bit random) from another generator, and b1 cuda-pipe's constant 0.01, so the GEMMs
// multiply bits like the config's (a GEMM's power, so its clock, depends on them). Each rep is one product timed
// with CUDA events on one stream; the median of REPS reps after WARMUP, per product. Prints one JSON line.
//
// libcublasLt is opened with dlopen at run time (--lib, else libcublasLt.so.13, then .so.12), so this builds where no
// cuBLAS is installed. Build: scripts/native/build.sh, into build/native/matmul.
//
// Usage: matmul [--rows 8192] [--reps 200] [--warmup 20] [--workspace BYTES] [--lib PATH]
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <dlfcn.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
#define CHECK_LT(x) do { int status_ = (x); if (status_ != 0) { fprintf(stderr, "%s: cuBLAS status %d (%s)\n", #x, status_, lt.statusString(status_)); exit(1); } } while (0)

// The cuBLASLt ABI this program needs, declared here because no cuBLAS headers are installed where it is built; the
// values are those of src/kinds/matmul/cublaslt.ts, which says where they come from.
typedef void *cublasLtHandle_t;
typedef void *cublasLtMatmulDesc_t;
typedef void *cublasLtMatrixLayout_t;
typedef void *cublasLtMatmulPreference_t;
struct cublasLtMatmulAlgo_t { uint64_t data[8]; };
struct cublasLtMatmulHeuristicResult_t {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceSize;
  int state;
  float wavesCount;
  int reserved[4];
};
static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == 96, "the heuristic result is 96 bytes, as runtime.ts reads it");
enum {
  R_32F = 0, R_16BF = 14, COMPUTE_32F = 68, OP_N = 0, OP_T = 1,
  DESC_TRANSA = 3, DESC_TRANSB = 4, DESC_EPILOGUE = 7, DESC_BIAS_POINTER = 8, DESC_BIAS_DATA_TYPE = 26,
  EPILOGUE_DEFAULT = 1, EPILOGUE_RELU_BIAS = 6, PREF_MAX_WORKSPACE_BYTES = 1,
};
struct Lt {
  int (*create)(cublasLtHandle_t *);
  int (*destroy)(cublasLtHandle_t);
  size_t (*version)();
  const char *(*statusString)(int);
  int (*descCreate)(cublasLtMatmulDesc_t *, int, int);
  int (*descDestroy)(cublasLtMatmulDesc_t);
  int (*descSet)(cublasLtMatmulDesc_t, int, const void *, size_t);
  int (*layoutCreate)(cublasLtMatrixLayout_t *, int, uint64_t, uint64_t, int64_t);
  int (*layoutDestroy)(cublasLtMatrixLayout_t);
  int (*prefCreate)(cublasLtMatmulPreference_t *);
  int (*prefDestroy)(cublasLtMatmulPreference_t);
  int (*prefSet)(cublasLtMatmulPreference_t, int, const void *, size_t);
  int (*heuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                   cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t *, int *);
  int (*matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *, cublasLtMatrixLayout_t, const void *,
                cublasLtMatrixLayout_t, const void *, const void *, cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,
                const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t);
} lt;

template <typename F> static void bind(void *lib, const char *name, const char *path, F &f) {
  void *symbol = dlsym(lib, name);
  if (!symbol) { fprintf(stderr, "%s lacks %s\n", path, name); exit(3); }
  f = (F)symbol;
}

static std::string loadLt(const char *requested) {
  const char *tries[] = {requested, "libcublasLt.so.13", "libcublasLt.so.12"};
  for (const char *path : tries) {
    if (!path) continue;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "dlopen %s: %s\n", path, dlerror()); if (requested) exit(3); continue; }
    bind(lib, "cublasLtCreate", path, lt.create);
    bind(lib, "cublasLtDestroy", path, lt.destroy);
    bind(lib, "cublasLtGetVersion", path, lt.version);
    bind(lib, "cublasLtGetStatusString", path, lt.statusString);
    bind(lib, "cublasLtMatmulDescCreate", path, lt.descCreate);
    bind(lib, "cublasLtMatmulDescDestroy", path, lt.descDestroy);
    bind(lib, "cublasLtMatmulDescSetAttribute", path, lt.descSet);
    bind(lib, "cublasLtMatrixLayoutCreate", path, lt.layoutCreate);
    bind(lib, "cublasLtMatrixLayoutDestroy", path, lt.layoutDestroy);
    bind(lib, "cublasLtMatmulPreferenceCreate", path, lt.prefCreate);
    bind(lib, "cublasLtMatmulPreferenceDestroy", path, lt.prefDestroy);
    bind(lib, "cublasLtMatmulPreferenceSetAttribute", path, lt.prefSet);
    bind(lib, "cublasLtMatmulAlgoGetHeuristic", path, lt.heuristic);
    bind(lib, "cublasLtMatmul", path, lt.matmul);
    return path;
  }
  fprintf(stderr, "no libcublasLt could be loaded (pass --lib PATH)\n");
  exit(3);
}

// cuda-pipe's seeded bf16 distribution (see gemm.cu's fillToolBits16): either sign, magnitude in [0.125, 0.25).
__device__ unsigned mix(size_t i, unsigned seed) {
  unsigned x = (unsigned)i * 2654435761u ^ seed * 0x9e3779b9u;
  x ^= x >> 15; x *= 0x2c1b3c6du; x ^= x >> 12; x *= 0x297a2d39u; x ^= x >> 15;
  return x;
}
__global__ void fillRandom(unsigned short *p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned r = mix(i, seed);
    p[i] = (unsigned short)(((r >> 16) & 0x8000) | 0x3e00 | (r & 0x7f));
  }
}
__global__ void fillConstant(__nv_bfloat16 *p, size_t n, float value) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = __float2bfloat16(value);
}

static void *deviceBuffer(size_t elements) {
  void *p;
  CHECK(cudaMalloc(&p, elements * 2));
  CHECK(cudaMemset(p, 0, elements * 2));
  return p;
}

/** One row-major product D[rows×n] = epilogue(A[rows×k] · Bᵀ + bias), Bᵀ stored n rows of k, prepared once. */
struct Product {
  const char *name;
  long rows, n, k;
  const void *a, *b, *bias;
  void *d;
  cublasLtMatmulDesc_t desc;
  cublasLtMatrixLayout_t layoutA, layoutB, layoutD;
  cublasLtMatmulHeuristicResult_t algorithm;
};

// As runtime.ts: cuBLASLt's A is our B (k × n, ld k, transposed), its B our A (k × rows, ld k), its D ours (n × rows, ld n).
static void prepare(Product &p, cublasLtHandle_t handle, cublasLtMatmulPreference_t preference) {
  CHECK_LT(lt.descCreate(&p.desc, COMPUTE_32F, R_32F));
  int transA = OP_T, transB = OP_N, epilogue = p.bias ? EPILOGUE_RELU_BIAS : EPILOGUE_DEFAULT, biasType = R_16BF;
  CHECK_LT(lt.descSet(p.desc, DESC_TRANSA, &transA, sizeof transA));
  CHECK_LT(lt.descSet(p.desc, DESC_TRANSB, &transB, sizeof transB));
  CHECK_LT(lt.descSet(p.desc, DESC_EPILOGUE, &epilogue, sizeof epilogue));
  if (p.bias) {
    CHECK_LT(lt.descSet(p.desc, DESC_BIAS_POINTER, &p.bias, sizeof p.bias));
    CHECK_LT(lt.descSet(p.desc, DESC_BIAS_DATA_TYPE, &biasType, sizeof biasType));
  }
  CHECK_LT(lt.layoutCreate(&p.layoutA, R_16BF, p.k, p.n, p.k));
  CHECK_LT(lt.layoutCreate(&p.layoutB, R_16BF, p.k, p.rows, p.k));
  CHECK_LT(lt.layoutCreate(&p.layoutD, R_16BF, p.n, p.rows, p.n));
  int returned = 0;
  CHECK_LT(lt.heuristic(handle, p.desc, p.layoutA, p.layoutB, p.layoutD, p.layoutD, preference, 1, &p.algorithm, &returned));
  if (returned < 1 || p.algorithm.state != 0) { fprintf(stderr, "%s: the heuristic returned no algorithm\n", p.name); exit(1); }
}

static void run(const Product &p, cublasLtHandle_t handle, void *workspace, size_t workspaceBytes, cudaStream_t stream) {
  const float alpha = 1.0f, beta = 0.0f;
  CHECK_LT(lt.matmul(handle, p.desc, &alpha, p.b, p.layoutA, p.a, p.layoutB, &beta, p.d, p.layoutD, p.d, p.layoutD, &p.algorithm.algo, workspace,
                     workspaceBytes, stream));
}

int main(int argc, char **argv) {
  long rows = 8192, reps = 200, warmup = 20;
  size_t workspaceBytes = 32u << 20;
  const char *libPath = nullptr;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> const char * { if (i + 1 >= argc) { fprintf(stderr, "%s needs a value\n", a.c_str()); exit(2); } return argv[++i]; };
    if (a == "--rows") rows = atol(next());
    else if (a == "--reps") reps = atol(next());
    else if (a == "--warmup") warmup = atol(next());
    else if (a == "--workspace") workspaceBytes = strtoull(next(), nullptr, 10);
    else if (a == "--lib") libPath = next();
    else { fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
  }
  if (rows <= 0 || reps <= 0 || warmup < 0) { fprintf(stderr, "--rows and --reps must be positive, --warmup at least 0\n"); return 2; }
  std::string library = loadLt(libPath);
  CHECK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));

  const long in = 4096, hidden = 4096, out = 1000;
  void *x = deviceBuffer(rows * in), *w1 = deviceBuffer(hidden * in), *b1 = deviceBuffer(hidden), *h = deviceBuffer(rows * hidden);
  void *w2 = deviceBuffer(out * hidden), *logits = deviceBuffer(rows * out);
  fillRandom<<<1024, 256>>>((unsigned short *)x, rows * in, 1);
  fillRandom<<<1024, 256>>>((unsigned short *)w1, hidden * in, 2);
  fillRandom<<<1024, 256>>>((unsigned short *)w2, out * hidden, 3);
  fillConstant<<<16, 256>>>((__nv_bfloat16 *)b1, hidden, 0.01f);
  CHECK(cudaGetLastError());

  cudaStream_t stream;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  void *workspace;
  CHECK(cudaMalloc(&workspace, workspaceBytes));
  cublasLtHandle_t handle;
  CHECK_LT(lt.create(&handle));
  cublasLtMatmulPreference_t preference;
  CHECK_LT(lt.prefCreate(&preference));
  uint64_t limit = workspaceBytes;
  CHECK_LT(lt.prefSet(preference, PREF_MAX_WORKSPACE_BYTES, &limit, sizeof limit));

  Product products[] = {
    {"layer1", rows, hidden, in, x, w1, b1, h, nullptr, nullptr, nullptr, nullptr, {}},
    {"layer2", rows, out, hidden, h, w2, nullptr, logits, nullptr, nullptr, nullptr, nullptr, {}},
  };
  for (Product &p : products) prepare(p, handle, preference);
  // layer2 reads the h that layer1 writes, as in cuda-pipe, whose layer2 mode runs after the modes that wrote h.
  run(products[0], handle, workspace, workspaceBytes, stream);
  CHECK(cudaStreamSynchronize(stream));

  cudaEvent_t start, end;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&end));
  printf("{\"program\":\"native-cublaslt-matmul\",\"device\":\"%s\",\"library\":\"%s\",\"cublasLtVersion\":%zu,\"rows\":%ld,"
         "\"workspaceBytes\":%zu,\"warmup\":%ld,\"reps\":%ld,\"products\":[",
         prop.name, library.c_str(), lt.version(), rows, workspaceBytes, warmup, reps);
  for (size_t i = 0; i < sizeof products / sizeof products[0]; i++) {
    const Product &p = products[i];
    std::vector<float> times;
    for (long r = 0; r < warmup + reps; r++) {
      CHECK(cudaEventRecord(start, stream));
      run(p, handle, workspace, workspaceBytes, stream);
      CHECK(cudaEventRecord(end, stream));
      CHECK(cudaEventSynchronize(end));
      float ms;
      CHECK(cudaEventElapsedTime(&ms, start, end));
      if (r >= warmup) times.push_back(ms);
    }
    std::sort(times.begin(), times.end());
    size_t half = times.size() / 2;
    double median = times.size() % 2 ? times[half] : (times[half - 1] + times[half]) / 2.0;
    double flop = 2.0 * p.rows * p.n * p.k;
    printf("%s{\"name\":\"%s\",\"m\":%ld,\"n\":%ld,\"k\":%ld,\"epilogue\":\"%s\",\"algorithmWorkspaceBytes\":%zu,\"waves\":%.3f,"
           "\"flop\":%.0f,\"medianMs\":%.4f,\"minMs\":%.4f,\"maxMs\":%.4f,\"tflops\":%.1f}",
           i ? "," : "", p.name, p.rows, p.n, p.k, p.bias ? "bias-relu" : "none", p.algorithm.workspaceSize, p.algorithm.wavesCount, flop,
           median, times.front(), times.back(), flop / (median * 1e-3) / 1e12);
  }
  printf("]}\n");

  for (Product &p : products) {
    CHECK_LT(lt.layoutDestroy(p.layoutA));
    CHECK_LT(lt.layoutDestroy(p.layoutB));
    CHECK_LT(lt.layoutDestroy(p.layoutD));
    CHECK_LT(lt.descDestroy(p.desc));
  }
  CHECK_LT(lt.prefDestroy(preference));
  CHECK_LT(lt.destroy(handle));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(end));
  CHECK(cudaFree(workspace));
  CHECK(cudaStreamDestroy(stream));
  for (void *p : {x, w1, b1, h, w2, logits}) CHECK(cudaFree(p));
  return 0;
}
