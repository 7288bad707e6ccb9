// The native baseline for cuda-pipe's GEMM stage (issue 17, section 3): COUNT products C = A · B of M × N × K in one
// dtype, issued round-robin over STREAMS streams, one cuBLAS handle and workspace per stream (cublasSetStream, then
// cublasSetWorkspace), cublasGemmEx with the same types as src/cuda/cublas.ts, timed with CUDA events from one start
// every stream waits on to one end after every stream joined back; the median of REPS reps after WARMUP. Prints one
// JSON line.
//
// libcublas is opened with dlopen at run time (--lib, else libcublas.so.13, then .so.12), so this builds where no
// cuBLAS is installed. Build: scripts/native/build.sh (nvcc -O2 -arch=sm_90 ... -ldl), into build/native/gemm.
//
// Usage: gemm [--dtype bf16|fp16|fp32|tf32] [--m 4096 --n 4096 --k 4096 | --size 4096] [--count 16] [--streams 4]
//             [--reps 10] [--warmup 3] [--data pattern|zeros|cuda-pipe] [--shared-b] [--graph] [--workspace BYTES] [--lib PATH]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <dlfcn.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { fprintf(stderr, "%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)
#define CHECK_BLAS(x) do { int status_ = (x); if (status_ != 0) { fprintf(stderr, "%s: cuBLAS status %d (%s)\n", #x, status_, blas.statusString(status_)); exit(1); } } while (0)

// The cuBLAS ABI this program needs, declared here because no cuBLAS headers are installed where it is built.
typedef void *cublasHandle_t;
struct Blas {
  int (*create)(cublasHandle_t *);
  int (*destroy)(cublasHandle_t);
  int (*setStream)(cublasHandle_t, cudaStream_t);
  int (*setWorkspace)(cublasHandle_t, void *, size_t);
  int (*setMathMode)(cublasHandle_t, int);
  int (*getVersion)(cublasHandle_t, int *);
  const char *(*statusString)(int);
  int (*gemmEx)(cublasHandle_t, int, int, int, int, int, const void *, const void *, int, int, const void *, int, int,
                const void *, void *, int, int, int, int);
} blas;

// cudaDataType_t and cublasComputeType_t as in src/cuda/cublas.ts.
enum { R_32F = 0, R_16F = 2, R_16BF = 14, COMPUTE_32F = 68, COMPUTE_32F_FAST_TF32 = 77, OP_N = 0, DEFAULT_MATH = 0, GEMM_DEFAULT = -1 };

static void *symbol(void *lib, const char *name, const char *path) {
  void *f = dlsym(lib, name);
  if (!f) { fprintf(stderr, "%s lacks %s\n", path, name); exit(3); }
  return f;
}

static std::string loadBlas(const char *requested) {
  const char *tries[] = {requested, "libcublas.so.13", "libcublas.so.12"};
  for (const char *path : tries) {
    if (!path) continue;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) { fprintf(stderr, "dlopen %s: %s\n", path, dlerror()); if (requested) exit(3); continue; }
    blas.create = (int (*)(cublasHandle_t *))symbol(lib, "cublasCreate_v2", path);
    blas.destroy = (int (*)(cublasHandle_t))symbol(lib, "cublasDestroy_v2", path);
    blas.setStream = (int (*)(cublasHandle_t, cudaStream_t))symbol(lib, "cublasSetStream_v2", path);
    blas.setWorkspace = (int (*)(cublasHandle_t, void *, size_t))symbol(lib, "cublasSetWorkspace_v2", path);
    blas.setMathMode = (int (*)(cublasHandle_t, int))symbol(lib, "cublasSetMathMode", path);
    blas.getVersion = (int (*)(cublasHandle_t, int *))symbol(lib, "cublasGetVersion_v2", path);
    blas.statusString = (const char *(*)(int))symbol(lib, "cublasGetStatusString", path);
    blas.gemmEx = (decltype(blas.gemmEx))symbol(lib, "cublasGemmEx", path);
    return path;
  }
  fprintf(stderr, "no libcublas could be loaded (pass --lib PATH)\n");
  exit(3);
}

