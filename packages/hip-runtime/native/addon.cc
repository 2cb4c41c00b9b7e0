// Node-API surface of @rocke/hip-runtime. Every GPU object crosses into JavaScript as an
// External that owns a shared reference to its native state; the External's finalizer is the
// backstop that frees what JavaScript forgot to free. Misuse that reaches this layer (a freed
// buffer, a closed device, a handle of the wrong kind) throws; it never dereferences freed state.
#include <napi.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "backend.h"

namespace rocke {
namespace {

// ---------------------------------------------------------------------------------------------
// Backends: loaded at most once per process, then kept (unloading a GPU runtime is not safe).

struct BackendSlot {
  std::unique_ptr<Backend> backend;
  std::string path;
  std::vector<LoadAttempt> attempts;
};

std::mutex gBackendMutex;
BackendSlot gCuda;
BackendSlot gHip;

// ---------------------------------------------------------------------------------------------
// Errors.

Napi::Error UsageError(Napi::Env env, const std::string& message) {
  Napi::Error error = Napi::Error::New(env, message);
  error.Set("rockeUsage", Napi::Boolean::New(env, true));
  return error;
}

Napi::Error FromApiError(Napi::Env env, const ApiError& e) {
  Napi::Error error = Napi::Error::New(env, e.what());
  error.Set("rockeBackend", Napi::String::New(env, e.backend));
  error.Set("rockeApi", Napi::String::New(env, e.api));
  error.Set("rockeCode", Napi::Number::New(env, e.code));
  error.Set("rockeErrorName", Napi::String::New(env, e.name));
  error.Set("rockeRuntimeMessage", Napi::String::New(env, e.text));
  if (!e.log.empty()) error.Set("rockeLog", Napi::String::New(env, e.log));
  return error;
}

// Runs `body`, turning native exceptions into JavaScript errors.
template <typename Body>
Napi::Value Guard(const Napi::CallbackInfo& info, Body&& body) {
  Napi::Env env = info.Env();
  try {
    return body(env);
  } catch (const Napi::Error&) {
    throw;
  } catch (const ApiError& e) {
    throw FromApiError(env, e);
  } catch (const MissingSymbolsError& e) {
    Napi::Error error = Napi::Error::New(env, e.what());
    error.Set("rockeBackend", Napi::String::New(env, e.backend));
    error.Set("rockeMissingSymbols", Napi::String::New(env, e.symbols));
    throw error;
  } catch (const std::bad_alloc&) {
    throw Napi::Error::New(env, "out of host memory");
  } catch (const std::exception& e) {
    throw Napi::Error::New(env, e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Native state behind the handles.

struct Handle;

struct DeviceState {
  DeviceState(Backend* b, int o, RawHandle c) : backend(b), ordinal(o), context(c) {}
  ~DeviceState() {
    if (closed) return;
    try {
      backend->closeContext(ordinal, context);
    } catch (...) {
    }
  }
  void makeCurrent() { backend->makeCurrent(ordinal, context); }

  Backend* backend;
  int ordinal;
  RawHandle context;
  bool closed = false;
  std::unordered_set<Handle*> live;  // runtime objects not yet released
  // While a graph capture runs: the stream it captures, where default-stream launches go.
  RawHandle captureStream = nullptr;
};

enum class Kind : uint32_t { Device = 1, Buffer, Module, Function, Stream, Event, Graph };

const char* KindName(Kind kind) {
  switch (kind) {
    case Kind::Device: return "device";
    case Kind::Buffer: return "buffer";
    case Kind::Module: return "module";
    case Kind::Function: return "function";
    case Kind::Stream: return "stream";
    case Kind::Event: return "event";
    case Kind::Graph: return "graph";
  }
  return "handle";
}

// How a released object of `kind` is described ("the buffer was freed").
const char* ReleasedText(Kind kind) {
  switch (kind) {
    case Kind::Buffer: return "was freed";
    case Kind::Module: return "was unloaded";
    case Kind::Function: return "belongs to an unloaded module";
    case Kind::Stream:
    case Kind::Event:
    case Kind::Graph: return "was destroyed";
    case Kind::Device: break;  // devices close; they are never released
  }
  return "was released";
}

// A runtime object owned by a device. release() frees it once; derived destructors call
// releaseQuietly() so a garbage-collected handle frees its object too.
struct Handle {
  Handle(std::shared_ptr<DeviceState> d, Kind k) : device(std::move(d)), kind(k) { device->live.insert(this); }
  virtual ~Handle() = default;
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  void release() {
    if (released) return;
    released = true;
    device->live.erase(this);
    if (!device->closed) {
      device->makeCurrent();
      destroy();
    }
  }
  void releaseQuietly() noexcept {
    try {
      release();
    } catch (...) {
    }
  }

  std::shared_ptr<DeviceState> device;
  Kind kind;
  bool released = false;

 protected:
  virtual void destroy() = 0;
};

struct BufferHandle final : Handle {
  BufferHandle(std::shared_ptr<DeviceState> d, uint64_t a, size_t n) : Handle(std::move(d), Kind::Buffer), address(a), bytes(n) {}
  ~BufferHandle() override { releaseQuietly(); }
  void destroy() override { device->backend->free(address); }
  uint64_t address;
  size_t bytes;
};

struct ModuleHandle final : Handle {
  ModuleHandle(std::shared_ptr<DeviceState> d, RawHandle m) : Handle(std::move(d), Kind::Module), module(m) {}
  ~ModuleHandle() override { releaseQuietly(); }
  void destroy() override { device->backend->unloadModule(module); }
  RawHandle module;
};

// A kernel inside a module: valid while the module is loaded; keeps the module alive.
struct FunctionHandle final : Handle {
  FunctionHandle(std::shared_ptr<DeviceState> d, std::shared_ptr<ModuleHandle> m, RawHandle f, FunctionAttributes a)
      : Handle(std::move(d), Kind::Function), module(std::move(m)), function(f), attributes(a) {}
  ~FunctionHandle() override { releaseQuietly(); }
  void destroy() override {}
  std::shared_ptr<ModuleHandle> module;
  RawHandle function;
  FunctionAttributes attributes;
  unsigned optedInShared = 0;  // dynamic shared bytes already allowed through the opt-in
};

struct StreamHandle final : Handle {
  StreamHandle(std::shared_ptr<DeviceState> d, RawHandle s) : Handle(std::move(d), Kind::Stream), stream(s) {}
  ~StreamHandle() override { releaseQuietly(); }
  void destroy() override { device->backend->destroyStream(stream); }
  RawHandle stream;
};

struct EventHandle final : Handle {
  EventHandle(std::shared_ptr<DeviceState> d, RawHandle e) : Handle(std::move(d), Kind::Event), event(e) {}
  ~EventHandle() override { releaseQuietly(); }
  void destroy() override { device->backend->destroyEvent(event); }
  RawHandle event;
};

// An instantiated graph. The captured graph it came from is destroyed right after
// instantiation (the executable does not need it), so this is the only runtime object.
struct GraphHandle final : Handle {
  GraphHandle(std::shared_ptr<DeviceState> d, RawHandle e) : Handle(std::move(d), Kind::Graph), exec(e) {}
  ~GraphHandle() override { releaseQuietly(); }
  void destroy() override { device->backend->destroyGraphExec(exec); }
  RawHandle exec;
};

// Ends a capture in progress and throws away what it captured; never throws (it runs after
// the error that made the capture worthless, which is the one to report).
void DiscardCapture(DeviceState& device) noexcept {
  RawHandle stream = device.captureStream;
  if (stream == nullptr) return;
  device.captureStream = nullptr;
  try {
    device.makeCurrent();
    RawHandle graph = device.backend->endCapture(stream);
    if (graph != nullptr) device.backend->destroyGraph(graph);
  } catch (...) {
  }
  try {
    device.backend->destroyStream(stream);
  } catch (...) {
  }
}

// Releases every object of the device (events and streams first, memory last), then the
// context. The first runtime error is rethrown after everything was attempted.
void CloseDevice(DeviceState& device) {
  if (device.closed) return;
  DiscardCapture(device);
  auto rank = [](Kind k) {
    switch (k) {
      case Kind::Event:
      case Kind::Graph: return 0;
      case Kind::Stream: return 1;
      case Kind::Function: return 2;
      case Kind::Module: return 3;
      default: return 4;
    }
  };
  std::vector<Handle*> order(device.live.begin(), device.live.end());
  std::stable_sort(order.begin(), order.end(), [&](Handle* a, Handle* b) { return rank(a->kind) < rank(b->kind); });
  std::unique_ptr<ApiError> first;
  for (Handle* handle : order) {
    try {
      handle->release();
    } catch (const ApiError& e) {
      if (!first) first = std::make_unique<ApiError>(e);
    }
  }
  device.closed = true;
  try {
    device.backend->closeContext(device.ordinal, device.context);
  } catch (const ApiError& e) {
    if (!first) first = std::make_unique<ApiError>(e);
  }
  if (first) throw *first;
}

// ---------------------------------------------------------------------------------------------
// Handles as Externals.

constexpr uint32_t kMagic = 0x524b4854;  // "RKHT": tells our Externals from foreign ones

struct Ref {
  uint32_t magic = kMagic;
  Kind kind;
  std::shared_ptr<DeviceState> device;  // Kind::Device
  std::shared_ptr<Handle> handle;       // every other kind
};

Napi::Value Wrap(Napi::Env env, Ref* ref) {
  return Napi::External<Ref>::New(env, ref, [](Napi::Env, Ref* r) {
    r->magic = 0;
    delete r;  // drops the shared reference; the last one frees the runtime object
  });
}

// Wraps a runtime object; the Ref takes its kind from the handle.
Napi::Value WrapHandle(Napi::Env env, std::shared_ptr<Handle> handle) {
  auto ref = std::make_unique<Ref>();
  ref->kind = handle->kind;
  ref->handle = std::move(handle);
  return Wrap(env, ref.release());
}

Ref& UnwrapRef(Napi::Env env, const Napi::Value& value, Kind kind, const char* what) {
  if (!value.IsExternal()) throw Napi::TypeError::New(env, std::string(what) + " must be a native " + KindName(kind) + " handle");
  Ref* ref = value.As<Napi::External<Ref>>().Data();
  if (ref == nullptr || ref->magic != kMagic || ref->kind != kind) {
    throw Napi::TypeError::New(env, std::string(what) + " is not a native " + KindName(kind) + " handle");
  }
  return *ref;
}

DeviceState& OpenDeviceOf(Napi::Env env, const Napi::Value& value, const char* what) {
  DeviceState& device = *UnwrapRef(env, value, Kind::Device, what).device;
  if (device.closed) throw UsageError(env, "the device is closed");
  return device;
}

template <typename T>
T& LiveHandle(Napi::Env env, const Napi::Value& value, Kind kind, const char* what) {
  Handle& handle = *UnwrapRef(env, value, kind, what).handle;
  if (handle.device->closed) throw UsageError(env, std::string("the device of this ") + KindName(kind) + " is closed");
  if (handle.released) throw UsageError(env, std::string("the ") + KindName(kind) + " " + ReleasedText(kind));
  return static_cast<T&>(handle);
}

FunctionHandle& LiveFunction(Napi::Env env, const Napi::Value& value) {
  FunctionHandle& function = LiveHandle<FunctionHandle>(env, value, Kind::Function, "function");
  if (function.module->released) throw UsageError(env, "the function belongs to an unloaded module");
  return function;
}

// ---------------------------------------------------------------------------------------------
// Argument helpers: exact types and ranges, a TypeError/RangeError otherwise.

double NumberArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (i >= info.Length() || !info[i].IsNumber()) throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a number");
  return info[i].As<Napi::Number>().DoubleValue();
}

// A non-negative integer no larger than `max`.
uint64_t IntegerArg(const Napi::CallbackInfo& info, size_t i, const char* what, double max) {
  double value = NumberArg(info, i, what);
  if (!(value >= 0) || value > max || std::floor(value) != value) {
    throw Napi::RangeError::New(info.Env(), std::string(what) + " must be an integer in [0, " +
                                                std::to_string(static_cast<uint64_t>(max)) + "]");
  }
  return static_cast<uint64_t>(value);
}

constexpr double kMaxSafe = 9007199254740991.0;  // 2^53 - 1

std::string StringArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (i >= info.Length() || !info[i].IsString()) throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a string");
  return info[i].As<Napi::String>().Utf8Value();
}

struct Bytes {
  uint8_t* data;
  size_t length;
};

Bytes BytesArg(const Napi::CallbackInfo& info, size_t i, const char* what) {
  if (i >= info.Length() || !info[i].IsTypedArray()) throw Napi::TypeError::New(info.Env(), std::string(what) + " must be a typed array");
  Napi::TypedArray array = info[i].As<Napi::TypedArray>();
  uint8_t* base = static_cast<uint8_t*>(array.ArrayBuffer().Data());
  size_t length = array.ByteLength();
  if (base == nullptr && length > 0) throw Napi::TypeError::New(info.Env(), std::string(what) + " has no backing store");
  return {base == nullptr ? nullptr : base + array.ByteOffset(), length};
}

BackendSlot& SlotArg(const Napi::CallbackInfo& info, size_t i) {
  std::string name = StringArg(info, i, "backend");
  if (name == "cuda") return gCuda;
  if (name == "hip") return gHip;
  throw Napi::TypeError::New(info.Env(), "backend must be 'hip' or 'cuda', got '" + name + "'");
}

Backend& LoadedBackend(const Napi::CallbackInfo& info, size_t i) {
  BackendSlot& slot = SlotArg(info, i);
  std::lock_guard<std::mutex> lock(gBackendMutex);
  if (!slot.backend) throw UsageError(info.Env(), "the backend is not loaded; call load() first");
  return *slot.backend;
}

void CheckRange(Napi::Env env, uint64_t offset, uint64_t length, uint64_t size, const char* what) {
  if (offset > size || length > size - offset) {
    throw Napi::RangeError::New(env, std::string(what) + ": bytes [" + std::to_string(offset) + ", " +
                                         std::to_string(offset + length) + ") fall outside the " +
                                         std::to_string(size) + "-byte buffer");
  }
}

// Reads an optional stream argument (null/undefined: the default stream) of `device`.
void OptionalStream(Napi::Env env, const Napi::CallbackInfo& info, size_t i, DeviceState& device, RawHandle& out) {
  out = nullptr;
  if (i >= info.Length() || info[i].IsNull() || info[i].IsUndefined()) return;
  StreamHandle& stream = LiveHandle<StreamHandle>(env, info[i], Kind::Stream, "stream");
  if (stream.device.get() != &device) throw UsageError(env, "the stream belongs to another device");
  out = stream.stream;
}

// ---------------------------------------------------------------------------------------------
// Exported functions.

// load(backend, candidates: string[]) -> { loaded, path, attempts: [{ path, error }] }
Napi::Value Load(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    BackendSlot& slot = SlotArg(info, 0);
    if (info.Length() < 2 || !info[1].IsArray()) throw Napi::TypeError::New(env, "candidates must be an array of strings");
    Napi::Array list = info[1].As<Napi::Array>();
    std::vector<std::string> candidates;
    for (uint32_t i = 0; i < list.Length(); ++i) {
      Napi::Value item = list.Get(i);
      if (!item.IsString()) throw Napi::TypeError::New(env, "candidates must be an array of strings");
      candidates.push_back(item.As<Napi::String>().Utf8Value());
    }
    std::lock_guard<std::mutex> lock(gBackendMutex);
    std::vector<LoadAttempt> attempts;
    if (slot.backend) {
      attempts = slot.attempts;
    } else {
      std::unique_ptr<Backend> backend =
          &slot == &gCuda ? LoadCudaBackend(candidates, attempts) : LoadHipBackend(candidates, attempts);
      if (backend) {
        slot.backend = std::move(backend);
        slot.path = attempts.back().path;
        slot.attempts = attempts;
      }
    }
    Napi::Object result = Napi::Object::New(env);
    result.Set("loaded", Napi::Boolean::New(env, static_cast<bool>(slot.backend)));
    if (slot.backend) result.Set("path", Napi::String::New(env, slot.path));
    Napi::Array tried = Napi::Array::New(env, attempts.size());
    for (size_t i = 0; i < attempts.size(); ++i) {
      Napi::Object attempt = Napi::Object::New(env);
      attempt.Set("path", Napi::String::New(env, attempts[i].path));
      attempt.Set("error", Napi::String::New(env, attempts[i].error));
      tried.Set(static_cast<uint32_t>(i), attempt);
    }
    result.Set("attempts", tried);
    return result;
  });
}

Napi::Value DeviceCount(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value { return Napi::Number::New(env, LoadedBackend(info, 0).deviceCount()); });
}

