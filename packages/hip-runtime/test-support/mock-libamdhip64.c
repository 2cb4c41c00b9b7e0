/*
 * A CPU stand-in for libamdhip64.so (HIP 6+), for tests without an AMD GPU: the entry points
 * @rocke/hip-runtime resolves, "device memory" in host memory, the hipModuleLaunchKernel `extra`
 * protocol (END marker 3, unlike CUDA's 0) and one kernel, axpy(y, x, a, n), run as C.
 * hipGetDevicePropertiesR0600 writes the fields the addon reads at the hipDeviceProp_tR0600
 * offsets of native/hip_api.h (so this mock cannot prove those offsets; the HIP headers do).
 * Stream capture records axpy launches into a graph that hipGraphLaunch replays.
 * Calls of interest are appended to the file named by MOCK_HIP_LOG.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define API __attribute__((visibility("default")))
enum { OK = 0, INVALID_VALUE = 1, INVALID_DEVICE = 101, INVALID_IMAGE = 200, INVALID_HANDLE = 400, ILLEGAL_STATE = 401,
       NOT_FOUND = 500, CAPTURE_UNSUPPORTED = 900 };

static int device = -1, live;
static long launches;

static void logLine(const char* format, ...) {
  const char* path = getenv("MOCK_HIP_LOG");
  FILE* f = path ? fopen(path, "a") : NULL;
  if (!f) return;
  va_list args;
  va_start(args, format);
  vfprintf(f, format, args);
  va_end(args);
  fputc('\n', f);
  fclose(f);
}
#define NEED_DEVICE \
  if (device != 0) return INVALID_DEVICE

API const char* hipGetErrorName(int e) {
  switch (e) {
    case OK: return "hipSuccess";
    case INVALID_VALUE: return "hipErrorInvalidValue";
    case INVALID_DEVICE: return "hipErrorInvalidDevice";
    case INVALID_IMAGE: return "hipErrorInvalidImage";
    case INVALID_HANDLE: return "hipErrorInvalidHandle";
    case NOT_FOUND: return "hipErrorNotFound";
    case ILLEGAL_STATE: return "hipErrorIllegalState";
    case CAPTURE_UNSUPPORTED: return "hipErrorStreamCaptureUnsupported";
  }
  return "hipErrorUnknown";
}
API const char* hipGetErrorString(int e) {
  switch (e) {
    case OK: return "no error";
    case INVALID_VALUE: return "invalid argument";
    case INVALID_DEVICE: return "invalid device ordinal";
    case INVALID_IMAGE: return "device kernel image is invalid";
    case INVALID_HANDLE: return "invalid resource handle";
    case NOT_FOUND: return "named symbol not found";
    case ILLEGAL_STATE: return "the operation cannot be performed in the present state";
    case CAPTURE_UNSUPPORTED: return "operation not permitted when stream is capturing";
  }
  return "unknown error";
}
API int hipInit(unsigned flags) { return flags == 0 ? OK : INVALID_VALUE; }
API int hipDriverGetVersion(int* v) { *v = 60443484; return OK; }
API int hipGetDeviceCount(int* n) { *n = 1; return OK; }
API int hipSetDevice(int d) {
  if (d != 0) return INVALID_DEVICE;
  device = d;
  return OK;
}
static void put(void* base, size_t offset, const void* value, size_t size) { memcpy((char*)base + offset, value, size); }
API int hipGetDevicePropertiesR0600(void* p, int d) {
  if (d != 0) return INVALID_DEVICE;
  size_t total = (size_t)1 << 37, shared = 65536, optin = 163840;
  int warp = 64, threads = 1024, dims[3] = {1024, 1024, 1024}, grid[3] = {2147483647, 65536, 65536}, cus = 256;
  snprintf((char*)p, 256, "Mock AMD Instinct");
  put(p, 288, &total, sizeof total);
  put(p, 296, &shared, sizeof shared);
  put(p, 308, &warp, sizeof warp);
  put(p, 320, &threads, sizeof threads);
  put(p, 324, dims, sizeof dims);
  put(p, 336, grid, sizeof grid);
  put(p, 388, &cus, sizeof cus);
  put(p, 696, &optin, sizeof optin);
  snprintf((char*)p + 1160, 256, "gfx950:sramecc+:xnack-");
  return OK;
}
API int hipDeviceSynchronize(void) {
  NEED_DEVICE;
  return OK;
}
API int hipMalloc(void** p, size_t n) {
  NEED_DEVICE;
  *p = calloc(1, n);
  live++;
  logLine("alloc %zu live=%d", n, live);
  return *p ? OK : INVALID_VALUE;
}
API int hipFree(void* p) {
  NEED_DEVICE;
  free(p);
  live--;
  logLine("free live=%d", live);
  return OK;
}
API int hipMemcpyHtoD(void* dst, const void* src, size_t n) {
  NEED_DEVICE;
  memcpy(dst, src, n);
  return OK;
}
API int hipMemcpyDtoH(void* dst, void* src, size_t n) {
  NEED_DEVICE;
  memcpy(dst, src, n);
  return OK;
}
API int hipMemcpyDtoD(void* dst, void* src, size_t n) {
  NEED_DEVICE;
  memmove(dst, src, n);
  return OK;
}
API int hipMemsetD8(void* dst, unsigned char v, size_t n) {
  NEED_DEVICE;
  memset(dst, v, n);
  return OK;
}
API int hipModuleLoadData(void** m, const void* image) {
  NEED_DEVICE;
  const unsigned char* b = image;
  if (!(b[0] == 0x7f && b[1] == 'E' && b[2] == 'L' && b[3] == 'F')) return INVALID_IMAGE;  // code objects only
  *m = malloc(1);
  return OK;
}
API int hipModuleUnload(void* m) {
  NEED_DEVICE;
  free(m);
  logLine("unload");
  return OK;
}
static char axpyFunction;
API int hipModuleGetFunction(void** f, void* m, const char* name) {
  NEED_DEVICE;
  (void)m;
  if (strcmp(name, "axpy") != 0) return NOT_FOUND;
  *f = &axpyFunction;
  return OK;
}
API int hipFuncGetAttribute(int* v, int attribute, void* f) {
  if (f != &axpyFunction) return INVALID_HANDLE;
  switch (attribute) {
    case 0: *v = 1024; return OK;
    case 1: case 2: case 3: *v = 0; return OK;
    case 4: *v = 24; return OK;
  }
  return INVALID_VALUE;
}
/* Captured axpy launches: grid.x * block.x threads and the 24 argument bytes each. */
typedef struct { int count; long threads[64]; unsigned char args[64][24]; } Graph;
typedef struct { int capturing; Graph* graph; } Stream;
static void axpy(const unsigned char* args, long threads) {
  float* y = *(float* const*)args;
  const float* x = *(float* const*)(args + 8);
  float a;
  int32_t n;
  memcpy(&a, args + 16, 4);
  memcpy(&n, args + 20, 4);
  for (long i = 0; i < n && i < threads; i++) y[i] = a * x[i] + y[i];
  launches++;
}
API int hipModuleLaunchKernel(void* f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                              unsigned shared, void* stream, void** params, void** extra) {
  NEED_DEVICE;
  if (f != &axpyFunction || params != NULL || extra == NULL) return INVALID_VALUE;
  if (extra[0] != (void*)1 || extra[2] != (void*)2 || extra[4] != (void*)3) return INVALID_VALUE;
  const unsigned char* args = extra[1];
  size_t size = *(size_t*)extra[3];
  if (size != 24) return INVALID_VALUE;
  Stream* s = stream;
  if (s != NULL && s->capturing) {
    if (s->graph->count == 64) return INVALID_VALUE;
    s->graph->threads[s->graph->count] = (long)gx * bx;
    memcpy(s->graph->args[s->graph->count++], args, 24);
    logLine("capture axpy grid=%u,%u,%u", gx, gy, gz);
    return OK;
  }
  logLine("launch axpy grid=%u,%u,%u block=%u,%u,%u shared=%u stream=%s size=%zu", gx, gy, gz, bx, by, bz, shared,
          stream ? "yes" : "default", size);
  axpy(args, (long)gx * bx);
  return OK;
}
typedef struct { int recorded; long at; } Event;
API int hipStreamCreate(void** s) {
  NEED_DEVICE;
  *s = calloc(1, sizeof(Stream));
  return OK;
}
API int hipStreamCreateWithFlags(void** s, unsigned flags) {
  NEED_DEVICE;
  if (flags > 1) return INVALID_VALUE; /* hipStreamDefault or hipStreamNonBlocking */
  *s = calloc(1, sizeof(Stream));
  logLine("stream created flags=%u", flags);
  return OK;
}
API int hipStreamBeginCapture(void* stream, int mode) {
  Stream* s = stream;
  if (s == NULL) return CAPTURE_UNSUPPORTED;
  if (mode < 0 || mode > 2 || s->capturing) return INVALID_VALUE;
  s->capturing = 1;
  s->graph = calloc(1, sizeof(Graph));
  logLine("begin capture mode=%d", mode);
  return OK;
}
API int hipStreamEndCapture(void* stream, void** graph) {
  Stream* s = stream;
  if (s == NULL || !s->capturing) return ILLEGAL_STATE;
  s->capturing = 0;
  *graph = s->graph;
  s->graph = NULL;
  return OK;
}
API int hipGraphInstantiateWithFlags(void** exec, void* graph, unsigned long long flags) {
  if (graph == NULL || flags != 0) return INVALID_VALUE;
  Graph* copy = malloc(sizeof(Graph));
  memcpy(copy, graph, sizeof(Graph));
  *exec = copy;
  logLine("instantiate nodes=%d", copy->count);
  return OK;
}
API int hipGraphLaunch(void* exec, void* stream) {
  NEED_DEVICE;
  Graph* g = exec;
  logLine("graph launch nodes=%d stream=%s", g->count, stream ? "yes" : "default");
  for (int i = 0; i < g->count; i++) axpy(g->args[i], g->threads[i]);
  return OK;
}
API int hipGraphExecDestroy(void* exec) {
  free(exec);
  logLine("graph exec destroyed");
  return OK;
}
API int hipGraphDestroy(void* graph) {
  free(graph);
  return OK;
}
API int hipStreamDestroy(void* s) {
  free(s);
  return OK;
}
API int hipStreamSynchronize(void* s) {
  (void)s;
  return OK;
}
API int hipEventCreate(void** e) {
  NEED_DEVICE;
  *e = calloc(1, sizeof(Event));
  return OK;
}
API int hipEventDestroy(void* e) {
  free(e);
  return OK;
}
API int hipEventRecord(void* e, void* s) {
  (void)s;
  ((Event*)e)->recorded = 1;
  ((Event*)e)->at = launches;
  return OK;
}
API int hipEventSynchronize(void* e) { return ((Event*)e)->recorded ? OK : INVALID_HANDLE; }
/* 3 microseconds per launch between the records: a mock clock, not a measurement. */
API int hipEventElapsedTime(float* ms, void* start, void* end) {
  Event* s = start;
  Event* e = end;
  if (!s->recorded || !e->recorded) return INVALID_HANDLE;
  *ms = (float)(e->at - s->at) * 0.003f;
  return OK;
}