// Seeded values in [-1, 1): cuda-pipe never times zeros, and zeros flatter bf16 by a few per cent.
template <typename T> __device__ T convert(float v);
template <> __device__ float convert<float>(float v) { return v; }
template <> __device__ __half convert<__half>(float v) { return __float2half(v); }
template <> __device__ __nv_bfloat16 convert<__nv_bfloat16>(float v) { return __float2bfloat16(v); }

template <typename T> __global__ void fill(T *p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned x = (unsigned)i * 2654435761u ^ seed * 0x9e3779b9u;
    x ^= x >> 15; x *= 0x2c1b3c6du; x ^= x >> 12;
    p[i] = convert<T>((x & 0xffffff) / 8388608.0f - 1.0f);
  }
}

// cuda-pipe's own seeded distribution (src/data/patterns.ts), from another generator: 16-bit floats of either sign
// with a magnitude in [0.125, 0.25) and every mantissa bit random, fp32 in [1, 2). A GEMM's power, so its clock,
// depends on the bits it multiplies: this is the like-for-like figure for a cuda-pipe config with seeded operands.
__device__ unsigned mix(size_t i, unsigned seed) {
  unsigned x = (unsigned)i * 2654435761u ^ seed * 0x9e3779b9u;
  x ^= x >> 15; x *= 0x2c1b3c6du; x ^= x >> 12; x *= 0x297a2d39u; x ^= x >> 15;
  return x;
}
__global__ void fillToolBits16(unsigned short *p, size_t n, unsigned seed, unsigned short exponent, unsigned short mantissa) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned r = mix(i, seed);
    p[i] = (unsigned short)(((r >> 16) & 0x8000) | exponent | (r & mantissa));
  }
}
__global__ void fillToolBits32(unsigned *p, size_t n, unsigned seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = (mix(i, seed) >> 9) | 0x3f800000u;
}
static void fillToolOperand(void *p, size_t elements, int dtype, unsigned seed) {
  if (dtype == R_16BF) fillToolBits16<<<1024, 256>>>((unsigned short *)p, elements, seed, 0x3e00, 0x7f);
  else if (dtype == R_16F) fillToolBits16<<<1024, 256>>>((unsigned short *)p, elements, seed, 0x3000, 0x3ff);
  else fillToolBits32<<<1024, 256>>>((unsigned *)p, elements, seed);
  CHECK(cudaGetLastError());
}

static void fillOperand(void *p, size_t elements, int dtype, unsigned seed) {
  if (dtype == R_16BF) fill<<<1024, 256>>>((__nv_bfloat16 *)p, elements, seed);
  else if (dtype == R_16F) fill<<<1024, 256>>>((__half *)p, elements, seed);
  else fill<<<1024, 256>>>((float *)p, elements, seed);
  CHECK(cudaGetLastError());
}