Napi::Array IntTriple(Napi::Env env, const int values[3]) {
  Napi::Array array = Napi::Array::New(env, 3);
  for (uint32_t i = 0; i < 3; ++i) array.Set(i, Napi::Number::New(env, values[i]));
  return array;
}

Napi::Value DeviceInfoOf(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    Backend& backend = LoadedBackend(info, 0);
    int ordinal = static_cast<int>(IntegerArg(info, 1, "index", 2147483647.0));
    DeviceInfo d = backend.deviceInfo(ordinal);
    Napi::Object o = Napi::Object::New(env);
    o.Set("backend", Napi::String::New(env, backend.name()));
    o.Set("index", Napi::Number::New(env, ordinal));
    o.Set("name", Napi::String::New(env, d.name));
    o.Set("arch", Napi::String::New(env, d.arch));
    o.Set("archFull", Napi::String::New(env, d.archFull));
    o.Set("computeUnits", Napi::Number::New(env, d.computeUnits));
    o.Set("totalMemory", Napi::Number::New(env, static_cast<double>(d.totalMemory)));
    o.Set("warpSize", Napi::Number::New(env, d.warpSize));
    o.Set("maxThreadsPerBlock", Napi::Number::New(env, d.maxThreadsPerBlock));
    o.Set("maxBlockDim", IntTriple(env, d.maxBlockDim));
    o.Set("maxGridDim", IntTriple(env, d.maxGridDim));
    o.Set("maxSharedPerBlock", Napi::Number::New(env, static_cast<double>(d.maxSharedPerBlock)));
    o.Set("maxSharedPerBlockOptin", Napi::Number::New(env, static_cast<double>(d.maxSharedPerBlockOptin)));
    o.Set("driverVersion", Napi::Number::New(env, d.driverVersion));
    return o;
  });
}

