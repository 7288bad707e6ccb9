// The native baseline for cuda-pipe's collective stage (issue 19): one process drives every local GPU (or the first
// N, -g N) through one communicator from ncclCommInitAll, and times a float32 sum all-reduce, out of place, or in
// place with --in-place (as cuda-pipe and DDP reduce a bucket: send and receive buffers the same), at each size: WARMUP calls, then ITERS calls between CUDA events on every GPU's stream, each call one ncclGroupStart/End
// over the GPUs (one process driving several GPUs must group them). Per size it prints the bytes, the time per call
// (the slowest GPU's events over ITERS), and nccl-tests' algorithm and bus bandwidth (doc/PERFORMANCE.md there:
// algbw = S / t, busbw = algbw × 2(n−1)/n), and checks the reduced values (rank r sends r + 1 everywhere).
//
// NVLink multicast stays off: NCCL_NVLS_ENABLE=0 is set before NCCL loads unless the caller set it (the GPU host's
// notes forbid multicast objects). On one GPU the communicator has one rank: the all-reduce is a local copy and its
// bus bandwidth is 0 by the formula.
//
// libnccl is opened with dlopen at run time (--lib, else libnccl.so.2, then libnccl.so), like gemm.cu's cuBLAS, so
// this builds where no NCCL is installed. Where an nccl.h is found (scripts/native/build.sh looks in the usual places
// and in PyTorch's nvidia/nccl/include) the function types come from it; otherwise from the declarations below, which
// copy NCCL's stable ABI (nccl.h since 2.0: the enums' values, a 128-byte unique id, opaque communicators).
//
// Usage: allreduce [-g GPUS] [-b MIN] [-e MAX] [-f FACTOR | --sizes S1,S2,...] [-w WARMUP] [-n ITERS] [--lib PATH]
//                  [--in-place]
//   sizes in bytes with an optional K, M or G (binary): -b 1M -e 1G -f 2 by default (1 MiB to 1 GiB, doubling).
// Exit codes as cuda-pipe's: 2 usage, 3 no GPU or no libnccl, 4 a CUDA or NCCL failure, 1 a wrong reduced value.
#include <dlfcn.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#if __has_include(<nccl.h>)
#include <nccl.h>
#define HAVE_NCCL_H 1
#else
#define HAVE_NCCL_H 0
typedef struct ncclComm *ncclComm_t;
// A fixed underlying type, so that every code NCCL returns is a valid value (nccl.h's enums are int-sized).
typedef enum : int { ncclSuccess = 0 } ncclResult_t;
typedef enum : int { ncclFloat32 = 7 } ncclDataType_t;
typedef enum : int { ncclSum = 0 } ncclRedOp_t;
extern "C" {
ncclResult_t ncclGetVersion(int *version);
ncclResult_t ncclCommInitAll(ncclComm_t *comm, int ndev, const int *devlist);
ncclResult_t ncclCommDestroy(ncclComm_t comm);
const char *ncclGetErrorString(ncclResult_t result);
ncclResult_t ncclAllReduce(const void *sendbuff, void *recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream);
ncclResult_t ncclGroupStart();
ncclResult_t ncclGroupEnd();
}
#endif

