// One interface over the HIP runtime and the CUDA driver. Each backend owns a symbol table
// resolved with dlopen/dlsym; nothing here links a GPU library.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace rocke {

// A runtime call that returned an error code. `log` carries a JIT log when there is one.
struct ApiError : std::runtime_error {
  ApiError(std::string backend, std::string api, int code, std::string name, std::string text,
           std::string log = {})
      : std::runtime_error(api + " failed: " + name + " (" + text + ")"),
        backend(std::move(backend)), api(std::move(api)), code(code), name(std::move(name)),
        text(std::move(text)), log(std::move(log)) {}
  std::string backend, api;
  int code;
  std::string name, text, log;
};

// A feature whose entry points the loaded library does not export (graph capture on an old
// driver). `symbols` lists the absent names, comma-separated.
struct MissingSymbolsError : std::runtime_error {
  MissingSymbolsError(std::string backend, std::string feature, std::string symbols)
      : std::runtime_error(feature + " is not available: the loaded " + backend + " library does not export " + symbols),
        backend(std::move(backend)), symbols(std::move(symbols)) {}
  std::string backend, symbols;
};

struct LoadAttempt {
  std::string path;
  std::string error;  // empty when this path loaded
};

struct DeviceInfo {
  std::string name, arch, archFull;
  int computeUnits = 0, warpSize = 0, maxThreadsPerBlock = 0;
  int maxBlockDim[3] = {0, 0, 0}, maxGridDim[3] = {0, 0, 0};
  uint64_t totalMemory = 0, maxSharedPerBlock = 0, maxSharedPerBlockOptin = 0;
  int driverVersion = 0;
};

struct FunctionAttributes {
  int maxThreadsPerBlock = 0, staticSharedBytes = 0, constBytes = 0, localBytes = 0, numRegs = 0;
};

// CUfunction_attribute values, which hipFunction_attribute copies, so one list serves both
// backends (cuda_abi_check.cc holds them against cuda.h).
constexpr int kFuncMaxThreadsPerBlock = 0;
constexpr int kFuncSharedSizeBytes = 1;
constexpr int kFuncConstSizeBytes = 2;
constexpr int kFuncLocalSizeBytes = 3;
constexpr int kFuncNumRegs = 4;

// `get(attribute)` asks the runtime for one of the values above.
template <typename Get>
FunctionAttributes ReadFunctionAttributes(Get&& get) {
  FunctionAttributes a;
  a.maxThreadsPerBlock = get(kFuncMaxThreadsPerBlock);
  a.staticSharedBytes = get(kFuncSharedSizeBytes);
  a.constBytes = get(kFuncConstSizeBytes);
  a.localBytes = get(kFuncLocalSizeBytes);
  a.numRegs = get(kFuncNumRegs);
  return a;
}

// Opaque runtime handles (context, module, function, stream, event).
using RawHandle = void*;