Napi::Value OpenDevice(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    Backend& backend = LoadedBackend(info, 0);
    int ordinal = static_cast<int>(IntegerArg(info, 1, "index", 2147483647.0));
    RawHandle context = backend.openContext(ordinal);
    auto ref = std::make_unique<Ref>();
    ref->kind = Kind::Device;
    ref->device = std::make_shared<DeviceState>(&backend, ordinal, context);
    return Wrap(env, ref.release());
  });
}

Napi::Value CloseDeviceFn(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    CloseDevice(*UnwrapRef(env, info[0], Kind::Device, "device").device);  // closing twice is a no-op
    return env.Undefined();
  });
}

Napi::Value Synchronize(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    DeviceState& device = OpenDeviceOf(env, info[0], "device");
    device.makeCurrent();
    device.backend->synchronize();
    return env.Undefined();
  });
}

// alloc(device, bytes) -> { handle, address: bigint }
Napi::Value Alloc(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    Ref& deviceRef = UnwrapRef(env, info[0], Kind::Device, "device");
    DeviceState& device = OpenDeviceOf(env, info[0], "device");
    uint64_t bytes = IntegerArg(info, 1, "bytes", kMaxSafe);
    if (bytes == 0) throw Napi::RangeError::New(env, "bytes must be positive");
    device.makeCurrent();
    uint64_t address = device.backend->alloc(bytes);
    Napi::Object result = Napi::Object::New(env);
    result.Set("handle", WrapHandle(env, std::make_shared<BufferHandle>(deviceRef.device, address, bytes)));
    result.Set("address", Napi::BigInt::New(env, address));
    return result;
  });
}

