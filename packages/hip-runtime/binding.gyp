{
  "targets": [
    {
      "target_name": "rocke_hip_runtime",
      "sources": [
        "native/addon.cc",
        "native/loader.cc",
        "native/backend_cuda.cc",
        "native/backend_hip.cc"
      ],
      "include_dirs": ["<!(node -p \"require('node-addon-api').include_dir\")"],
      "defines": ["NAPI_VERSION=8", "NAPI_CPP_EXCEPTIONS", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags_cc!": ["-std=gnu++17", "-std=gnu++20", "-fno-exceptions"],
      "cflags_cc": ["-std=c++17", "-fvisibility=hidden", "-fvisibility-inlines-hidden", "-Wall", "-Wextra"],
      "libraries": ["-ldl"]
    }
  ]
}
