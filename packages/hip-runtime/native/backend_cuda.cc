// The CUDA driver backend: libcuda.so.1 through dlopen, primary contexts, packed launches.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "backend.h"
#include "cuda_api.h"

namespace rocke {
namespace {

using namespace cuda;

constexpr size_t kJitLogBytes = 16384;

class CudaBackend final : public Backend {
 public:
  CudaBackend(void* library, const SymbolTable& table, std::string graphMissing)
      : library_(library), t_(table), graphMissing_(std::move(graphMissing)) {}
  // The library stays loaded for the life of the process: handles may outlive any owner.
  ~CudaBackend() override = default;

  const char* name() const override { return "cuda"; }

  int deviceCount() override {
    ensureInit();
    int count = 0;
    check(t_.cuDeviceGetCount(&count), "cuDeviceGetCount");
    return count;
  }

  DeviceInfo deviceInfo(int ordinal) override {
    ensureInit();
    CUdevice device = deviceAt(ordinal);
    DeviceInfo info;
    char name[256] = {};
    check(t_.cuDeviceGetName(name, static_cast<int>(sizeof name) - 1, device), "cuDeviceGetName");
    info.name = name;
    const int major = attribute(device, kAttrComputeCapabilityMajor);
    const int minor = attribute(device, kAttrComputeCapabilityMinor);
    info.arch = "sm_" + std::to_string(major) + std::to_string(minor);
    info.archFull = info.arch;
    info.computeUnits = attribute(device, kAttrMultiprocessorCount);
    info.warpSize = attribute(device, kAttrWarpSize);
    info.maxThreadsPerBlock = attribute(device, kAttrMaxThreadsPerBlock);
    for (int i = 0; i < 3; ++i) {
      info.maxBlockDim[i] = attribute(device, kAttrMaxBlockDimX + i);
      info.maxGridDim[i] = attribute(device, kAttrMaxGridDimX + i);
    }
    info.maxSharedPerBlock = static_cast<uint64_t>(attribute(device, kAttrMaxSharedPerBlock));
    info.maxSharedPerBlockOptin = static_cast<uint64_t>(attribute(device, kAttrMaxSharedPerBlockOptin));
    size_t bytes = 0;
    check(t_.cuDeviceTotalMem_v2(&bytes, device), "cuDeviceTotalMem_v2");
    info.totalMemory = bytes;
    check(t_.cuDriverGetVersion(&info.driverVersion), "cuDriverGetVersion");
    return info;
  }

  RawHandle openContext(int ordinal) override {
    ensureInit();
    CUdevice device = deviceAt(ordinal);
    CUcontext context = nullptr;
    check(t_.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
    CUresult result = t_.cuCtxSetCurrent(context);
    if (result != CUDA_SUCCESS) {
      t_.cuDevicePrimaryCtxRelease_v2(device);
      check(result, "cuCtxSetCurrent");
    }
    return context;
  }

  void closeContext(int ordinal, RawHandle) override {
    check(t_.cuDevicePrimaryCtxRelease_v2(deviceAt(ordinal)), "cuDevicePrimaryCtxRelease_v2");
  }

  void makeCurrent(int, RawHandle context) override {
    check(t_.cuCtxSetCurrent(static_cast<CUcontext>(context)), "cuCtxSetCurrent");
  }

  void synchronize() override { check(t_.cuCtxSynchronize(), "cuCtxSynchronize"); }

  uint64_t alloc(size_t bytes) override {
    CUdeviceptr address = 0;
    check(t_.cuMemAlloc_v2(&address, bytes), "cuMemAlloc_v2");
    return address;
  }
  void free(uint64_t address) override { check(t_.cuMemFree_v2(address), "cuMemFree_v2"); }

  void copyHtoD(uint64_t dst, const void* src, size_t bytes) override {
    check(t_.cuMemcpyHtoD_v2(dst, src, bytes), "cuMemcpyHtoD_v2");
  }
  void copyDtoH(void* dst, uint64_t src, size_t bytes) override {
    check(t_.cuMemcpyDtoH_v2(dst, src, bytes), "cuMemcpyDtoH_v2");
  }
  void copyDtoD(uint64_t dst, uint64_t src, size_t bytes) override {
    check(t_.cuMemcpyDtoD_v2(dst, src, bytes), "cuMemcpyDtoD_v2");
  }
  void memset8(uint64_t dst, unsigned char value, size_t bytes) override {
    check(t_.cuMemsetD8_v2(dst, value, bytes), "cuMemsetD8_v2");
  }

  RawHandle loadModule(const void* image) override {
    // The JIT (PTX input) writes its diagnostics into these buffers; keep them for the error.
    std::vector<char> errorLog(kJitLogBytes, 0), infoLog(kJitLogBytes, 0);
    CUjit_option options[4] = {kJitErrorLogBuffer, kJitErrorLogBufferSizeBytes, kJitInfoLogBuffer,
                               kJitInfoLogBufferSizeBytes};
    void* values[4] = {errorLog.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(kJitLogBytes)),
                       infoLog.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(kJitLogBytes))};
    CUmodule module = nullptr;
    CUresult result = t_.cuModuleLoadDataEx(&module, image, 4, options, values);
    if (result != CUDA_SUCCESS) {
      errorLog.back() = 0;
      infoLog.back() = 0;
      std::string log = errorLog.data();
      if (infoLog[0] != 0) log += (log.empty() ? "" : "\n") + std::string(infoLog.data());
      check(result, "cuModuleLoadDataEx", log);
    }
    return module;
  }
  void unloadModule(RawHandle module) override {
    check(t_.cuModuleUnload(static_cast<CUmodule>(module)), "cuModuleUnload");
  }