// free / unloadModule / destroyStream / destroyEvent (handle): releasing twice, or after the
// device closed, is a no-op.
template <Kind kKind>
Napi::Value Release(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    UnwrapRef(env, info[0], kKind, KindName(kKind)).handle->release();
    return env.Undefined();
  });
}

// copyToDevice(buffer, offset, src)
Napi::Value CopyToDevice(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    BufferHandle& buffer = LiveHandle<BufferHandle>(env, info[0], Kind::Buffer, "buffer");
    uint64_t offset = IntegerArg(info, 1, "offset", kMaxSafe);
    Bytes src = BytesArg(info, 2, "source");
    CheckRange(env, offset, src.length, buffer.bytes, "copyToDevice");
    if (src.length == 0) return env.Undefined();
    buffer.device->makeCurrent();
    buffer.device->backend->copyHtoD(buffer.address + offset, src.data, src.length);
    return env.Undefined();
  });
}

// copyFromDevice(buffer, offset, dst)
Napi::Value CopyFromDevice(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    BufferHandle& buffer = LiveHandle<BufferHandle>(env, info[0], Kind::Buffer, "buffer");
    uint64_t offset = IntegerArg(info, 1, "offset", kMaxSafe);
    Bytes dst = BytesArg(info, 2, "destination");
    CheckRange(env, offset, dst.length, buffer.bytes, "copyFromDevice");
    if (dst.length == 0) return env.Undefined();
    buffer.device->makeCurrent();
    buffer.device->backend->copyDtoH(dst.data, buffer.address + offset, dst.length);
    return env.Undefined();
  });
}