#define CUDA_CHECK(x)                                                                              \
  do {                                                                                             \
    cudaError_t e_ = (x);                                                                          \
    if (e_ != cudaSuccess) {                                                                       \
      fprintf(stderr, "%s failed: %s (%s:%d)\n", #x, cudaGetErrorString(e_), __FILE__, __LINE__); \
      exit(4);                                                                                     \
    }                                                                                              \
  } while (0)

// The NCCL functions this program calls, typed by the header's (or the fallback's) declarations.
struct Nccl {
  decltype(&ncclGetVersion) getVersion;
  decltype(&ncclCommInitAll) commInitAll;
  decltype(&ncclCommDestroy) commDestroy;
  decltype(&ncclGetErrorString) getErrorString;
  decltype(&ncclAllReduce) allReduce;
  decltype(&ncclGroupStart) groupStart;
  decltype(&ncclGroupEnd) groupEnd;
};
static Nccl nccl;

#define NCCL_CHECK(x)                                                                                           \
  do {                                                                                                          \
    ncclResult_t r_ = (x);                                                                                      \
    if (r_ != ncclSuccess) {                                                                                    \
      fprintf(stderr, "%s failed: NCCL error %d: %s (%s:%d)\n", #x, (int)r_, nccl.getErrorString(r_), __FILE__, __LINE__); \
      exit(4);                                                                                                  \
    }                                                                                                           \
  } while (0)

template <typename F>
static void bind(void *lib, const char *name, F &slot) {
  void *f = dlsym(lib, name);
  if (!f) {
    fprintf(stderr, "libnccl has no %s: %s\n", name, dlerror());
    exit(3);
  }
  slot = reinterpret_cast<F>(f);
}

static std::string loadNccl(const char *requested) {
  std::vector<const char *> paths;
  if (requested) paths.push_back(requested);
  else paths = {"libnccl.so.2", "libnccl.so"};
  for (const char *path : paths) {
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      fprintf(stderr, "dlopen %s: %s\n", path, dlerror());
      continue;
    }
    bind(lib, "ncclGetVersion", nccl.getVersion);
    bind(lib, "ncclCommInitAll", nccl.commInitAll);
    bind(lib, "ncclCommDestroy", nccl.commDestroy);
    bind(lib, "ncclGetErrorString", nccl.getErrorString);
    bind(lib, "ncclAllReduce", nccl.allReduce);
    bind(lib, "ncclGroupStart", nccl.groupStart);
    bind(lib, "ncclGroupEnd", nccl.groupEnd);
    return path;
  }
  fprintf(stderr, "no libnccl could be loaded (pass --lib PATH, e.g. the one under PyTorch's nvidia/nccl/lib)\n");
  exit(3);
}

// "64M" → 67108864; 0 for anything that is not a positive size.
static size_t parseSize(const std::string &text) {
  char *end = nullptr;
  unsigned long long value = strtoull(text.c_str(), &end, 10);
  std::string unit = end ? end : "";
  size_t scale = unit == "" ? 1 : unit == "K" ? 1ull << 10 : unit == "M" ? 1ull << 20 : unit == "G" ? 1ull << 30 : 0;
  if (end == text.c_str() || scale == 0) return 0;
  return value * scale;
}

__global__ void fill(float *p, size_t n, float value) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = value;
}

struct Gpu {
  int device;
  ncclComm_t comm;
  cudaStream_t stream;
  cudaEvent_t start, end;
  float *send, *recv;
};

static void usage() {
  fprintf(stderr, "usage: allreduce [-g GPUS] [-b MIN] [-e MAX] [-f FACTOR | --sizes S1,S2,...] [-w WARMUP] [-n ITERS] [--lib PATH] [--in-place]\n");
  exit(2);
}