int main(int argc, char **argv) {
  std::string dtypeName = "bf16", data = "pattern";
  long m = 4096, n = 4096, k = 4096, count = 16, streams = 4, reps = 10, warmup = 3;
  size_t workspaceBytes = 32u << 20;
  bool sharedB = false, graph = false;
  const char *libPath = nullptr;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> const char * { if (i + 1 >= argc) { fprintf(stderr, "%s needs a value\n", a.c_str()); exit(2); } return argv[++i]; };
    if (a == "--dtype") dtypeName = next();
    else if (a == "--m") m = atol(next());
    else if (a == "--n") n = atol(next());
    else if (a == "--k") k = atol(next());
    else if (a == "--size") m = n = k = atol(next());
    else if (a == "--count") count = atol(next());
    else if (a == "--streams") streams = atol(next());
    else if (a == "--reps") reps = atol(next());
    else if (a == "--warmup") warmup = atol(next());
    else if (a == "--data") data = next();
    else if (a == "--workspace") workspaceBytes = strtoull(next(), nullptr, 10);
    else if (a == "--lib") libPath = next();
    else if (a == "--shared-b") sharedB = true;
    else if (a == "--graph") graph = true;
    else { fprintf(stderr, "unknown argument %s\n", a.c_str()); return 2; }
  }
  int dataType, computeType;
  size_t elementBytes;
  if (dtypeName == "fp32") { dataType = R_32F; computeType = COMPUTE_32F; elementBytes = 4; }
  else if (dtypeName == "tf32") { dataType = R_32F; computeType = COMPUTE_32F_FAST_TF32; elementBytes = 4; }
  else if (dtypeName == "fp16") { dataType = R_16F; computeType = COMPUTE_32F; elementBytes = 2; }
  else if (dtypeName == "bf16") { dataType = R_16BF; computeType = COMPUTE_32F; elementBytes = 2; }
  else { fprintf(stderr, "--dtype must be fp32, tf32, fp16 or bf16\n"); return 2; }
  if (m <= 0 || n <= 0 || k <= 0 || count <= 0 || streams <= 0 || reps <= 0 || warmup < 0 || (data != "pattern" && data != "zeros" && data != "cuda-pipe")) {
    fprintf(stderr, "sizes, --count, --streams and --reps must be positive, --data pattern, zeros or cuda-pipe\n");
    return 2;
  }
  std::string library = loadBlas(libPath);
  CHECK(cudaSetDevice(0));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));

  // Column-major, no transposes: A is m × k (lda m), B k × n (ldb k), C m × n (ldc m).
  std::vector<void *> as(count), bs(count), cs(count);
  for (long i = 0; i < count; i++) {
    CHECK(cudaMalloc(&as[i], m * k * elementBytes));
    if (!sharedB || i == 0) CHECK(cudaMalloc(&bs[i], k * n * elementBytes)); else bs[i] = bs[0];
    CHECK(cudaMalloc(&cs[i], m * n * elementBytes));
    if (data == "pattern") {
      fillOperand(as[i], m * k, dataType, 2 * i + 1);
      if (!sharedB || i == 0) fillOperand(bs[i], k * n, dataType, 2 * i + 2);
    } else if (data == "cuda-pipe") {
      fillToolOperand(as[i], m * k, dataType, 2 * i + 1);
      if (!sharedB || i == 0) fillToolOperand(bs[i], k * n, dataType, 2 * i + 2);
    } else {
      CHECK(cudaMemset(as[i], 0, m * k * elementBytes));
      if (!sharedB || i == 0) CHECK(cudaMemset(bs[i], 0, k * n * elementBytes));
    }
    CHECK(cudaMemset(cs[i], 0, m * n * elementBytes));
  }
  std::vector<cudaStream_t> ss(streams);
  std::vector<cublasHandle_t> handles(streams);
  std::vector<void *> workspaces(streams);
  std::vector<cudaEvent_t> joins(streams);
  for (long s = 0; s < streams; s++) {
    CHECK(cudaStreamCreateWithFlags(&ss[s], cudaStreamNonBlocking));
    CHECK(cudaMalloc(&workspaces[s], workspaceBytes));
    CHECK(cudaEventCreateWithFlags(&joins[s], cudaEventDisableTiming));
    CHECK_BLAS(blas.create(&handles[s]));
    // The stream first: cublasSetStream puts the handle back on cuBLAS's own workspace pool.
    CHECK_BLAS(blas.setStream(handles[s], ss[s]));
    CHECK_BLAS(blas.setWorkspace(handles[s], workspaces[s], workspaceBytes));
    CHECK_BLAS(blas.setMathMode(handles[s], DEFAULT_MATH));
  }
  int version = 0;
  CHECK_BLAS(blas.getVersion(handles[0], &version));
  CHECK(cudaDeviceSynchronize());

  const float alpha = 1.0f, beta = 0.0f;
  cudaEvent_t fork, start, end;
  CHECK(cudaEventCreateWithFlags(&fork, cudaEventDisableTiming));
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&end));
  // The body of a rep on stream 0's timeline: every stream waits for the fork, the products go round-robin, and stream
  // 0 waits for every other stream's join. Issued directly, or captured once and replayed as one graph.
  auto body = [&]() {
    CHECK(cudaEventRecord(fork, ss[0]));
    for (long s = 1; s < streams; s++) CHECK(cudaStreamWaitEvent(ss[s], fork, 0));
    for (long i = 0; i < count; i++) {
      long s = i % streams;
      CHECK_BLAS(blas.gemmEx(handles[s], OP_N, OP_N, (int)m, (int)n, (int)k, &alpha, as[i], dataType, (int)m, bs[i], dataType,
                             (int)k, &beta, cs[i], dataType, (int)m, computeType, GEMM_DEFAULT));
    }
    for (long s = 1; s < streams; s++) { CHECK(cudaEventRecord(joins[s], ss[s])); CHECK(cudaStreamWaitEvent(ss[0], joins[s], 0)); }
  };
  cudaGraphExec_t exec = nullptr;
  if (graph) {
    body();  // cuBLAS sets a handle up on its first call; that must not happen inside the capture.
    CHECK(cudaDeviceSynchronize());
    cudaGraph_t g;
    CHECK(cudaStreamBeginCapture(ss[0], cudaStreamCaptureModeGlobal));
    body();
    CHECK(cudaStreamEndCapture(ss[0], &g));
    CHECK(cudaGraphInstantiate(&exec, g, 0));
    CHECK(cudaGraphDestroy(g));
  }
  std::vector<float> times;
  for (long r = 0; r < warmup + reps; r++) {
    CHECK(cudaEventRecord(start, ss[0]));
    if (graph) CHECK(cudaGraphLaunch(exec, ss[0])); else body();
    CHECK(cudaEventRecord(end, ss[0]));
    CHECK(cudaEventSynchronize(end));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, start, end));
    if (r >= warmup) times.push_back(ms);
  }
  std::vector<float> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  size_t half = sorted.size() / 2;
  double median = sorted.size() % 2 ? sorted[half] : (sorted[half - 1] + sorted[half]) / 2.0;
  double tflops = 2.0 * m * n * k * count / (median * 1e-3) / 1e12;
  printf("{\"program\":\"native-cublas-gemm\",\"device\":\"%s\",\"library\":\"%s\",\"cublasVersion\":%d,\"dtype\":\"%s\","
         "\"m\":%ld,\"n\":%ld,\"k\":%ld,\"count\":%ld,\"streams\":%ld,\"issue\":\"%s\",\"data\":\"%s\",\"sharedB\":%s,"
         "\"workspaceBytes\":%zu,\"warmup\":%ld,\"reps\":%ld,\"medianMs\":%.4f,\"minMs\":%.4f,\"maxMs\":%.4f,\"tflops\":%.1f,\"samplesMs\":[",
         prop.name, library.c_str(), version, dtypeName.c_str(), m, n, k, count, streams, graph ? "graph" : "stream", data.c_str(),
         sharedB ? "true" : "false", workspaceBytes, warmup, reps, median, sorted.front(), sorted.back(), tflops);
  for (size_t i = 0; i < times.size(); i++) printf("%s%.4f", i ? "," : "", times[i]);
  printf("]}\n");

  if (exec) CHECK(cudaGraphExecDestroy(exec));
  for (long s = 0; s < streams; s++) {
    CHECK_BLAS(blas.destroy(handles[s]));
    CHECK(cudaFree(workspaces[s]));
    CHECK(cudaEventDestroy(joins[s]));
    CHECK(cudaStreamDestroy(ss[s]));
  }
  for (long i = 0; i < count; i++) {
    CHECK(cudaFree(as[i]));
    if (!sharedB || i == 0) CHECK(cudaFree(bs[i]));
    CHECK(cudaFree(cs[i]));
  }
  return 0;
}
