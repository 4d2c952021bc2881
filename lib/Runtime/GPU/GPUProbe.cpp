//===- GPUProbe.cpp - is the GPU runtime usable here? ---------------------===//
//
// LstmOptGPUProbe --probe: loads libLstmOptGPURuntime.so (which needs the
// CUDA driver, libcuda.so.1) and asks it for a device. Exit 0 if one is
// usable, 1 otherwise, with the reason on stderr; never crashes without a
// driver.
//
//===----------------------------------------------------------------------===//

#include <dlfcn.h>

#include <cstdio>
#include <cstring>

int main(int argc, char **argv) {
  if (argc != 2 || std::strcmp(argv[1], "--probe") != 0) {
    std::fprintf(stderr, "usage: %s --probe\n", argv[0]);
    return 2;
  }
  void *lib = dlopen(LSTM_OPT_GPU_RUNTIME, RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "no CUDA device: cannot load the GPU runtime: %s\n",
                 dlerror());
    return 1;
  }
  auto available =
      reinterpret_cast<int (*)()>(dlsym(lib, "lstm_opt_gpu_device_available"));
  auto lastError =
      reinterpret_cast<const char *(*)()>(dlsym(lib, "lstm_opt_gpu_last_error"));
  if (!available || !lastError) {
    std::fprintf(stderr, "the GPU runtime lacks its probe entry points\n");
    return 1;
  }
  if (!available()) {
    std::fprintf(stderr, "no CUDA device: %s\n", lastError());
    return 1;
  }
  std::printf("CUDA device available\n");
  return 0;
}
