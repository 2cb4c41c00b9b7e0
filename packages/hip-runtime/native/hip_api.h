// HIP runtime types, constants and the entry points this addon uses (one X-macro list).
// No HIP header is needed to build: hipError_t is an int-sized enum, handles are opaque
// pointers and hipDeviceptr_t is void*. Values below are from ROCm's hip_runtime_api.h
// (HIP 6 and 7); the device-property offsets are for the ABI-versioned
// hipDeviceProp_tR0600 struct that hipGetDevicePropertiesR0600 fills.
#pragma once
#include <cstddef>

namespace rocke::hip {

typedef int hipError_t;
typedef struct ihipModule_t* hipModule_t;
typedef struct ihipModuleSymbol_t* hipFunction_t;
typedef struct ihipStream_t* hipStream_t;
typedef struct ihipEvent_t* hipEvent_t;
typedef void* hipDeviceptr_t;
typedef struct ihipGraph* hipGraph_t;
typedef struct hipGraphExec* hipGraphExec_t;
typedef int hipStreamCaptureMode;  // enum, int-sized

// hipStreamNonBlocking and hipStreamCaptureModeThreadLocal (CUDA's values).
constexpr unsigned kStreamNonBlocking = 0x1;
constexpr hipStreamCaptureMode kCaptureModeThreadLocal = 1;

constexpr hipError_t hipSuccess = 0;

// hipModuleLaunchKernel `extra` markers (HIP's END is 3, unlike CUDA's 0).
inline void* const kLaunchParamBufferPointer = reinterpret_cast<void*>(0x01);
inline void* const kLaunchParamBufferSize = reinterpret_cast<void*>(0x02);
inline void* const kLaunchParamEnd = reinterpret_cast<void*>(0x03);

// Byte offsets inside hipDeviceProp_tR0600 (sizeof 1472 on LP64). Reading fields by offset
// avoids declaring the 1.5 KB struct; the buffer handed to HIP is larger than the struct.
namespace prop {
constexpr size_t kName = 0;                     // char[256]
constexpr size_t kTotalGlobalMem = 288;         // size_t
constexpr size_t kSharedMemPerBlock = 296;      // size_t
constexpr size_t kWarpSize = 308;               // int
constexpr size_t kMaxThreadsPerBlock = 320;     // int
constexpr size_t kMaxThreadsDim = 324;          // int[3]
constexpr size_t kMaxGridSize = 336;            // int[3]
constexpr size_t kMultiProcessorCount = 388;    // int
constexpr size_t kSharedMemPerBlockOptin = 696; // size_t
constexpr size_t kGcnArchName = 1160;           // char[256], e.g. "gfx942:sramecc+:xnack-"
constexpr size_t kStructSize = 1472;
constexpr size_t kBufferSize = 8192;
}  // namespace prop

// X(symbol, (parameter types)) -- every entry returns hipError_t.
#define ROCKE_HIP_SYMBOLS(X)                                                               \
  X(hipInit, (unsigned int))                                                               \
  X(hipDriverGetVersion, (int*))                                                           \
  X(hipGetDeviceCount, (int*))                                                             \
  X(hipSetDevice, (int))                                                                   \
  X(hipGetDevicePropertiesR0600, (void*, int))                                             \
  X(hipDeviceSynchronize, ())                                                              \
  X(hipMalloc, (void**, size_t))                                                           \
  X(hipFree, (void*))                                                                      \
  X(hipMemcpyHtoD, (hipDeviceptr_t, const void*, size_t))                                  \
  X(hipMemcpyDtoH, (void*, hipDeviceptr_t, size_t))                                        \
  X(hipMemcpyDtoD, (hipDeviceptr_t, hipDeviceptr_t, size_t))                               \
  X(hipMemsetD8, (hipDeviceptr_t, unsigned char, size_t))                                  \
  X(hipModuleLoadData, (hipModule_t*, const void*))                                        \
  X(hipModuleUnload, (hipModule_t))                                                        \
  X(hipModuleGetFunction, (hipFunction_t*, hipModule_t, const char*))                      \
  X(hipFuncGetAttribute, (int*, int, hipFunction_t))                                       \
  X(hipModuleLaunchKernel, (hipFunction_t, unsigned int, unsigned int, unsigned int,       \
                            unsigned int, unsigned int, unsigned int, unsigned int,        \
                            hipStream_t, void**, void**))                                  \
  X(hipStreamCreate, (hipStream_t*))                                                       \
  X(hipStreamDestroy, (hipStream_t))                                                       \
  X(hipStreamSynchronize, (hipStream_t))                                                   \
  X(hipEventCreate, (hipEvent_t*))                                                         \
  X(hipEventDestroy, (hipEvent_t))                                                         \
  X(hipEventRecord, (hipEvent_t, hipStream_t))                                             \
  X(hipEventSynchronize, (hipEvent_t))                                                     \
  X(hipEventElapsedTime, (float*, hipEvent_t, hipEvent_t))

// Graph capture and replay: optional, so a runtime without them still loads.
#define ROCKE_HIP_GRAPH_SYMBOLS(X)                                                         \
  X(hipStreamCreateWithFlags, (hipStream_t*, unsigned int))                                \
  X(hipStreamBeginCapture, (hipStream_t, hipStreamCaptureMode))                            \
  X(hipStreamEndCapture, (hipStream_t, hipGraph_t*))                                       \
  X(hipGraphInstantiateWithFlags, (hipGraphExec_t*, hipGraph_t, unsigned long long))       \
  X(hipGraphLaunch, (hipGraphExec_t, hipStream_t))                                         \
  X(hipGraphExecDestroy, (hipGraphExec_t))                                                 \
  X(hipGraphDestroy, (hipGraph_t))

struct SymbolTable {
  const char* (*hipGetErrorString)(hipError_t) = nullptr;
  const char* (*hipGetErrorName)(hipError_t) = nullptr;
#define ROCKE_HIP_FIELD(name, params) hipError_t(*name) params = nullptr;
  ROCKE_HIP_SYMBOLS(ROCKE_HIP_FIELD)
  ROCKE_HIP_GRAPH_SYMBOLS(ROCKE_HIP_FIELD)
#undef ROCKE_HIP_FIELD
};

}  // namespace rocke::hip
