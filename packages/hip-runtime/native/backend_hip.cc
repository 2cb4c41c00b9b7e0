// The HIP backend: libamdhip64 through dlopen, device selected per call, packed launches.
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend.h"
#include "hip_api.h"

namespace rocke {
namespace {

using namespace hip;

template <typename T>
T ReadAt(const std::vector<char>& buffer, size_t offset) {
  T value;
  std::memcpy(&value, buffer.data() + offset, sizeof value);
  return value;
}

std::string ReadString(const std::vector<char>& buffer, size_t offset, size_t capacity) {
  const char* begin = buffer.data() + offset;
  return std::string(begin, strnlen(begin, capacity));
}

class HipBackend final : public Backend {
 public:
  HipBackend(void* library, const SymbolTable& table, std::string graphMissing)
      : library_(library), t_(table), graphMissing_(std::move(graphMissing)) {}
  ~HipBackend() override = default;  // the library stays loaded for the process

  const char* name() const override { return "hip"; }

  int deviceCount() override {
    ensureInit();
    int count = 0;
    check(t_.hipGetDeviceCount(&count), "hipGetDeviceCount");
    return count;
  }

  DeviceInfo deviceInfo(int ordinal) override {
    ensureInit();
    std::vector<char> props(prop::kBufferSize, 0);
    check(t_.hipGetDevicePropertiesR0600(props.data(), ordinal), "hipGetDevicePropertiesR0600");
    DeviceInfo info;
    info.name = ReadString(props, prop::kName, 256);
    info.archFull = ReadString(props, prop::kGcnArchName, 256);
    if (info.archFull.rfind("gfx", 0) != 0) {
      throw std::runtime_error("hipGetDevicePropertiesR0600 gave the architecture name '" + info.archFull +
                               "', which does not start with 'gfx': this HIP runtime's device-property "
                               "layout is not the HIP 6/7 one this addon reads");
    }
    info.arch = info.archFull.substr(0, info.archFull.find(':'));  // drop ":sramecc+:xnack-"
    info.computeUnits = ReadAt<int>(props, prop::kMultiProcessorCount);
    info.warpSize = ReadAt<int>(props, prop::kWarpSize);
    info.maxThreadsPerBlock = ReadAt<int>(props, prop::kMaxThreadsPerBlock);
    for (int i = 0; i < 3; ++i) {
      info.maxBlockDim[i] = ReadAt<int>(props, prop::kMaxThreadsDim + 4 * i);
      info.maxGridDim[i] = ReadAt<int>(props, prop::kMaxGridSize + 4 * i);
    }
    info.totalMemory = ReadAt<size_t>(props, prop::kTotalGlobalMem);
    info.maxSharedPerBlock = ReadAt<size_t>(props, prop::kSharedMemPerBlock);
    info.maxSharedPerBlockOptin = ReadAt<size_t>(props, prop::kSharedMemPerBlockOptin);
    // AMD has no opt-in step: the whole LDS is available to a dynamic allocation.
    if (info.maxSharedPerBlockOptin < info.maxSharedPerBlock) info.maxSharedPerBlockOptin = info.maxSharedPerBlock;
    check(t_.hipDriverGetVersion(&info.driverVersion), "hipDriverGetVersion");
    return info;
  }

  RawHandle openContext(int ordinal) override {
    ensureInit();
    check(t_.hipSetDevice(ordinal), "hipSetDevice");
    return nullptr;  // HIP selects a device per thread; there is no context to keep
  }
  void closeContext(int, RawHandle) override {}
  void makeCurrent(int ordinal, RawHandle) override { check(t_.hipSetDevice(ordinal), "hipSetDevice"); }

  void synchronize() override { check(t_.hipDeviceSynchronize(), "hipDeviceSynchronize"); }

  uint64_t alloc(size_t bytes) override {
    void* address = nullptr;
    check(t_.hipMalloc(&address, bytes), "hipMalloc");
    return reinterpret_cast<uint64_t>(address);
  }
  void free(uint64_t address) override { check(t_.hipFree(ToPointer(address)), "hipFree"); }

