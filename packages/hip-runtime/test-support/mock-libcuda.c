/*
 * A CPU stand-in for libcuda.so.1, for tests on machines without a GPU. It exports the driver
 * entry points @rocke/hip-runtime resolves, keeps "device memory" in host memory, checks what a
 * real driver checks where the addon's correctness depends on it (a current context, the
 * launch `extra` buffer protocol, the 48 KiB dynamic shared-memory limit without opt-in, JIT
 * logs), and runs the kernels of device/kernels.ll as C so results can be compared.
 * Stream capture records launches into a graph that cuGraphLaunch replays through the same
 * kernel code; like the driver, it refuses to capture the legacy default stream, and a
 * default-stream launch while a blocking stream captures invalidates that capture. Setting
 * MOCK_CUDA_FAIL_INSTANTIATE makes cuGraphInstantiateWithFlags fail (CUDA_ERROR_NOT_SUPPORTED).
 * Built with -DMOCK_NO_GRAPHS it exports no graph entry points (a driver older than CUDA 11.4).
 * Every call of interest is appended to the file named by MOCK_CUDA_LOG.
 *   cc -shared -fPIC -O1 -o libmockcuda.so mock-libcuda.c
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;

#define API __attribute__((visibility("default")))
enum { OK = 0, INVALID_VALUE = 1, NOT_INITIALIZED = 3, INVALID_DEVICE = 101, INVALID_CONTEXT = 201,
       INVALID_PTX = 218, INVALID_HANDLE = 400, ILLEGAL_STATE = 401, NOT_FOUND = 500, ILLEGAL_ADDRESS = 700,
       NOT_SUPPORTED = 801, CAPTURE_UNSUPPORTED = 900, CAPTURE_INVALIDATED = 901, CAPTURE_IMPLICIT = 906 };
enum { OPTIN_MAX = 232448, DEFAULT_DYNAMIC_MAX = 49152 };

static int initialized, contextRefs, liveAllocations;
static long launches;
static char primaryContext;
static void* current;

static void logLine(const char* format, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void logLine(const char* format, ...) {
  const char* path = getenv("MOCK_CUDA_LOG");
  if (!path) return;
  FILE* f = fopen(path, "a");
  if (!f) return;
  va_list args;
  va_start(args, format);
  vfprintf(f, format, args);
  va_end(args);
  fputc('\n', f);
  fclose(f);
}

#define NEED_CONTEXT \
  if (current != &primaryContext || contextRefs == 0) return INVALID_CONTEXT

API CUresult cuGetErrorName(CUresult r, const char** s) {
  switch (r) {
    case OK: *s = "CUDA_SUCCESS"; return OK;
    case INVALID_VALUE: *s = "CUDA_ERROR_INVALID_VALUE"; return OK;
    case NOT_INITIALIZED: *s = "CUDA_ERROR_NOT_INITIALIZED"; return OK;
    case INVALID_DEVICE: *s = "CUDA_ERROR_INVALID_DEVICE"; return OK;
    case INVALID_CONTEXT: *s = "CUDA_ERROR_INVALID_CONTEXT"; return OK;
    case INVALID_PTX: *s = "CUDA_ERROR_INVALID_PTX"; return OK;
    case INVALID_HANDLE: *s = "CUDA_ERROR_INVALID_HANDLE"; return OK;
    case NOT_FOUND: *s = "CUDA_ERROR_NOT_FOUND"; return OK;
    case ILLEGAL_ADDRESS: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; return OK;
    case CAPTURE_IMPLICIT: *s = "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT"; return OK;
    case CAPTURE_INVALIDATED: *s = "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"; return OK;
    case CAPTURE_UNSUPPORTED: *s = "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED"; return OK;
    case NOT_SUPPORTED: *s = "CUDA_ERROR_NOT_SUPPORTED"; return OK;
    case ILLEGAL_STATE: *s = "CUDA_ERROR_ILLEGAL_STATE"; return OK;
  }
  *s = NULL;
  return INVALID_VALUE;
}
API CUresult cuGetErrorString(CUresult r, const char** s) {
  switch (r) {
    case OK: *s = "no error"; return OK;
    case INVALID_VALUE: *s = "invalid argument"; return OK;
    case NOT_INITIALIZED: *s = "initialization error"; return OK;
    case INVALID_DEVICE: *s = "invalid device ordinal"; return OK;
    case INVALID_CONTEXT: *s = "invalid device context"; return OK;
    case INVALID_PTX: *s = "a PTX JIT compilation failed"; return OK;
    case INVALID_HANDLE: *s = "invalid resource handle"; return OK;
    case NOT_FOUND: *s = "named symbol not found"; return OK;
    case ILLEGAL_ADDRESS: *s = "an illegal memory access was encountered"; return OK;
    case CAPTURE_IMPLICIT: *s = "operation would make the legacy stream depend on a capturing blocking stream"; return OK;
    case CAPTURE_INVALIDATED: *s = "operation failed due to a previous error during capture"; return OK;
    case CAPTURE_UNSUPPORTED: *s = "operation not permitted when stream is capturing"; return OK;
    case NOT_SUPPORTED: *s = "operation not supported"; return OK;
    case ILLEGAL_STATE: *s = "the operation is not permitted in the current state"; return OK;
  }
  *s = NULL;
  return INVALID_VALUE;
}

API CUresult cuInit(unsigned flags) {
  if (flags != 0) return INVALID_VALUE;
  initialized = 1;
  return OK;
}
API CUresult cuDriverGetVersion(int* v) { *v = 13000; return OK; }
API CUresult cuDeviceGetCount(int* n) {
  if (!initialized) return NOT_INITIALIZED;
  *n = 1;
  return OK;
}
API CUresult cuDeviceGet(CUdevice* d, int ordinal) {
  if (!initialized) return NOT_INITIALIZED;
  if (ordinal != 0) return INVALID_DEVICE;
  *d = 0;
  return OK;
}
API CUresult cuDeviceGetName(char* name, int len, CUdevice d) {
  if (d != 0 || len <= 0) return INVALID_VALUE;
  snprintf(name, (size_t)len, "Mock CUDA device");
  return OK;
}
API CUresult cuDeviceGetAttribute(int* v, int attribute, CUdevice d) {
  if (d != 0) return INVALID_DEVICE;
  switch (attribute) {
    case 1: *v = 1024; return OK;
    case 2: case 3: *v = 1024; return OK;
    case 4: *v = 64; return OK;
    case 5: *v = 2147483647; return OK;
    case 6: case 7: *v = 65535; return OK;
    case 8: *v = DEFAULT_DYNAMIC_MAX; return OK;
    case 10: *v = 32; return OK;
    case 16: *v = 132; return OK;
    case 75: *v = 9; return OK;
    case 76: *v = 0; return OK;
    case 97: *v = OPTIN_MAX; return OK;
  }
  return INVALID_VALUE;
}
API CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice d) {
  if (d != 0) return INVALID_DEVICE;
  *bytes = (size_t)1 << 34;
  return OK;
}
API CUresult cuDevicePrimaryCtxRetain(void** ctx, CUdevice d) {
  if (d != 0) return INVALID_DEVICE;
  contextRefs++;
  *ctx = &primaryContext;
  logLine("retain refs=%d", contextRefs);
  return OK;
}
API CUresult cuDevicePrimaryCtxRelease_v2(CUdevice d) {
  if (d != 0) return INVALID_DEVICE;
  if (contextRefs == 0) return INVALID_CONTEXT;
  contextRefs--;
  logLine("release refs=%d live=%d", contextRefs, liveAllocations);
  return OK;
}
API CUresult cuCtxSetCurrent(void* ctx) {
  current = ctx;
  return OK;
}
API CUresult cuCtxSynchronize(void) {
  NEED_CONTEXT;
  return OK;
}

API CUresult cuMemAlloc_v2(CUdeviceptr* p, size_t n) {
  NEED_CONTEXT;
  if (n == 0) return INVALID_VALUE;
  void* m = calloc(1, n);
  if (!m) return INVALID_VALUE;
  liveAllocations++;
  *p = (CUdeviceptr)(uintptr_t)m;
  logLine("alloc %zu live=%d", n, liveAllocations);
  return OK;
}
API CUresult cuMemFree_v2(CUdeviceptr p) {
  NEED_CONTEXT;
  free((void*)(uintptr_t)p);
  liveAllocations--;
  logLine("free live=%d", liveAllocations);
  return OK;
}
API CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void* src, size_t n) {
  NEED_CONTEXT;
  memcpy((void*)(uintptr_t)dst, src, n);
  return OK;
}
API CUresult cuMemcpyDtoH_v2(void* dst, CUdeviceptr src, size_t n) {
  NEED_CONTEXT;
  memcpy(dst, (const void*)(uintptr_t)src, n);
  return OK;
}
API CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n) {
  NEED_CONTEXT;
  memmove((void*)(uintptr_t)dst, (const void*)(uintptr_t)src, n);
  return OK;
}
API CUresult cuMemsetD8_v2(CUdeviceptr dst, unsigned char value, size_t n) {
  NEED_CONTEXT;
  memset((void*)(uintptr_t)dst, value, n);
  return OK;
}

typedef struct { int isElf; char* text; } Module;
typedef struct { char name[64]; int maxDynamic; } Function;
static const char* const kKernels[] = {"ew", "mma_gemm", "empty", "smem_reverse"};
static const size_t kParamBytes[] = {48, 36, 0, 20};

API CUresult cuModuleLoadDataEx(void** out, const void* image, unsigned n, int* options, void** values) {
  NEED_CONTEXT;
  const unsigned char* bytes = (const unsigned char*)image;
  Module* m = calloc(1, sizeof *m);
  m->isElf = bytes[0] == 0x7f && bytes[1] == 'E' && bytes[2] == 'L' && bytes[3] == 'F';
  if (!m->isElf) {
    m->text = strdup((const char*)image);  // PTX must be NUL-terminated, as for the real JIT
    if (strstr(m->text, "not_an_instruction")) {
      for (unsigned i = 0; i + 1 < n; i++) {
        if (options[i] == 5 && options[i + 1] == 6) {
          snprintf((char*)values[i], (size_t)(uintptr_t)values[i + 1], "ptxas application ptx input, line 5; error   : Unknown symbol 'not_an_instruction'");
        }
      }
      free(m->text);
      free(m);
      return INVALID_PTX;
    }
  }
  logLine("module %s", m->isElf ? "elf" : "ptx");
  *out = m;
  return OK;
}
API CUresult cuModuleUnload(void* handle) {
  NEED_CONTEXT;
  Module* m = handle;
  free(m->text);
  free(m);
  logLine("unload");
  return OK;
}
API CUresult cuModuleGetFunction(void** out, void* handle, const char* name) {
  NEED_CONTEXT;
  Module* m = handle;
  int known = 0;
  for (size_t i = 0; i < sizeof kKernels / sizeof *kKernels; i++) known |= strcmp(name, kKernels[i]) == 0;
  if (known && !m->isElf) {
    char needle[96];
    snprintf(needle, sizeof needle, ".entry %s(", name);
    known = strstr(m->text, needle) != NULL;
  }
  if (!known) return NOT_FOUND;
  Function* f = calloc(1, sizeof *f);  // leaked like a real function handle: owned by the module
  snprintf(f->name, sizeof f->name, "%s", name);
  f->maxDynamic = DEFAULT_DYNAMIC_MAX;
  *out = f;
  return OK;
}
API CUresult cuFuncGetAttribute(int* v, int attribute, void* handle) {
  NEED_CONTEXT;
  Function* f = handle;
  switch (attribute) {
    case 0: *v = strcmp(f->name, "mma_gemm") == 0 ? 32 : 1024; return OK;
    case 1: case 2: case 3: *v = 0; return OK;
    case 4: *v = 16; return OK;
    case 8: *v = f->maxDynamic; return OK;
  }
  return INVALID_VALUE;
}
API CUresult cuFuncSetAttribute(void* handle, int attribute, int value) {
  NEED_CONTEXT;
  Function* f = handle;
  if (attribute != 8 || value < 0 || value > OPTIN_MAX) return INVALID_VALUE;
  f->maxDynamic = value;
  logLine("setattr %s max_dynamic_shared=%d", f->name, value);
  return OK;
}

static float bf16(uint16_t bits) {
  uint32_t u = (uint32_t)bits << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}
#define ARG(type, offset) (*(type*)(args + (offset)))

/* A launch as a graph holds it: the function, its shape and a copy of its argument bytes. */
typedef struct {
  Function* f;
  unsigned grid[3], block[3], shared;
  size_t size;
  unsigned char args[64];
} Node;
typedef struct { int count; Node nodes[1024]; } Graph;
typedef struct { unsigned flags; int capturing, invalidated; Graph* graph; } Stream;
static Stream* capturingStream; /* one capture at a time is all the addon makes */