class Backend {
 public:
  virtual ~Backend() = default;
  virtual const char* name() const = 0;
  virtual int deviceCount() = 0;
  virtual DeviceInfo deviceInfo(int ordinal) = 0;
  // Makes `ordinal` usable by this thread; returns the context to pass to makeCurrent.
  virtual RawHandle openContext(int ordinal) = 0;
  virtual void closeContext(int ordinal, RawHandle ctx) = 0;
  virtual void makeCurrent(int ordinal, RawHandle ctx) = 0;
  virtual void synchronize() = 0;
  virtual uint64_t alloc(size_t bytes) = 0;
  virtual void free(uint64_t address) = 0;
  virtual void copyHtoD(uint64_t dst, const void* src, size_t bytes) = 0;
  virtual void copyDtoH(void* dst, uint64_t src, size_t bytes) = 0;
  virtual void copyDtoD(uint64_t dst, uint64_t src, size_t bytes) = 0;
  virtual void memset8(uint64_t dst, unsigned char value, size_t bytes) = 0;
  // `image` must be followed by a NUL byte (PTX is text).
  virtual RawHandle loadModule(const void* image) = 0;
  virtual void unloadModule(RawHandle module) = 0;
  virtual RawHandle getFunction(RawHandle module, const char* name) = 0;
  virtual FunctionAttributes functionAttributes(RawHandle function) = 0;
  // Raises the function's dynamic shared-memory ceiling (CUDA opt-in above 48 KiB).
  virtual void setMaxDynamicShared(RawHandle function, int bytes) = 0;
  virtual bool needsSharedOptIn() const = 0;
  // `programmatic`: CUDA programmatic stream serialization (the kernel may start before the one
  // ahead of it in the stream finishes; it waits with griddepcontrol). Where the runtime has no
  // such launch (HIP, pre-12 CUDA drivers) the launch is a plain one, which is always correct.
  virtual void launch(RawHandle function, const unsigned grid[3], const unsigned block[3],
                      unsigned sharedBytes, RawHandle stream, void* args, size_t argBytes,
                      bool programmatic) = 0;
  virtual RawHandle createStream() = 0;
  virtual void destroyStream(RawHandle stream) = 0;
  virtual void synchronizeStream(RawHandle stream) = 0;
  virtual RawHandle createEvent() = 0;
  virtual void destroyEvent(RawHandle event) = 0;
  virtual void recordEvent(RawHandle event, RawHandle stream) = 0;
  virtual void synchronizeEvent(RawHandle event) = 0;
  virtual float elapsedMs(RawHandle start, RawHandle end) = 0;

  // Graph capture and replay. Their symbols are optional: graphSymbolsMissing() is empty when
  // the library exports them all, else the absent names, and then every graph call below throws
  // MissingSymbolsError.
  virtual const std::string& graphSymbolsMissing() const = 0;
  // A stream that never synchronizes with the legacy default stream: capture cannot run on the
  // default stream, and a blocking capture stream would make default-stream work elsewhere fail.
  virtual RawHandle createCaptureStream() = 0;
  // Thread-local capture mode: only this thread's capture-unsafe calls invalidate it.
  virtual void beginCapture(RawHandle stream) = 0;
  // Ends the capture (also when it was invalidated: the stream then no longer captures).
  virtual RawHandle endCapture(RawHandle stream) = 0;
  virtual RawHandle instantiateGraph(RawHandle graph) = 0;
  virtual void destroyGraph(RawHandle graph) = 0;
  virtual void launchGraph(RawHandle exec, RawHandle stream) = 0;
  virtual void destroyGraphExec(RawHandle exec) = 0;
};

// Tries each candidate path in order; returns the backend built on the first library that
// opens and exports every symbol, or nullptr. Every attempt is appended to `attempts`.
// `bind` resolves a backend's symbols from an open library and returns the backend, or
// nullptr after appending the absent names to `missing`; `missingNote` ends that attempt's error.
using BindBackend = std::function<std::unique_ptr<Backend>(void* library, std::string& missing)>;
std::unique_ptr<Backend> LoadFirstLibrary(const std::vector<std::string>& candidates,
                                          std::vector<LoadAttempt>& attempts, const BindBackend& bind,
                                          const std::string& missingNote = {});

std::unique_ptr<Backend> LoadCudaBackend(const std::vector<std::string>& candidates,
                                         std::vector<LoadAttempt>& attempts);
std::unique_ptr<Backend> LoadHipBackend(const std::vector<std::string>& candidates,
                                        std::vector<LoadAttempt>& attempts);

// dlopen helpers shared by both backends.
void* OpenLibrary(const std::string& path, std::string& error);
void CloseLibrary(void* handle);
// Returns `name` (or, when absent, `fallback` if not null) from the library; when neither is
// exported, appends the name(s) to `missing` and returns nullptr.
void* FindSymbol(void* handle, const char* name, const char* fallback, std::string& missing);

// "a, b, c, d, e, f, g" -> "a, b, c, d and 3 more symbols": keeps the no-runtime message readable.
std::string SummarizeMissing(const std::string& missing);

}  // namespace rocke