  void copyHtoD(uint64_t dst, const void* src, size_t bytes) override {
    check(t_.hipMemcpyHtoD(ToPointer(dst), src, bytes), "hipMemcpyHtoD");
  }
  void copyDtoH(void* dst, uint64_t src, size_t bytes) override {
    check(t_.hipMemcpyDtoH(dst, ToPointer(src), bytes), "hipMemcpyDtoH");
  }
  void copyDtoD(uint64_t dst, uint64_t src, size_t bytes) override {
    check(t_.hipMemcpyDtoD(ToPointer(dst), ToPointer(src), bytes), "hipMemcpyDtoD");
  }
  void memset8(uint64_t dst, unsigned char value, size_t bytes) override {
    check(t_.hipMemsetD8(ToPointer(dst), value, bytes), "hipMemsetD8");
  }

  RawHandle loadModule(const void* image) override {
    // Code objects arrive compiled (hsaco): there is no JIT and so no log to capture.
    hipModule_t module = nullptr;
    check(t_.hipModuleLoadData(&module, image), "hipModuleLoadData");
    return module;
  }
  void unloadModule(RawHandle module) override {
    check(t_.hipModuleUnload(static_cast<hipModule_t>(module)), "hipModuleUnload");
  }

  RawHandle getFunction(RawHandle module, const char* name) override {
    hipFunction_t function = nullptr;
    check(t_.hipModuleGetFunction(&function, static_cast<hipModule_t>(module), name), "hipModuleGetFunction");
    return function;
  }

  FunctionAttributes functionAttributes(RawHandle handle) override {
    auto function = static_cast<hipFunction_t>(handle);
    return ReadFunctionAttributes([&](int attribute) {
      int value = 0;
      check(t_.hipFuncGetAttribute(&value, attribute, function), "hipFuncGetAttribute");
      return value;
    });
  }

  void setMaxDynamicShared(RawHandle, int) override {}
  bool needsSharedOptIn() const override { return false; }

  void launch(RawHandle function, const unsigned grid[3], const unsigned block[3], unsigned sharedBytes,
              RawHandle stream, void* args, size_t argBytes,
              bool /*programmatic: HIP has no programmatic dependent launch; a plain launch*/) override {
    // HIP copies the explicit arguments from this buffer and appends the hidden ones itself.
    void* extra[5] = {kLaunchParamBufferPointer, args, kLaunchParamBufferSize, &argBytes, kLaunchParamEnd};
    check(t_.hipModuleLaunchKernel(static_cast<hipFunction_t>(function), grid[0], grid[1], grid[2], block[0],
                                   block[1], block[2], sharedBytes, static_cast<hipStream_t>(stream), nullptr,
                                   argBytes > 0 ? extra : nullptr),
          "hipModuleLaunchKernel");
  }

  RawHandle createStream() override {
    hipStream_t stream = nullptr;
    check(t_.hipStreamCreate(&stream), "hipStreamCreate");
    return stream;
  }
  void destroyStream(RawHandle stream) override {
    check(t_.hipStreamDestroy(static_cast<hipStream_t>(stream)), "hipStreamDestroy");
  }
  void synchronizeStream(RawHandle stream) override {
    check(t_.hipStreamSynchronize(static_cast<hipStream_t>(stream)), "hipStreamSynchronize");
  }

  RawHandle createEvent() override {
    hipEvent_t event = nullptr;
    check(t_.hipEventCreate(&event), "hipEventCreate");
    return event;
  }
  void destroyEvent(RawHandle event) override {
    check(t_.hipEventDestroy(static_cast<hipEvent_t>(event)), "hipEventDestroy");
  }
  void recordEvent(RawHandle event, RawHandle stream) override {
    check(t_.hipEventRecord(static_cast<hipEvent_t>(event), static_cast<hipStream_t>(stream)), "hipEventRecord");
  }
  void synchronizeEvent(RawHandle event) override {
    check(t_.hipEventSynchronize(static_cast<hipEvent_t>(event)), "hipEventSynchronize");
  }
  float elapsedMs(RawHandle start, RawHandle end) override {
    float ms = 0.0f;
    check(t_.hipEventElapsedTime(&ms, static_cast<hipEvent_t>(start), static_cast<hipEvent_t>(end)),
          "hipEventElapsedTime");
    return ms;
  }