static CUresult runKernel(Function* f, unsigned gx, unsigned gy, unsigned bx, unsigned shared, const unsigned char* args);

API CUresult cuLaunchKernel(void* handle, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                            unsigned shared, void* stream, void** params, void** extra) {
  NEED_CONTEXT;
  Function* f = handle;
  if (params != NULL) return INVALID_VALUE;
  const unsigned char* args = NULL;
  size_t size = 0;
  if (extra != NULL) {
    if (extra[0] != (void*)1 || extra[2] != (void*)2 || extra[4] != (void*)0) return INVALID_VALUE;
    args = extra[1];
    size = *(size_t*)extra[3];
    if ((uintptr_t)args % 8 != 0) return INVALID_VALUE;
  }
  if ((unsigned long long)bx * by * bz > 1024 || gx == 0 || gy == 0 || gz == 0) return INVALID_VALUE;
  if ((int)shared > f->maxDynamic) return INVALID_VALUE;  // above 48 KiB only after the opt-in
  size_t expected = 0;
  for (size_t i = 0; i < sizeof kKernels / sizeof *kKernels; i++) {
    if (strcmp(f->name, kKernels[i]) == 0) expected = kParamBytes[i];
  }
  if (size != expected) return INVALID_VALUE;
  char hex[2 * 64 + 1] = {0};
  if (getenv("MOCK_CUDA_LOG")) {  // formatting costs microseconds: only when someone reads the log
    for (size_t i = 0; i < size && i < 64; i++) sprintf(hex + 2 * i, "%02x", args[i]);
  }
  Stream* s = stream;
  if (s == NULL && capturingStream != NULL && capturingStream->flags == 0) {
    capturingStream->invalidated = 1; /* the legacy stream would have to wait on a capturing stream */
    return CAPTURE_IMPLICIT;
  }
  if (s != NULL && s->capturing) {
    Graph* g = s->graph;
    if (g->count == 1024 || size > sizeof g->nodes[0].args) return INVALID_VALUE;
    Node* n = &g->nodes[g->count++];
    n->f = f;
    n->grid[0] = gx, n->grid[1] = gy, n->grid[2] = gz;
    n->block[0] = bx, n->block[1] = by, n->block[2] = bz;
    n->shared = shared;
    n->size = size;
    if (size) memcpy(n->args, args, size);
    logLine("capture %s grid=%u,%u,%u size=%zu", f->name, gx, gy, gz, size);
    return OK;
  }
  logLine("launch %s grid=%u,%u,%u block=%u,%u,%u shared=%u stream=%s size=%zu args=%s", f->name, gx, gy, gz, bx, by, bz,
          shared, stream ? "yes" : "default", size, hex);
  return runKernel(f, gx, gy, bx, shared, args);
}