// copyDeviceToDevice(dst, dstOffset, src, srcOffset, bytes)
Napi::Value CopyDeviceToDevice(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    BufferHandle& dst = LiveHandle<BufferHandle>(env, info[0], Kind::Buffer, "destination");
    uint64_t dstOffset = IntegerArg(info, 1, "dstOffset", kMaxSafe);
    BufferHandle& src = LiveHandle<BufferHandle>(env, info[2], Kind::Buffer, "source");
    uint64_t srcOffset = IntegerArg(info, 3, "srcOffset", kMaxSafe);
    uint64_t bytes = IntegerArg(info, 4, "bytes", kMaxSafe);
    if (dst.device != src.device) throw UsageError(env, "copyDeviceToDevice: the buffers belong to different devices");
    CheckRange(env, dstOffset, bytes, dst.bytes, "copyDeviceToDevice destination");
    CheckRange(env, srcOffset, bytes, src.bytes, "copyDeviceToDevice source");
    if (bytes == 0) return env.Undefined();
    dst.device->makeCurrent();
    dst.device->backend->copyDtoD(dst.address + dstOffset, src.address + srcOffset, bytes);
    return env.Undefined();
  });
}

// memset(buffer, offset, value, bytes)
Napi::Value Memset(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    BufferHandle& buffer = LiveHandle<BufferHandle>(env, info[0], Kind::Buffer, "buffer");
    uint64_t offset = IntegerArg(info, 1, "offset", kMaxSafe);
    uint64_t value = IntegerArg(info, 2, "value", 255);
    uint64_t bytes = IntegerArg(info, 3, "bytes", kMaxSafe);
    CheckRange(env, offset, bytes, buffer.bytes, "memset");
    if (bytes == 0) return env.Undefined();
    buffer.device->makeCurrent();
    buffer.device->backend->memset8(buffer.address + offset, static_cast<unsigned char>(value), bytes);
    return env.Undefined();
  });
}