  const std::string& graphSymbolsMissing() const override { return graphMissing_; }
  RawHandle createCaptureStream() override {
    requireGraphs();
    hipStream_t stream = nullptr;
    check(t_.hipStreamCreateWithFlags(&stream, kStreamNonBlocking), "hipStreamCreateWithFlags");
    return stream;
  }
  void beginCapture(RawHandle stream) override {
    requireGraphs();
    check(t_.hipStreamBeginCapture(static_cast<hipStream_t>(stream), kCaptureModeThreadLocal), "hipStreamBeginCapture");
  }
  RawHandle endCapture(RawHandle stream) override {
    requireGraphs();
    hipGraph_t graph = nullptr;
    check(t_.hipStreamEndCapture(static_cast<hipStream_t>(stream), &graph), "hipStreamEndCapture");
    return graph;
  }
  RawHandle instantiateGraph(RawHandle graph) override {
    requireGraphs();
    hipGraphExec_t exec = nullptr;
    check(t_.hipGraphInstantiateWithFlags(&exec, static_cast<hipGraph_t>(graph), 0), "hipGraphInstantiateWithFlags");
    return exec;
  }
  void destroyGraph(RawHandle graph) override {
    requireGraphs();
    check(t_.hipGraphDestroy(static_cast<hipGraph_t>(graph)), "hipGraphDestroy");
  }
  void launchGraph(RawHandle exec, RawHandle stream) override {
    requireGraphs();
    check(t_.hipGraphLaunch(static_cast<hipGraphExec_t>(exec), static_cast<hipStream_t>(stream)), "hipGraphLaunch");
  }
  void destroyGraphExec(RawHandle exec) override {
    requireGraphs();
    check(t_.hipGraphExecDestroy(static_cast<hipGraphExec_t>(exec)), "hipGraphExecDestroy");
  }

 private:
  static void* ToPointer(uint64_t address) { return reinterpret_cast<void*>(static_cast<uintptr_t>(address)); }

  void check(hipError_t result, const char* api) {
    if (result == hipSuccess) return;
    const char* name = t_.hipGetErrorName(result);
    const char* text = t_.hipGetErrorString(result);
    throw ApiError("hip", api, result, name != nullptr ? name : "hipErrorUnrecognized",
                   text != nullptr ? text : "no description from the runtime");
  }

  void requireGraphs() const {
    if (!graphMissing_.empty()) throw MissingSymbolsError("hip", "graph capture", graphMissing_);
  }

  void ensureInit() {
    if (initialized_) return;
    check(t_.hipInit(0), "hipInit");
    initialized_ = true;
  }

  void* library_;
  SymbolTable t_;
  std::string graphMissing_;  // graph symbols the runtime lacks (empty: all there)
  bool initialized_ = false;
};

}  // namespace

std::unique_ptr<Backend> LoadHipBackend(const std::vector<std::string>& candidates,
                                        std::vector<LoadAttempt>& attempts) {
  auto bind = [](void* library, std::string& missing) -> std::unique_ptr<Backend> {
    SymbolTable table;
    table.hipGetErrorString =
        reinterpret_cast<decltype(table.hipGetErrorString)>(FindSymbol(library, "hipGetErrorString", nullptr, missing));
    table.hipGetErrorName =
        reinterpret_cast<decltype(table.hipGetErrorName)>(FindSymbol(library, "hipGetErrorName", nullptr, missing));
#define ROCKE_HIP_RESOLVE(name, params) \
  table.name = reinterpret_cast<decltype(table.name)>(FindSymbol(library, #name, nullptr, missing));
    ROCKE_HIP_SYMBOLS(ROCKE_HIP_RESOLVE)
#undef ROCKE_HIP_RESOLVE
    if (!missing.empty()) return nullptr;
    std::string graphMissing;  // optional: a runtime without them still serves everything else
#define ROCKE_HIP_RESOLVE_OPTIONAL(name, params) \
  table.name = reinterpret_cast<decltype(table.name)>(FindSymbol(library, #name, nullptr, graphMissing));
    ROCKE_HIP_GRAPH_SYMBOLS(ROCKE_HIP_RESOLVE_OPTIONAL)
#undef ROCKE_HIP_RESOLVE_OPTIONAL
    return std::make_unique<HipBackend>(library, table, std::move(graphMissing));
  };
  return LoadFirstLibrary(candidates, attempts, bind, " (HIP 6 or newer is required)");
}

}  // namespace rocke
