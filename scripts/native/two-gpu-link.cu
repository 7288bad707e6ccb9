// Each GPU's PCIe link alone and both at once, from one process: H2D and D2H of 256 MiB at once per GPU, in 8 MiB
// copies over two streams per direction (as cuda-pipe's link mode), pinned host memory of each GPU's own or one
// shared allocation. A check of what `cuda-pipe run --devices 0,1` reports as the host's limit, without cuda-pipe.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <chrono>
#include <algorithm>
#include <string>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1); } } while (0)

const size_t BYTES = 256ull << 20, PIECE = 8ull << 20;

struct Gpu { int id; char *hin, *hout, *din, *dout; cudaStream_t s[4]; cudaEvent_t start, end; };

void issue(Gpu &g) {
  CHECK(cudaSetDevice(g.id));
  CHECK(cudaEventRecord(g.start, g.s[0]));
  for (int i = 1; i < 4; i++) CHECK(cudaStreamWaitEvent(g.s[i], g.start, 0));
  for (size_t off = 0, k = 0; off < BYTES; off += PIECE, k++) {
    CHECK(cudaMemcpyAsync(g.din + off, g.hin + off, PIECE, cudaMemcpyHostToDevice, g.s[k % 2]));
    CHECK(cudaMemcpyAsync(g.hout + off, g.dout + off, PIECE, cudaMemcpyDeviceToHost, g.s[2 + k % 2]));
  }
  for (int i = 1; i < 4; i++) { cudaEvent_t j; CHECK(cudaEventCreateWithFlags(&j, cudaEventDisableTiming)); CHECK(cudaEventRecord(j, g.s[i])); CHECK(cudaStreamWaitEvent(g.s[0], j, 0)); CHECK(cudaEventDestroy(j)); }
  CHECK(cudaEventRecord(g.end, g.s[0]));
}

float elapsed(Gpu &g) { float ms; CHECK(cudaEventSynchronize(g.end)); CHECK(cudaEventElapsedTime(&ms, g.start, g.end)); return ms; }

int main(int argc, char **argv) {
  bool shared = argc > 1 && std::string(argv[1]) == "shared";
  Gpu gpus[2];
  char *sharedIn = nullptr, *sharedOut = nullptr;
  if (shared) { CHECK(cudaHostAlloc(&sharedIn, 2 * BYTES, cudaHostAllocPortable)); CHECK(cudaHostAlloc(&sharedOut, 2 * BYTES, cudaHostAllocPortable)); }
  for (int d = 0; d < 2; d++) {
    Gpu &g = gpus[d]; g.id = d; CHECK(cudaSetDevice(d));
    if (shared) { g.hin = sharedIn + d * BYTES; g.hout = sharedOut + d * BYTES; }
    else { CHECK(cudaHostAlloc(&g.hin, BYTES, cudaHostAllocPortable)); CHECK(cudaHostAlloc(&g.hout, BYTES, cudaHostAllocPortable)); }
    for (size_t i = 0; i < BYTES; i += 4096) { g.hin[i] = 1; g.hout[i] = 2; }
    CHECK(cudaMalloc(&g.din, BYTES)); CHECK(cudaMalloc(&g.dout, BYTES));
    for (auto &s : g.s) CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaEventCreate(&g.start)); CHECK(cudaEventCreate(&g.end));
  }
  const int reps = 30;
  for (int which = 0; which < 3; which++) {  // 0: GPU 0 alone, 1: GPU 1 alone, 2: both
    std::vector<float> t0, t1, wall;
    for (int r = 0; r < reps + 3; r++) {
      auto w0 = std::chrono::steady_clock::now();
      if (which != 1) issue(gpus[0]);
      if (which != 0) issue(gpus[1]);
      float a = which != 1 ? elapsed(gpus[0]) : 0, b = which != 0 ? elapsed(gpus[1]) : 0;
      auto w1 = std::chrono::steady_clock::now();
      if (r < 3) continue;
      t0.push_back(a); t1.push_back(b); wall.push_back(std::chrono::duration<float, std::milli>(w1 - w0).count());
    }
    auto med = [](std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
    const char *name[] = {"GPU 0 alone", "GPU 1 alone", "both at once"};
    double gb = 2.0 * BYTES / 1e9;
    printf("%s (%s host memory): GPU0 %.3f ms (%.1f GB/s)  GPU1 %.3f ms (%.1f GB/s)  wall %.3f ms, aggregate %.1f GB/s\n", name[which], shared ? "shared" : "own",
      med(t0), which != 1 ? gb / med(t0) * 1e3 : 0.0, med(t1), which != 0 ? gb / med(t1) * 1e3 : 0.0, med(wall), gb * (which == 2 ? 2 : 1) / med(wall) * 1e3);
  }
  return 0;
}
