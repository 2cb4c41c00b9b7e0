// Runs the sm_90 test kernels that @rocke/ir emitted (device/ptx/*.ptx) on the GPU through the CUDA
// driver API and checks them against CPU results. Exit status 0 only when every check passes.
//   g++ -O2 -std=c++17 host.cpp -I/usr/local/cuda/include -L/usr/local/cuda/lib64/stubs -lcuda -o host && ./host ptx
#include <cuda.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

static void check(CUresult r, const char* what) {
  if (r != CUDA_SUCCESS) {
    const char* msg = nullptr;
    cuGetErrorString(r, &msg);
    std::fprintf(stderr, "%s failed: %s\n", what, msg ? msg : "unknown error");
    std::exit(2);
  }
}

static std::string readFile(const std::string& path) {
  std::ifstream f(path);
  if (!f) { std::fprintf(stderr, "cannot read %s\n", path.c_str()); std::exit(2); }
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

static CUfunction load(const std::string& dir, const char* name, CUmodule* mod) {
  std::string ptx = readFile(dir + "/" + name + ".ptx");
  char log[8192] = {0};
  CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void* vals[] = {log, (void*)(uintptr_t)sizeof(log)};
  CUresult r = cuModuleLoadDataEx(mod, ptx.c_str(), 2, opts, vals);
  if (r != CUDA_SUCCESS) { std::fprintf(stderr, "JIT of %s failed:\n%s\n", name, log); std::exit(2); }
  CUfunction f;
  check(cuModuleGetFunction(&f, *mod, name), "cuModuleGetFunction");
  return f;
}

template <typename T> static CUdeviceptr upload(const std::vector<T>& v) {
  CUdeviceptr p;
  check(cuMemAlloc(&p, v.size() * sizeof(T)), "cuMemAlloc");
  check(cuMemcpyHtoD(p, v.data(), v.size() * sizeof(T)), "cuMemcpyHtoD");
  return p;
}

template <typename T> static std::vector<T> download(CUdeviceptr p, size_t n) {
  std::vector<T> v(n);
  check(cuMemcpyDtoH(v.data(), p, n * sizeof(T)), "cuMemcpyDtoH");
  return v;
}

static int passed = 0, failed = 0;
static void report(const char* name, size_t mismatches, size_t total) {
  if (mismatches == 0) { passed++; std::printf("ok    %s (%zu values)\n", name, total); }
  else { failed++; std::printf("FAIL  %s: %zu of %zu values wrong\n", name, mismatches, total); }
}

// Exact 16-bit encodings for the small integers used here.
static uint16_t toBf16(float x) { uint32_t u; std::memcpy(&u, &x, 4); return (uint16_t)(u >> 16); }
static uint16_t toHalf(float x) {
  if (x == 0) return 0;
  uint16_t sign = x < 0 ? 0x8000 : 0;
  int e; float m = std::frexp(std::fabs(x), &e);  // |x| = m * 2^e, m in [0.5, 1)
  return (uint16_t)(sign | ((e - 1 + 15) << 10) | ((uint16_t)std::lround((m * 2 - 1) * 1024) & 0x3ff));
}

static void axpy(const std::string& dir) {
  CUmodule mod; CUfunction f = load(dir, "axpy", &mod);
  const int n = 1000, alloc = 1024 + 64;
  std::vector<float> x(alloc), y(alloc);
  for (int i = 0; i < alloc; i++) { x[i] = (float)(i % 17) - 8; y[i] = (float)(i % 5) + 0.5f; }
  CUdeviceptr dx = upload(x), dy = upload(y);
  float a = 3;
  int nn = n;
  void* args[] = {&dx, &dy, &a, &nn};
  check(cuLaunchKernel(f, 5, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), "launch axpy");  // 1280 threads > n
  check(cuCtxSynchronize(), "sync");
  auto out = download<float>(dy, alloc);
  size_t bad = 0;
  for (int i = 0; i < alloc; i++) {
    float want = i < n ? a * x[i] + y[i] : y[i];  // past n: the guarded store must not write
    if (out[i] != want) bad++;
  }
  report("axpy: y = a*x + y, nothing written past n", bad, alloc);
  cuMemFree(dx); cuMemFree(dy); cuModuleUnload(mod);
}

static void ldsReverse(const std::string& dir) {
  CUmodule mod; CUfunction f = load(dir, "lds_reverse", &mod);
  const int n = 500, alloc = 512;
  std::vector<float> x(alloc), y(alloc, -7.0f);
  for (int i = 0; i < alloc; i++) x[i] = (float)i + 1;
  CUdeviceptr dx = upload(x), dy = upload(y);
  int nn = n;
  void* args[] = {&dx, &dy, &nn};
  check(cuLaunchKernel(f, 2, 1, 1, 256, 1, 1, 0, nullptr, args, nullptr), "launch lds_reverse");
  check(cuCtxSynchronize(), "sync");
  auto out = download<float>(dy, alloc);
  size_t bad = 0;
  for (int g = 0; g < alloc; g++) {
    int blk = g / 256, i = g % 256, src = blk * 256 + 255 - i;
    float want = g >= n ? -7.0f : (src < n ? x[src] : 0.0f);  // out-of-range reads are zero
    if (out[g] != want) bad++;
  }
  report("lds_reverse: LDS + barrier, zero for out-of-range reads", bad, alloc);
  cuMemFree(dx); cuMemFree(dy); cuModuleUnload(mod);
}

static void mma(const std::string& dir, const char* name, bool bf16) {
  CUmodule mod; CUfunction f = load(dir, name, &mod);
  const int M = 16, N = 8, K = 16;
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> d(-4, 4);
  std::vector<float> A(M * K), B(K * N), C(M * N);
  for (auto& v : A) v = (float)d(rng);
  for (auto& v : B) v = (float)d(rng);
  for (auto& v : C) v = (float)d(rng);
  std::vector<uint16_t> a16(M * K), b16(K * N);
  for (int i = 0; i < M * K; i++) a16[i] = bf16 ? toBf16(A[i]) : toHalf(A[i]);
  for (int i = 0; i < K * N; i++) b16[i] = bf16 ? toBf16(B[i]) : toHalf(B[i]);
  CUdeviceptr da = upload(a16), db = upload(b16), dc = upload(C), dd = upload(std::vector<float>(M * N, NAN));
  void* args[] = {&da, &db, &dc, &dd};
  check(cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, args, nullptr), name);
  check(cuCtxSynchronize(), "sync");
  auto D = download<float>(dd, M * N);
  size_t bad = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float want = C[i * N + j];
      for (int k = 0; k < K; k++) want += A[i * K + k] * B[k * N + j];
      if (D[i * N + j] != want) bad++;
    }
  std::string label = std::string(name) + ": D = A*B + C through the atom's lane layout";
  report(label.c_str(), bad, M * N);
  cuMemFree(da); cuMemFree(db); cuMemFree(dc); cuMemFree(dd); cuModuleUnload(mod);
}

