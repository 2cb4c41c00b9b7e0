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

}  // namespace rocke
