// CUDA driver types and constants, declared here so the addon builds without cuda.h.
// cuda_abi_check.cc proves the symbol list against the real header where one exists.
#pragma once
#include <cstddef>

#include "cuda_symbols.h"

namespace rocke::cuda {

typedef int CUresult;  // enum cudaError_enum: int-sized
typedef int CUdevice;
typedef int CUdevice_attribute;
typedef int CUfunction_attribute;
typedef int CUjit_option;
typedef unsigned long long CUdeviceptr;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphExec_st* CUgraphExec;
typedef int CUstreamCaptureMode;  // enum CUstreamCaptureMode_enum: int-sized

constexpr CUresult CUDA_SUCCESS = 0;

// CUdevice_attribute values (cuda.h, CUdevice_attribute_enum).
constexpr int kAttrMaxThreadsPerBlock = 1;
constexpr int kAttrMaxBlockDimX = 2;  // Y = 3, Z = 4
constexpr int kAttrMaxGridDimX = 5;   // Y = 6, Z = 7
constexpr int kAttrMaxSharedPerBlock = 8;
constexpr int kAttrWarpSize = 10;
constexpr int kAttrMultiprocessorCount = 16;
constexpr int kAttrComputeCapabilityMajor = 75;
constexpr int kAttrComputeCapabilityMinor = 76;
constexpr int kAttrMaxSharedPerBlockOptin = 97;

// CUfunction_attribute values beyond the ones both backends read (backend.h).
constexpr int kFuncMaxDynamicSharedSizeBytes = 8;

// CUjit_option values.
constexpr CUjit_option kJitInfoLogBuffer = 3;
constexpr CUjit_option kJitInfoLogBufferSizeBytes = 4;
constexpr CUjit_option kJitErrorLogBuffer = 5;
constexpr CUjit_option kJitErrorLogBufferSizeBytes = 6;

// Stream flags and capture modes (CUstream_flags, CUstreamCaptureMode).
constexpr unsigned kStreamNonBlocking = 0x1;
constexpr CUstreamCaptureMode kCaptureModeThreadLocal = 1;

// cuLaunchKernelEx: CUlaunchAttribute (id, padding to 8, a 64-byte value union) and
// CUlaunchConfig, laid out as cuda.h; cuda_abi_check.cc holds them against it.
constexpr int kLaunchAttributeProgrammaticStreamSerialization = 6;
struct CuLaunchAttribute {
  int id;
  char pad[4];
  union {
    char bytes[64];
    int programmaticStreamSerializationAllowed;
  } value;
};
struct CuLaunchConfig {
  unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
  CUstream hStream;
  CuLaunchAttribute* attrs;
  unsigned numAttrs;
};

// cuLaunchKernel `extra` markers.
inline void* const kLaunchParamEnd = reinterpret_cast<void*>(0x00);
inline void* const kLaunchParamBufferPointer = reinterpret_cast<void*>(0x01);
inline void* const kLaunchParamBufferSize = reinterpret_cast<void*>(0x02);

struct SymbolTable {
#define ROCKE_CUDA_FIELD(name, params) CUresult(*name) params = nullptr;
  ROCKE_CUDA_SYMBOLS(ROCKE_CUDA_FIELD)
  ROCKE_CUDA_GRAPH_SYMBOLS(ROCKE_CUDA_FIELD)
  ROCKE_CUDA_LAUNCH_EX_SYMBOLS(ROCKE_CUDA_FIELD)
#undef ROCKE_CUDA_FIELD
};

}  // namespace rocke::cuda