/* cuLaunchKernelEx as cuda.h lays out its config: logs the attributes, then launches as cuLaunchKernel. */
typedef struct {
  int id;
  char pad[4];
  union { char bytes[64]; int programmaticStreamSerializationAllowed; } value;
} LaunchAttribute;
typedef struct {
  unsigned gx, gy, gz, bx, by, bz, shared;
  void* stream;
  LaunchAttribute* attrs;
  unsigned numAttrs;
} LaunchConfig;

API CUresult cuLaunchKernelEx(const LaunchConfig* c, void* handle, void** params, void** extra) {
  if (c == NULL || (c->numAttrs > 0 && c->attrs == NULL)) return INVALID_VALUE;
  for (unsigned i = 0; i < c->numAttrs; i++) {
    if (c->attrs[i].id != 6) return INVALID_VALUE; /* only programmatic stream serialization is expected */
    logLine("launchex attr programmatic_stream_serialization=%d", c->attrs[i].value.programmaticStreamSerializationAllowed);
  }
  return cuLaunchKernel(handle, c->gx, c->gy, c->gz, c->bx, c->by, c->bz, c->shared, c->stream, params, extra);
}

static CUresult runKernel(Function* f, unsigned gx, unsigned gy, unsigned bx, unsigned shared, const unsigned char* args) {
  launches++;
  if (strcmp(f->name, "ew") == 0) {
    float* y = ARG(float*, 0);
    const float* x = ARG(const float*, 8);
    int n = ARG(int32_t, 16);
    int64_t base = ARG(int64_t, 24);
    float a = ARG(float, 32);
    int64_t* idx = ARG(int64_t*, 40);
    long threads = (long)gx * bx;
    for (long i = 0; i < n && i < threads; i++) {
      y[i] = a * x[i] + 1.0f;
      idx[i] = base + i;
    }
  } else if (strcmp(f->name, "mma_gemm") == 0) {
    const uint16_t* A = ARG(const uint16_t*, 0);
    const uint16_t* Bt = ARG(const uint16_t*, 8);
    float* D = ARG(float*, 16);
    int N = ARG(int32_t, 28), K = ARG(int32_t, 32);
    for (unsigned r = 0; r < gy * 16; r++) {
      for (unsigned c = 0; c < gx * 8; c++) {
        float sum = 0;
        for (int k = 0; k < K; k++) sum += bf16(A[r * K + k]) * bf16(Bt[c * K + k]);
        D[r * N + c] = sum;
      }
    }
  } else if (strcmp(f->name, "smem_reverse") == 0) {
    float* out = ARG(float*, 0);
    const float* in = ARG(const float*, 8);
    int count = ARG(int32_t, 16);
    if ((size_t)count * 4 > shared) return ILLEGAL_ADDRESS;
    for (int m = 0; m < count; m++) out[m] = in[count - 1 - m];
  }
  return OK;
}

