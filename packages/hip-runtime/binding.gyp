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
      "dependencies": [
        "<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except"
      ],
      "defines": ["NAPI_VERSION=8", "NODE_ADDON_API_DISABLE_DEPRECATED"],
      "cflags_cc!": ["-std=gnu++17", "-std=gnu++20"],
      "cflags_cc": ["-std=c++17", "-fvisibility=hidden", "-fvisibility-inlines-hidden", "-Wall", "-Wextra"],
      "libraries": ["-ldl"]
    }
  ]
}