  RawHandle getFunction(RawHandle module, const char* name) override {
    CUfunction function = nullptr;
    check(t_.cuModuleGetFunction(&function, static_cast<CUmodule>(module), name), "cuModuleGetFunction");
    return function;
  }

  FunctionAttributes functionAttributes(RawHandle handle) override {
    auto function = static_cast<CUfunction>(handle);
    return ReadFunctionAttributes([&](int attribute) {
      int value = 0;
      check(t_.cuFuncGetAttribute(&value, attribute, function), "cuFuncGetAttribute");
      return value;
    });
  }

  void setMaxDynamicShared(RawHandle function, int bytes) override {
    check(t_.cuFuncSetAttribute(static_cast<CUfunction>(function), kFuncMaxDynamicSharedSizeBytes, bytes),
          "cuFuncSetAttribute");
  }
  bool needsSharedOptIn() const override { return true; }

  void launch(RawHandle function, const unsigned grid[3], const unsigned block[3], unsigned sharedBytes,
              RawHandle stream, void* args, size_t argBytes, bool programmatic) override {
    // One packed parameter buffer, laid out by the caller (CU_LAUNCH_PARAM_BUFFER_*).
    void* extra[5] = {kLaunchParamBufferPointer, args, kLaunchParamBufferSize, &argBytes, kLaunchParamEnd};
    if (programmatic && t_.cuLaunchKernelEx != nullptr) {
      CuLaunchAttribute attribute{};
      attribute.id = kLaunchAttributeProgrammaticStreamSerialization;
      attribute.value.programmaticStreamSerializationAllowed = 1;
      const CuLaunchConfig config{grid[0], grid[1], grid[2], block[0], block[1], block[2], sharedBytes,
                                  static_cast<CUstream>(stream), &attribute, 1};
      check(t_.cuLaunchKernelEx(&config, static_cast<CUfunction>(function), nullptr, argBytes > 0 ? extra : nullptr),
            "cuLaunchKernelEx");
      return;
    }
    check(t_.cuLaunchKernel(static_cast<CUfunction>(function), grid[0], grid[1], grid[2], block[0], block[1],
                            block[2], sharedBytes, static_cast<CUstream>(stream), nullptr,
                            argBytes > 0 ? extra : nullptr),
          "cuLaunchKernel");
  }

  RawHandle createStream() override {
    CUstream stream = nullptr;
    check(t_.cuStreamCreate(&stream, 0 /* CU_STREAM_DEFAULT */), "cuStreamCreate");
    return stream;
  }
  void destroyStream(RawHandle stream) override {
    check(t_.cuStreamDestroy_v2(static_cast<CUstream>(stream)), "cuStreamDestroy_v2");
  }
  void synchronizeStream(RawHandle stream) override {
    check(t_.cuStreamSynchronize(static_cast<CUstream>(stream)), "cuStreamSynchronize");
  }

  RawHandle createEvent() override {
    CUevent event = nullptr;
    check(t_.cuEventCreate(&event, 0 /* CU_EVENT_DEFAULT: timing enabled */), "cuEventCreate");
    return event;
  }
  void destroyEvent(RawHandle event) override {
    check(t_.cuEventDestroy_v2(static_cast<CUevent>(event)), "cuEventDestroy_v2");
  }
  void recordEvent(RawHandle event, RawHandle stream) override {
    check(t_.cuEventRecord(static_cast<CUevent>(event), static_cast<CUstream>(stream)), "cuEventRecord");
  }
  void synchronizeEvent(RawHandle event) override {
    check(t_.cuEventSynchronize(static_cast<CUevent>(event)), "cuEventSynchronize");
  }
  float elapsedMs(RawHandle start, RawHandle end) override {
    float ms = 0.0f;
    check(t_.cuEventElapsedTime_v2(&ms, static_cast<CUevent>(start), static_cast<CUevent>(end)),
          "cuEventElapsedTime");
    return ms;
  }