typedef struct { int recorded; long at; } Event;
API CUresult cuStreamCreate(void** s, unsigned flags) {
  NEED_CONTEXT;
  if (flags > 1) return INVALID_VALUE; /* CU_STREAM_DEFAULT or CU_STREAM_NON_BLOCKING */
  Stream* stream = calloc(1, sizeof *stream);
  stream->flags = flags;
  *s = stream;
  if (flags) logLine("stream created non-blocking");
  return OK;
}
API CUresult cuStreamDestroy_v2(void* s) {
  NEED_CONTEXT;
  Stream* stream = s;
  if (stream->capturing) return ILLEGAL_STATE;
  free(stream);
  logLine("stream destroyed");
  return OK;
}

#ifndef MOCK_NO_GRAPHS
API CUresult cuStreamBeginCapture_v2(void* stream, int mode) {
  NEED_CONTEXT;
  Stream* s = stream;
  if (s == NULL) return CAPTURE_UNSUPPORTED; /* the legacy stream cannot be captured */
  if (mode < 0 || mode > 2) return INVALID_VALUE;
  if (s->capturing || capturingStream) return ILLEGAL_STATE;
  s->capturing = 1;
  s->invalidated = 0;
  s->graph = calloc(1, sizeof(Graph));
  capturingStream = s;
  logLine("begin capture mode=%d", mode);
  return OK;
}
API CUresult cuStreamEndCapture(void* stream, void** graph) {
  NEED_CONTEXT;
  Stream* s = stream;
  if (s == NULL || !s->capturing) return ILLEGAL_STATE;
  s->capturing = 0;
  capturingStream = NULL;
  logLine("end capture nodes=%d%s", s->graph->count, s->invalidated ? " invalidated" : "");
  if (s->invalidated) {
    free(s->graph);
    s->graph = NULL;
    *graph = NULL;
    return CAPTURE_INVALIDATED;
  }
  *graph = s->graph;
  s->graph = NULL;
  return OK;
}
API CUresult cuGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long flags) {
  NEED_CONTEXT;
  if (graph == NULL || flags != 0) return INVALID_VALUE;
  if (getenv("MOCK_CUDA_FAIL_INSTANTIATE")) return NOT_SUPPORTED;
  Graph* copy = malloc(sizeof(Graph)); /* an executable graph does not depend on its graph */
  memcpy(copy, graph, sizeof(Graph));
  *exec = copy;
  logLine("instantiate nodes=%d", copy->count);
  return OK;
}
API CUresult cuGraphLaunch(void* exec, void* stream) {
  NEED_CONTEXT;
  Graph* g = exec;
  if (g == NULL) return INVALID_VALUE;
  if (capturingStream != NULL) return CAPTURE_UNSUPPORTED;
  logLine("graph launch nodes=%d stream=%s", g->count, stream ? "yes" : "default");
  for (int i = 0; i < g->count; i++) {
    Node* n = &g->nodes[i];
    CUresult r = runKernel(n->f, n->grid[0], n->grid[1], n->block[0], n->shared, n->args);
    if (r != OK) return r;
  }
  return OK;
}
API CUresult cuGraphExecDestroy(void* exec) {
  NEED_CONTEXT;
  free(exec);
  logLine("graph exec destroyed");
  return OK;
}
API CUresult cuGraphDestroy(void* graph) {
  NEED_CONTEXT;
  free(graph);
  logLine("graph destroyed");
  return OK;
}
#endif
API CUresult cuStreamSynchronize(void* s) {
  NEED_CONTEXT;
  (void)s;
  return OK;
}
API CUresult cuEventCreate(void** e, unsigned flags) {
  NEED_CONTEXT;
  if (flags != 0) return INVALID_VALUE;
  *e = calloc(1, sizeof(Event));
  return OK;
}
API CUresult cuEventDestroy_v2(void* e) {
  NEED_CONTEXT;
  free(e);
  logLine("event destroyed");
  return OK;
}
API CUresult cuEventRecord(void* e, void* s) {
  NEED_CONTEXT;
  (void)s;
  ((Event*)e)->recorded = 1;
  ((Event*)e)->at = launches;
  return OK;
}
API CUresult cuEventSynchronize(void* e) {
  NEED_CONTEXT;
  return ((Event*)e)->recorded ? OK : INVALID_HANDLE;
}
/* 2 microseconds per launch between the two records: a mock clock, not a measurement. */
API CUresult cuEventElapsedTime_v2(float* ms, void* start, void* end) {
  NEED_CONTEXT;
  Event* s = start;
  Event* e = end;
  if (!s->recorded || !e->recorded) return INVALID_HANDLE;
  *ms = (float)(e->at - s->at) * 0.002f;
  return OK;
}