// loadModule(device, image: Uint8Array) -> module handle
Napi::Value LoadModule(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    Ref& deviceRef = UnwrapRef(env, info[0], Kind::Device, "device");
    DeviceState& device = OpenDeviceOf(env, info[0], "device");
    Bytes image = BytesArg(info, 1, "image");
    if (image.length == 0) throw Napi::RangeError::New(env, "image is empty");
    // PTX is NUL-terminated text; a trailing zero after an ELF image is harmless.
    std::vector<uint8_t> copy(image.data, image.data + image.length);
    copy.push_back(0);
    device.makeCurrent();
    RawHandle module = device.backend->loadModule(copy.data());
    return WrapHandle(env, std::make_shared<ModuleHandle>(deviceRef.device, module));
  });
}

// getFunction(module, name) -> { handle, attributes }
Napi::Value GetFunction(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    Ref& moduleRef = UnwrapRef(env, info[0], Kind::Module, "module");
    ModuleHandle& module = LiveHandle<ModuleHandle>(env, info[0], Kind::Module, "module");
    std::string name = StringArg(info, 1, "name");
    module.device->makeCurrent();
    Backend& backend = *module.device->backend;
    RawHandle function = backend.getFunction(module.module, name.c_str());
    FunctionAttributes attributes = backend.functionAttributes(function);
    auto handle = std::make_shared<FunctionHandle>(module.device, std::static_pointer_cast<ModuleHandle>(moduleRef.handle),
                                                   function, attributes);
    Napi::Object attrs = Napi::Object::New(env);
    attrs.Set("maxThreadsPerBlock", Napi::Number::New(env, attributes.maxThreadsPerBlock));
    attrs.Set("staticSharedBytes", Napi::Number::New(env, attributes.staticSharedBytes));
    attrs.Set("constBytes", Napi::Number::New(env, attributes.constBytes));
    attrs.Set("localBytes", Napi::Number::New(env, attributes.localBytes));
    attrs.Set("numRegs", Napi::Number::New(env, attributes.numRegs));
    Napi::Object result = Napi::Object::New(env);
    result.Set("handle", WrapHandle(env, std::move(handle)));
    result.Set("attributes", attrs);
    return result;
  });
}