int main(int argc, char **argv) {
  int gpusAsked = 0, warmup = 5, iters = 20;
  size_t minBytes = 1ull << 20, maxBytes = 1ull << 30;
  double factor = 2;
  std::vector<size_t> sizes;
  std::string libPath;
  bool inPlace = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) usage();
      return argv[++i];
    };
    if (a == "-g") gpusAsked = atoi(next().c_str());
    else if (a == "-b") minBytes = parseSize(next());
    else if (a == "-e") maxBytes = parseSize(next());
    else if (a == "-f") factor = atof(next().c_str());
    else if (a == "-w") warmup = atoi(next().c_str());
    else if (a == "-n") iters = atoi(next().c_str());
    else if (a == "--lib") libPath = next();
    else if (a == "--in-place") inPlace = true;
    else if (a == "--sizes") {
      std::string list = next();
      for (size_t from = 0; from <= list.size();) {
        size_t comma = list.find(',', from);
        if (comma == std::string::npos) comma = list.size();
        size_t bytes = parseSize(list.substr(from, comma - from));
        if (bytes == 0) usage();
        sizes.push_back(bytes);
        from = comma + 1;
      }
    } else usage();
  }
  if (sizes.empty()) {
    if (minBytes == 0 || maxBytes < minBytes || factor <= 1) usage();
    for (double s = minBytes; s <= maxBytes; s *= factor) sizes.push_back((size_t)s);
  }
  if (gpusAsked < 0 || warmup < 0 || iters < 1) usage();
  // Whole float32 elements; a size under one element is refused.
  for (size_t &s : sizes) {
    s -= s % sizeof(float);
    if (s == 0) usage();
  }

  // Before NCCL loads: it reads the variable when its first communicator is made.
  setenv("NCCL_NVLS_ENABLE", "0", 0);
  int visible = 0;
  cudaError_t found = cudaGetDeviceCount(&visible);
  if (found != cudaSuccess || visible == 0) {
    fprintf(stderr, "no CUDA device (%s)\n", found != cudaSuccess ? cudaGetErrorString(found) : "none visible");
    return 3;
  }
  int n = gpusAsked ? gpusAsked : visible;
  if (n > visible) {
    fprintf(stderr, "-g %d: only %d GPUs are visible\n", n, visible);
    return 2;
  }
  std::string lib = loadNccl(libPath.empty() ? nullptr : libPath.c_str());
  int version = 0;
  NCCL_CHECK(nccl.getVersion(&version));

  std::vector<int> devices(n);
  for (int d = 0; d < n; d++) devices[d] = d;
  std::vector<ncclComm_t> comms(n);
  NCCL_CHECK(nccl.commInitAll(comms.data(), n, devices.data()));
  size_t largest = *std::max_element(sizes.begin(), sizes.end());
  std::vector<Gpu> gpus(n);
  for (int d = 0; d < n; d++) {
    Gpu &g = gpus[d];
    g.device = d;
    g.comm = comms[d];
    CUDA_CHECK(cudaSetDevice(d));
    CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreate(&g.start));
    CUDA_CHECK(cudaEventCreate(&g.end));
    CUDA_CHECK(cudaMalloc(&g.send, largest));
    if (inPlace) g.recv = g.send;
    else CUDA_CHECK(cudaMalloc(&g.recv, largest));
    fill<<<1024, 256, 0, g.stream>>>(g.send, largest / sizeof(float), (float)(d + 1));
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(g.stream));
  }

  const char *nvls = getenv("NCCL_NVLS_ENABLE");
  // NCCL 2.9 and later code their version as major × 10000 + minor × 100 + patch.
  printf("# NCCL %d.%d.%d (%s), %d rank%s in one process (ncclCommInitAll), NCCL_NVLS_ENABLE=%s, float32 sum, %s\n", version / 10000,
         version % 10000 / 100, version % 100, lib.c_str(), n, n == 1 ? "" : "s", nvls ? nvls : "", inPlace ? "in place" : "out of place");
  printf("# warm-up %d, then %d calls timed by CUDA events on each GPU's stream; time = the slowest GPU / calls\n", warmup, iters);
  printf("# %12s %12s %12s %12s %12s %6s\n", "bytes", "count", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "check");
  const double busFactor = 2.0 * (n - 1) / n;
  const float expected = n * (n + 1) / 2.0f;
  int wrong = 0;
  auto allReduce = [&](size_t count) {
    NCCL_CHECK(nccl.groupStart());
    for (Gpu &g : gpus) NCCL_CHECK(nccl.allReduce(g.send, g.recv, count, ncclFloat32, ncclSum, g.comm, g.stream));
    NCCL_CHECK(nccl.groupEnd());
  };
  for (size_t bytes : sizes) {
    size_t count = bytes / sizeof(float);
    if (!inPlace)
      for (Gpu &g : gpus) {
        CUDA_CHECK(cudaSetDevice(g.device));
        CUDA_CHECK(cudaMemsetAsync(g.recv, 0, bytes, g.stream));
      }
    for (int w = 0; w < warmup; w++) allReduce(count);
    for (Gpu &g : gpus) {
      CUDA_CHECK(cudaSetDevice(g.device));
      CUDA_CHECK(cudaEventRecord(g.start, g.stream));
    }
    for (int it = 0; it < iters; it++) allReduce(count);
    float slowest = 0;
    bool ok = true;
    for (Gpu &g : gpus) {
      CUDA_CHECK(cudaSetDevice(g.device));
      CUDA_CHECK(cudaEventRecord(g.end, g.stream));
      CUDA_CHECK(cudaEventSynchronize(g.end));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, g.start, g.end));
      slowest = std::max(slowest, ms);
    }
    // In place, every call sums the sums: the check fills the inputs again and reduces them once more, untimed.
    if (inPlace) {
      for (Gpu &g : gpus) {
        CUDA_CHECK(cudaSetDevice(g.device));
        fill<<<1024, 256, 0, g.stream>>>(g.send, count, (float)(g.device + 1));
        CUDA_CHECK(cudaGetLastError());
      }
      allReduce(count);
    }
    for (Gpu &g : gpus) {
      CUDA_CHECK(cudaSetDevice(g.device));
      CUDA_CHECK(cudaStreamSynchronize(g.stream));
      float first = 0, last = 0;
      CUDA_CHECK(cudaMemcpy(&first, g.recv, sizeof(float), cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(&last, g.recv + count - 1, sizeof(float), cudaMemcpyDeviceToHost));
      ok = ok && first == expected && last == expected;
    }
    double seconds = slowest / 1e3 / iters;
    double algbw = bytes / seconds / 1e9;
    printf("  %12zu %12zu %12.2f %12.2f %12.2f %6s\n", bytes, count, seconds * 1e6, algbw, algbw * busFactor, ok ? "ok" : "WRONG");
    if (!ok) wrong++;
  }
  for (Gpu &g : gpus) {
    CUDA_CHECK(cudaSetDevice(g.device));
    NCCL_CHECK(nccl.commDestroy(g.comm));
    CUDA_CHECK(cudaFree(g.send));
    if (!inPlace) CUDA_CHECK(cudaFree(g.recv));
  }
  if (wrong) fprintf(stderr, "%d sizes reduced to a wrong value (expected %g everywhere)\n", wrong, expected);
  printf("# built against %s\n", HAVE_NCCL_H ? "nccl.h" : "allreduce.cu's own NCCL declarations (no nccl.h was found at build time)");
  return wrong ? 1 : 0;
}