// wgmma GEMM (test-kernels.ts wgmmaGemmKernel): one warpgroup, D (64xN) = A (64xK) * Bt (NxK)^T, all row-major.
static void wgmma(const std::string& dir, int N, int K, bool bf16) {
  char name[64];
  std::snprintf(name, sizeof name, "wgmma_m64n%dk%d_%s", N, K, bf16 ? "bf16" : "f16");
  CUmodule mod; CUfunction f = load(dir, name, &mod);
  const int M = 64;
  std::mt19937 rng(N * 1000 + K);
  std::uniform_int_distribution<int> d(-4, 4);
  std::vector<float> A(M * K), Bt(N * K);
  for (auto& v : A) v = (float)d(rng);
  for (auto& v : Bt) v = (float)d(rng);
  std::vector<uint16_t> a16(M * K), b16(N * K);
  for (int i = 0; i < M * K; i++) a16[i] = bf16 ? toBf16(A[i]) : toHalf(A[i]);
  for (int i = 0; i < N * K; i++) b16[i] = bf16 ? toBf16(Bt[i]) : toHalf(Bt[i]);
  CUdeviceptr da = upload(a16), db = upload(b16), dd = upload(std::vector<float>(M * N, NAN));
  void* args[] = {&da, &db, &dd};
  check(cuLaunchKernel(f, 1, 1, 1, 128, 1, 1, 0, nullptr, args, nullptr), name);
  check(cuCtxSynchronize(), "sync");
  auto D = download<float>(dd, M * N);
  size_t bad = 0;
  for (int i = 0; i < M; i++)
    for (int j = 0; j < N; j++) {
      float want = 0;
      for (int k = 0; k < K; k++) want += A[i * K + k] * Bt[j * K + k];
      if (D[i * N + j] != want) bad++;
    }
  std::string label = std::string(name) + ": D = A*Bt^T through shared-memory descriptors and the accumulator layout";
  report(label.c_str(), bad, M * N);
  cuMemFree(da); cuMemFree(db); cuMemFree(dd); cuModuleUnload(mod);
}

int main(int argc, char** argv) {
  std::string dir = argc > 1 ? argv[1] : "ptx";
  check(cuInit(0), "cuInit");
  CUdevice dev; check(cuDeviceGet(&dev, 0), "cuDeviceGet");
  char devName[256]; cuDeviceGetName(devName, sizeof devName, dev);
  CUcontext ctx; check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  std::printf("device: %s\n", devName);
  axpy(dir);
  ldsReverse(dir);
  mma(dir, "mma_16x8x16_f16", false);
  mma(dir, "mma_16x8x16_bf16", true);
  wgmma(dir, 128, 32, true);
  wgmma(dir, 112, 32, false);
  wgmma(dir, 256, 32, true);
  std::printf("%d passed, %d failed\n", passed, failed);
  cuDevicePrimaryCtxRelease(dev);
  return failed == 0 ? 0 : 1;
}
