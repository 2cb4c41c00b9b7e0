// dlopen / dlsym with every failure turned into text, never an abort.
#include <dlfcn.h>

#include "backend.h"

namespace rocke {

void* OpenLibrary(const std::string& path, std::string& error) {
  dlerror();  // clear a stale message
  // RTLD_NOW: an unresolvable dependency fails here, with a message, not at first call.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* text = dlerror();
    error = text != nullptr ? text : "dlopen failed without a message";
  }
  return handle;
}

void CloseLibrary(void* handle) {
  if (handle != nullptr) dlclose(handle);
}

void* FindSymbol(void* handle, const char* name, const char* fallback, std::string& missing) {
  for (const char* candidate : {name, fallback}) {
    if (candidate == nullptr) continue;
    dlerror();
    void* symbol = dlsym(handle, candidate);
    if (dlerror() == nullptr && symbol != nullptr) return symbol;
  }
  if (!missing.empty()) missing += ", ";
  missing += name;
  if (fallback != nullptr) missing += std::string(" (or ") + fallback + ")";
  return nullptr;
}

std::unique_ptr<Backend> LoadFirstLibrary(const std::vector<std::string>& candidates,
                                          std::vector<LoadAttempt>& attempts, const BindBackend& bind,
                                          const std::string& missingNote) {
  for (const std::string& path : candidates) {
    std::string error;
    void* library = OpenLibrary(path, error);
    if (library == nullptr) {
      attempts.push_back({path, error});
      continue;
    }
    std::string missing;
    std::unique_ptr<Backend> backend = bind(library, missing);
    if (!backend) {
      attempts.push_back({path, "loaded, but it does not export " + SummarizeMissing(missing) + missingNote});
      CloseLibrary(library);
      continue;
    }
    attempts.push_back({path, ""});
    return backend;
  }
  return nullptr;
}

std::string SummarizeMissing(const std::string& missing) {
  constexpr int kShown = 4;
  size_t cut = 0;
  for (int i = 0; i < kShown; ++i) {
    cut = missing.find(", ", cut == 0 ? 0 : cut + 2);
    if (cut == std::string::npos) return missing;
  }
  size_t rest = 1;
  for (size_t at = missing.find(", ", cut + 2); at != std::string::npos; at = missing.find(", ", at + 2)) ++rest;
  return missing.substr(0, cut) + " and " + std::to_string(rest) + " more symbols";
}

}  // namespace rocke
