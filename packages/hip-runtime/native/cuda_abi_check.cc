// Compile-only check (not part of the addon): every entry of ROCKE_CUDA_SYMBOLS must have
// exactly the signature cuda.h declares, and our constants must equal the header's.
//   g++ -std=c++17 -fsyntax-only -I/usr/local/cuda/include native/cuda_abi_check.cc
#include <cuda.h>

#include <type_traits>

#include "cuda_symbols.h"

#define ROCKE_CUDA_CHECK(name, params)                                                 \
  static_assert(std::is_same_v<decltype(&::name), CUresult(*) params>,                 \
                #name ": signature differs from cuda.h");
ROCKE_CUDA_SYMBOLS(ROCKE_CUDA_CHECK)
ROCKE_CUDA_GRAPH_SYMBOLS(ROCKE_CUDA_CHECK)

#include "backend.h"
#include "cuda_api.h"
namespace c = rocke::cuda;
static_assert(sizeof(c::CUresult) == sizeof(CUresult));
static_assert(sizeof(c::CUdeviceptr) == sizeof(CUdeviceptr));
static_assert(sizeof(c::CUdevice) == sizeof(CUdevice));
static_assert(c::kAttrMaxThreadsPerBlock == CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
static_assert(c::kAttrMaxBlockDimX == CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X);
static_assert(c::kAttrMaxBlockDimX + 1 == CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y);
static_assert(c::kAttrMaxBlockDimX + 2 == CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z);
static_assert(c::kAttrMaxGridDimX == CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X);
static_assert(c::kAttrMaxGridDimX + 1 == CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y);
static_assert(c::kAttrMaxGridDimX + 2 == CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z);
static_assert(c::kAttrMaxSharedPerBlock == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
static_assert(c::kAttrWarpSize == CU_DEVICE_ATTRIBUTE_WARP_SIZE);
static_assert(c::kAttrMultiprocessorCount == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(c::kAttrComputeCapabilityMajor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(c::kAttrComputeCapabilityMinor == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(c::kAttrMaxSharedPerBlockOptin == CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
static_assert(rocke::kFuncMaxThreadsPerBlock == CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
static_assert(rocke::kFuncSharedSizeBytes == CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
static_assert(rocke::kFuncConstSizeBytes == CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES);
static_assert(rocke::kFuncLocalSizeBytes == CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES);
static_assert(rocke::kFuncNumRegs == CU_FUNC_ATTRIBUTE_NUM_REGS);
static_assert(c::kFuncMaxDynamicSharedSizeBytes == CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES);
static_assert(c::kJitInfoLogBuffer == CU_JIT_INFO_LOG_BUFFER);
static_assert(c::kJitInfoLogBufferSizeBytes == CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES);
static_assert(c::kJitErrorLogBuffer == CU_JIT_ERROR_LOG_BUFFER);
static_assert(c::kJitErrorLogBufferSizeBytes == CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
static_assert(CU_LAUNCH_PARAM_END_AS_INT == 0x00);
static_assert(CU_LAUNCH_PARAM_BUFFER_POINTER_AS_INT == 0x01);
static_assert(CU_LAUNCH_PARAM_BUFFER_SIZE_AS_INT == 0x02);
static_assert(CU_STREAM_DEFAULT == 0 && CU_EVENT_DEFAULT == 0);
static_assert(sizeof(c::CUstreamCaptureMode) == sizeof(CUstreamCaptureMode));
static_assert(c::kCaptureModeThreadLocal == CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
static_assert(c::kStreamNonBlocking == CU_STREAM_NON_BLOCKING);
// cuLaunchKernelEx takes our mirror of CUlaunchConfig: same signature up to the struct's name, same layout.
#include <cstddef>
static_assert(std::is_same_v<decltype(&::cuLaunchKernelEx), CUresult (*)(const CUlaunchConfig*, CUfunction, void**, void**)>);
static_assert(c::kLaunchAttributeProgrammaticStreamSerialization == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION);
static_assert(sizeof(c::CuLaunchAttribute) == sizeof(CUlaunchAttribute));
static_assert(offsetof(c::CuLaunchAttribute, value) == offsetof(CUlaunchAttribute, value));
static_assert(sizeof(c::CuLaunchConfig) == sizeof(CUlaunchConfig));
static_assert(offsetof(c::CuLaunchConfig, sharedMemBytes) == offsetof(CUlaunchConfig, sharedMemBytes));
static_assert(offsetof(c::CuLaunchConfig, hStream) == offsetof(CUlaunchConfig, hStream));
static_assert(offsetof(c::CuLaunchConfig, attrs) == offsetof(CUlaunchConfig, attrs));
static_assert(offsetof(c::CuLaunchConfig, numAttrs) == offsetof(CUlaunchConfig, numAttrs));