// launch(function, gx, gy, gz, bx, by, bz, sharedBytes, stream|null, kernargs: Uint8Array, programmatic?: boolean)
Napi::Value Launch(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    FunctionHandle& function = LiveFunction(env, info[0]);
    unsigned grid[3], block[3];
    for (size_t i = 0; i < 3; ++i) {
      grid[i] = static_cast<unsigned>(IntegerArg(info, 1 + i, "grid dimension", 4294967295.0));
      block[i] = static_cast<unsigned>(IntegerArg(info, 4 + i, "block dimension", 4294967295.0));
      if (grid[i] == 0 || block[i] == 0) throw Napi::RangeError::New(env, "grid and block dimensions must be at least 1");
    }
    unsigned sharedBytes = static_cast<unsigned>(IntegerArg(info, 7, "sharedBytes", 4294967295.0));
    DeviceState& device = *function.device;
    RawHandle stream = nullptr;
    OptionalStream(env, info, 8, device, stream);
    if (device.captureStream != nullptr) {
      // Inside a capture every launch is captured: default-stream launches go to the capture stream.
      if (stream != nullptr) throw UsageError(env, "while a graph is being captured, launches take no stream (they go to the capture stream)");
      stream = device.captureStream;
    }
    Bytes args = BytesArg(info, 9, "kernargs");

    // The runtimes read the packed buffer with the parameters' natural alignment: copy it to
    // 16-byte-aligned storage (the caller's typed array may sit at any byte offset).
    alignas(16) uint8_t local[4096];
    std::vector<uint64_t> heap;
    uint8_t* packed = local;
    if (args.length > sizeof local) {
      heap.resize((args.length + 7) / 8);
      packed = reinterpret_cast<uint8_t*>(heap.data());
    }
    if (args.length > 0) std::memcpy(packed, args.data, args.length);

    device.makeCurrent();
    const uint64_t total = static_cast<uint64_t>(sharedBytes) + static_cast<uint64_t>(function.attributes.staticSharedBytes);
    if (device.backend->needsSharedOptIn() && total > 48 * 1024 && sharedBytes > function.optedInShared) {
      device.backend->setMaxDynamicShared(function.function, static_cast<int>(sharedBytes));
      function.optedInShared = sharedBytes;
    }
    const bool programmatic = info.Length() > 10 && info[10].IsBoolean() && info[10].As<Napi::Boolean>().Value();
    device.backend->launch(function.function, grid, block, sharedBytes, stream, packed, args.length, programmatic);
    return env.Undefined();
  });
}

// createStream / createEvent (device) -> handle
template <typename T, RawHandle (Backend::*kCreate)()>
Napi::Value CreateOnDevice(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    Ref& deviceRef = UnwrapRef(env, info[0], Kind::Device, "device");
    DeviceState& device = OpenDeviceOf(env, info[0], "device");
    device.makeCurrent();
    RawHandle created = (device.backend->*kCreate)();
    return WrapHandle(env, std::make_shared<T>(deviceRef.device, created));
  });
}

Napi::Value SynchronizeStream(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    StreamHandle& stream = LiveHandle<StreamHandle>(env, info[0], Kind::Stream, "stream");
    stream.device->makeCurrent();
    stream.device->backend->synchronizeStream(stream.stream);
    return env.Undefined();
  });
}

// recordEvent(event, stream|null)
Napi::Value RecordEvent(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    EventHandle& event = LiveHandle<EventHandle>(env, info[0], Kind::Event, "event");
    RawHandle stream = nullptr;
    OptionalStream(env, info, 1, *event.device, stream);
    event.device->makeCurrent();
    event.device->backend->recordEvent(event.event, stream);
    return env.Undefined();
  });
}

Napi::Value SynchronizeEvent(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    EventHandle& event = LiveHandle<EventHandle>(env, info[0], Kind::Event, "event");
    event.device->makeCurrent();
    event.device->backend->synchronizeEvent(event.event);
    return env.Undefined();
  });
}

// elapsedMs(start, end) -> milliseconds between two recorded, completed events
Napi::Value ElapsedMs(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    EventHandle& start = LiveHandle<EventHandle>(env, info[0], Kind::Event, "start");
    EventHandle& end = LiveHandle<EventHandle>(env, info[1], Kind::Event, "end");
    if (start.device != end.device) throw UsageError(env, "elapsedMs: the events belong to different devices");
    start.device->makeCurrent();
    return Napi::Number::New(env, start.device->backend->elapsedMs(start.event, end.event));
  });
}

// graphSupport(backend) -> { supported, missing: string } (missing: the absent symbols, comma-separated)
Napi::Value GraphSupport(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    const std::string& missing = LoadedBackend(info, 0).graphSymbolsMissing();
    Napi::Object result = Napi::Object::New(env);
    result.Set("supported", Napi::Boolean::New(env, missing.empty()));
    result.Set("missing", Napi::String::New(env, missing));
    return result;
  });
}

// beginCapture(device): from now until endCapture/abortCapture, the device's default-stream
// launches are captured on a fresh non-blocking stream instead of running.
Napi::Value BeginCapture(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    DeviceState& device = OpenDeviceOf(env, info[0], "device");
    if (device.captureStream != nullptr) throw UsageError(env, "a graph capture is already in progress on this device");
    device.makeCurrent();
    RawHandle stream = device.backend->createCaptureStream();
    try {
      device.backend->beginCapture(stream);
    } catch (...) {
      try {
        device.backend->destroyStream(stream);
      } catch (...) {
      }
      throw;
    }
    device.captureStream = stream;
    return env.Undefined();
  });
}