  const std::string& graphSymbolsMissing() const override { return graphMissing_; }
  RawHandle createCaptureStream() override {
    requireGraphs();
    CUstream stream = nullptr;
    check(t_.cuStreamCreate(&stream, kStreamNonBlocking), "cuStreamCreate");
    return stream;
  }
  void beginCapture(RawHandle stream) override {
    requireGraphs();
    check(t_.cuStreamBeginCapture_v2(static_cast<CUstream>(stream), kCaptureModeThreadLocal), "cuStreamBeginCapture_v2");
  }
  RawHandle endCapture(RawHandle stream) override {
    requireGraphs();
    CUgraph graph = nullptr;
    check(t_.cuStreamEndCapture(static_cast<CUstream>(stream), &graph), "cuStreamEndCapture");
    return graph;
  }
  RawHandle instantiateGraph(RawHandle graph) override {
    requireGraphs();
    CUgraphExec exec = nullptr;
    check(t_.cuGraphInstantiateWithFlags(&exec, static_cast<CUgraph>(graph), 0), "cuGraphInstantiateWithFlags");
    return exec;
  }
  void destroyGraph(RawHandle graph) override {
    requireGraphs();
    check(t_.cuGraphDestroy(static_cast<CUgraph>(graph)), "cuGraphDestroy");
  }
  void launchGraph(RawHandle exec, RawHandle stream) override {
    requireGraphs();
    check(t_.cuGraphLaunch(static_cast<CUgraphExec>(exec), static_cast<CUstream>(stream)), "cuGraphLaunch");
  }
  void destroyGraphExec(RawHandle exec) override {
    requireGraphs();
    check(t_.cuGraphExecDestroy(static_cast<CUgraphExec>(exec)), "cuGraphExecDestroy");
  }

 private:
  void check(CUresult result, const char* api, std::string log = {}) {
    if (result == CUDA_SUCCESS) return;
    const char* name = nullptr;
    const char* text = nullptr;
    if (t_.cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) name = "CUDA_ERROR_UNRECOGNIZED";
    if (t_.cuGetErrorString(result, &text) != CUDA_SUCCESS || text == nullptr) text = "no description from the driver";
    throw ApiError("cuda", api, result, name, text, std::move(log));
  }

  void requireGraphs() const {
    if (!graphMissing_.empty()) throw MissingSymbolsError("cuda", "graph capture", graphMissing_);
  }

  void ensureInit() {
    if (initialized_) return;
    check(t_.cuInit(0), "cuInit");
    initialized_ = true;
  }

  CUdevice deviceAt(int ordinal) {
    CUdevice device = 0;
    check(t_.cuDeviceGet(&device, ordinal), "cuDeviceGet");
    return device;
  }

  int attribute(CUdevice device, int which) {
    int value = 0;
    check(t_.cuDeviceGetAttribute(&value, which, device), "cuDeviceGetAttribute");
    return value;
  }

  void* library_;
  SymbolTable t_;
  std::string graphMissing_;  // graph symbols the driver lacks (empty: all there)
  bool initialized_ = false;
};

// Older drivers (before CUDA 12.8) export only the unversioned elapsed-time entry point.
const char* FallbackName(const char* symbol) {
  return std::strcmp(symbol, "cuEventElapsedTime_v2") == 0 ? "cuEventElapsedTime" : nullptr;
}

}  // namespace

std::unique_ptr<Backend> LoadCudaBackend(const std::vector<std::string>& candidates,
                                         std::vector<LoadAttempt>& attempts) {
  return LoadFirstLibrary(candidates, attempts, [](void* library, std::string& missing) -> std::unique_ptr<Backend> {
    SymbolTable table;
#define ROCKE_CUDA_RESOLVE(name, params) \
  table.name = reinterpret_cast<decltype(table.name)>(FindSymbol(library, #name, FallbackName(#name), missing));
    ROCKE_CUDA_SYMBOLS(ROCKE_CUDA_RESOLVE)
#undef ROCKE_CUDA_RESOLVE
    if (!missing.empty()) return nullptr;
    std::string graphMissing;  // optional: a driver without them still serves everything else
#define ROCKE_CUDA_RESOLVE_OPTIONAL(name, params) \
  table.name = reinterpret_cast<decltype(table.name)>(FindSymbol(library, #name, nullptr, graphMissing));
    ROCKE_CUDA_GRAPH_SYMBOLS(ROCKE_CUDA_RESOLVE_OPTIONAL)
#undef ROCKE_CUDA_RESOLVE_OPTIONAL
    std::string launchExMissing;  // optional: programmatic launches fall back to plain ones
    table.cuLaunchKernelEx =
        reinterpret_cast<decltype(table.cuLaunchKernelEx)>(FindSymbol(library, "cuLaunchKernelEx", nullptr, launchExMissing));
    return std::make_unique<CudaBackend>(library, table, std::move(graphMissing));
  });
}

}  // namespace rocke
