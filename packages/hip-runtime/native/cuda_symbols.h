// The CUDA driver entry points this addon uses, as one X-macro list:
//   X(symbol, (parameter types))   -- every entry returns CUresult.
// Symbol names are the exported ones (the `_v2` names that cuda.h's macros map to), so the
// table is resolved with plain dlsym. The list names types only; whoever expands it
// supplies them: cuda_api.h declares ABI-equal stand-ins, cuda_abi_check.cc uses cuda.h's.
#pragma once

#define ROCKE_CUDA_SYMBOLS(X)                                                              \
  X(cuGetErrorString, (CUresult, const char**))                                            \
  X(cuGetErrorName, (CUresult, const char**))                                              \
  X(cuInit, (unsigned int))                                                                \
  X(cuDriverGetVersion, (int*))                                                            \
  X(cuDeviceGetCount, (int*))                                                              \
  X(cuDeviceGet, (CUdevice*, int))                                                         \
  X(cuDeviceGetName, (char*, int, CUdevice))                                               \
  X(cuDeviceGetAttribute, (int*, CUdevice_attribute, CUdevice))                            \
  X(cuDeviceTotalMem_v2, (size_t*, CUdevice))                                              \
  X(cuDevicePrimaryCtxRetain, (CUcontext*, CUdevice))                                      \
  X(cuDevicePrimaryCtxRelease_v2, (CUdevice))                                              \
  X(cuCtxSetCurrent, (CUcontext))                                                          \
  X(cuCtxSynchronize, ())                                                                  \
  X(cuMemAlloc_v2, (CUdeviceptr*, size_t))                                                 \
  X(cuMemFree_v2, (CUdeviceptr))                                                           \
  X(cuMemcpyHtoD_v2, (CUdeviceptr, const void*, size_t))                                   \
  X(cuMemcpyDtoH_v2, (void*, CUdeviceptr, size_t))                                         \
  X(cuMemcpyDtoD_v2, (CUdeviceptr, CUdeviceptr, size_t))                                   \
  X(cuMemsetD8_v2, (CUdeviceptr, unsigned char, size_t))                                   \
  X(cuModuleLoadDataEx, (CUmodule*, const void*, unsigned int, CUjit_option*, void**))     \
  X(cuModuleUnload, (CUmodule))                                                            \
  X(cuModuleGetFunction, (CUfunction*, CUmodule, const char*))                             \
  X(cuFuncGetAttribute, (int*, CUfunction_attribute, CUfunction))                          \
  X(cuFuncSetAttribute, (CUfunction, CUfunction_attribute, int))                           \
  X(cuLaunchKernel, (CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,   \
                     unsigned int, unsigned int, unsigned int, CUstream, void**, void**))  \
  X(cuStreamCreate, (CUstream*, unsigned int))                                             \
  X(cuStreamDestroy_v2, (CUstream))                                                        \
  X(cuStreamSynchronize, (CUstream))                                                       \
  X(cuEventCreate, (CUevent*, unsigned int))                                               \
  X(cuEventDestroy_v2, (CUevent))                                                          \
  X(cuEventRecord, (CUevent, CUstream))                                                    \
  X(cuEventSynchronize, (CUevent))                                                         \
  X(cuEventElapsedTime_v2, (float*, CUevent, CUevent))

// Graph capture and replay (CUDA 11.4+ drivers). Optional: a driver without them still loads,
// and only capture reports the absent names.
#define ROCKE_CUDA_GRAPH_SYMBOLS(X)                                                        \
  X(cuStreamBeginCapture_v2, (CUstream, CUstreamCaptureMode))                              \
  X(cuStreamEndCapture, (CUstream, CUgraph*))                                              \
  X(cuGraphInstantiateWithFlags, (CUgraphExec*, CUgraph, unsigned long long))              \
  X(cuGraphLaunch, (CUgraphExec, CUstream))                                                \
  X(cuGraphExecDestroy, (CUgraphExec))                                                     \
  X(cuGraphDestroy, (CUgraph))

// Launches with attributes (CUDA 12+ drivers), for programmatic dependent launch. Optional: without
// it a programmatic launch is a plain one (the kernels' griddepcontrol then does nothing).
#define ROCKE_CUDA_LAUNCH_EX_SYMBOLS(X) X(cuLaunchKernelEx, (const CuLaunchConfig*, CUfunction, void**, void**))