// endCapture(device) -> graph handle: ends the capture and instantiates what it captured.
Napi::Value EndCapture(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    Ref& deviceRef = UnwrapRef(env, info[0], Kind::Device, "device");
    DeviceState& device = OpenDeviceOf(env, info[0], "device");
    RawHandle stream = device.captureStream;
    if (stream == nullptr) throw UsageError(env, "no graph capture is in progress on this device");
    device.captureStream = nullptr;  // whatever happens below, the capture is over
    device.makeCurrent();
    Backend& backend = *device.backend;
    RawHandle graph = nullptr;
    try {
      graph = backend.endCapture(stream);
    } catch (...) {
      try {
        backend.destroyStream(stream);
      } catch (...) {
      }
      throw;
    }
    RawHandle exec = nullptr;
    try {
      backend.destroyStream(stream);
      exec = backend.instantiateGraph(graph);
    } catch (...) {
      try {
        backend.destroyGraph(graph);
      } catch (...) {
      }
      throw;
    }
    auto handle = std::make_shared<GraphHandle>(deviceRef.device, exec);  // owns exec from here on
    backend.destroyGraph(graph);
    return WrapHandle(env, std::move(handle));
  });
}

// abortCapture(device): ends a capture in progress, discarding it (after an error inside the
// capture). No-op without one, and on a closed device (closing discarded it).
Napi::Value AbortCapture(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    DeviceState& device = *UnwrapRef(env, info[0], Kind::Device, "device").device;
    if (!device.closed) DiscardCapture(device);
    return env.Undefined();
  });
}

// launchGraph(graph, stream|null)
Napi::Value LaunchGraph(const Napi::CallbackInfo& info) {
  return Guard(info, [&](Napi::Env env) -> Napi::Value {
    GraphHandle& graph = LiveHandle<GraphHandle>(env, info[0], Kind::Graph, "graph");
    DeviceState& device = *graph.device;
    if (device.captureStream != nullptr) throw UsageError(env, "a graph cannot be launched while a graph is being captured");
    RawHandle stream = nullptr;
    OptionalStream(env, info, 1, device, stream);
    device.makeCurrent();
    device.backend->launchGraph(graph.exec, stream);
    return env.Undefined();
  });
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("abiVersion", Napi::Number::New(env, 2));
  exports.Set("napiVersion", Napi::Number::New(env, NAPI_VERSION));
  const struct {
    const char* name;
    Napi::Function::Callback callback;
  } functions[] = {
      {"load", Load},
      {"deviceCount", DeviceCount},
      {"deviceInfo", DeviceInfoOf},
      {"openDevice", OpenDevice},
      {"closeDevice", CloseDeviceFn},
      {"synchronize", Synchronize},
      {"alloc", Alloc},
      {"free", Release<Kind::Buffer>},
      {"copyToDevice", CopyToDevice},
      {"copyFromDevice", CopyFromDevice},
      {"copyDeviceToDevice", CopyDeviceToDevice},
      {"memset", Memset},
      {"loadModule", LoadModule},
      {"unloadModule", Release<Kind::Module>},
      {"getFunction", GetFunction},
      {"launch", Launch},
      {"createStream", (CreateOnDevice<StreamHandle, &Backend::createStream>)},
      {"destroyStream", Release<Kind::Stream>},
      {"synchronizeStream", SynchronizeStream},
      {"createEvent", (CreateOnDevice<EventHandle, &Backend::createEvent>)},
      {"destroyEvent", Release<Kind::Event>},
      {"recordEvent", RecordEvent},
      {"synchronizeEvent", SynchronizeEvent},
      {"elapsedMs", ElapsedMs},
      {"graphSupport", GraphSupport},
      {"beginCapture", BeginCapture},
      {"endCapture", EndCapture},
      {"abortCapture", AbortCapture},
      {"launchGraph", LaunchGraph},
      {"destroyGraph", Release<Kind::Graph>},
  };
  for (const auto& f : functions) exports.Set(f.name, Napi::Function::New(env, f.callback, f.name));
  return exports;
}

}  // namespace
}  // namespace rocke

static Napi::Object InitAddon(Napi::Env env, Napi::Object exports) { return rocke::Init(env, exports); }

NODE_API_MODULE(rocke_hip_runtime, InitAddon)
