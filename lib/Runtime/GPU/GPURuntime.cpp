//===- GPURuntime.cpp - the mgpu* launch ABI over the CUDA driver ---------===//
//
// The functions MLIR's gpu-to-llvm lowering (and gpu.binary's
// SelectObjectAttr) call, as MLIR's own CudaRuntimeWrappers.cpp defines them
// for LLVM/MLIR 22, for the kernels convert-rnn-to-gpu generates. Every
// driver call is checked; a failure is reported on stderr with the call, the
// driver's error name and string, and the kernel's name where there is one,
// and is kept for lstm_opt_gpu_last_error().
//
// All calls run in the primary context of device 0 (mgpuSetDefaultDevice
// changes it before the first call).
//
// Device buffers and streams are cached: generated host code allocates its
// buffers and a stream on every call of a layer and frees them at its end;
// the driver's cuMemAlloc/cuMemFree/cuStreamCreate cost more than a small
// layer's kernels. A freed buffer (its stream synchronised first) goes to a
// pool keyed by its size, which the next allocation of that size takes; a
// destroyed stream, synchronised, to a pool of streams. The pools hold what
// one call of each model needs at most (per thread running it) until the
// process exits; LSTM_OPT_GPU_NO_CACHE=1 turns them off.
//
//===----------------------------------------------------------------------===//

#include <cuda.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <tuple>
#include <string>
#include <vector>

#define LSTM_OPT_GPU_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

/// The runtime's state. Never destroyed: a compiled model unloads its
/// kernels (mgpuModuleUnload) from its own destructor at exit, which may run
/// after this library's globals would have been torn down.
struct State {
  std::mutex mutex;
  std::string lastError;
  std::map<CUfunction, std::string> kernelNames;
};
State &state() {
  static State *s = new State;
  return *s;
}

/// The pools of freed device buffers (by size) and streams. Never destroyed.
struct Pools {
  std::mutex mutex;
  std::multimap<uint64_t, CUdeviceptr> buffers;
  std::map<CUdeviceptr, uint64_t> sizes; // every buffer allocated through it
  std::vector<CUstream> streams;
};
Pools &pools() {
  static Pools *p = new Pools;
  return *p;
}
bool caching() {
  static const bool on = !std::getenv("LSTM_OPT_GPU_NO_CACHE");
  return on;
}
int defaultDevice = 0;

bool check(CUresult r, const char *call, const std::string &kernel = {}) {
  if (r == CUDA_SUCCESS)
    return true;
  const char *name = nullptr, *text = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  std::string msg = std::string("lstm-opt GPU runtime: ") + call + " failed: " +
                    (name ? std::string(name)
                          : "CUresult " + std::to_string(int(r))) +
                    " (" + (text ? text : "no driver") + ")";
  if (!kernel.empty())
    msg += " [kernel '" + kernel + "']";
  fprintf(stderr, "%s\n", msg.c_str());
  std::lock_guard<std::mutex> lock(state().mutex);
  state().lastError = msg;
  return false;
}

#define CHECK(expr, ...) check((expr), #expr, ##__VA_ARGS__)

/// Makes the primary context of the default device current for a scope.
class ScopedContext {
public:
  ScopedContext() {
    static CUcontext context = [] {
      CUcontext ctx = nullptr;
      CUdevice device;
      if (CHECK(cuInit(0)) && CHECK(cuDeviceGet(&device, defaultDevice)))
        CHECK(cuDevicePrimaryCtxRetain(&ctx, device));
      return ctx;
    }();
    ok = context && CHECK(cuCtxPushCurrent(context));
  }
  ~ScopedContext() {
    if (ok)
      CHECK(cuCtxPopCurrent(nullptr));
  }
  bool ok = false;
};

std::string nameOf(CUfunction f) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto it = state().kernelNames.find(f);
  return it == state().kernelNames.end() ? std::string("?") : it->second;
}

} // namespace

/// 1 if the driver loads and a CUDA device is usable, else 0 (with the
/// reason in lstm_opt_gpu_last_error()).
LSTM_OPT_GPU_EXPORT int lstm_opt_gpu_device_available() {
  int count = 0;
  if (!CHECK(cuInit(0)) || !CHECK(cuDeviceGetCount(&count)))
    return 0;
  if (count == 0) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().lastError = "no CUDA device";
    return 0;
  }
  return 1;
}

/// The last error reported, or "" if none.
LSTM_OPT_GPU_EXPORT const char *lstm_opt_gpu_last_error() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().lastError.c_str();
}

LSTM_OPT_GPU_EXPORT void mgpuSetDefaultDevice(int32_t device) {
  defaultDevice = device;
}

LSTM_OPT_GPU_EXPORT CUmodule mgpuModuleLoad(void *data, size_t /*size*/) {
  ScopedContext scope;
  CUmodule module = nullptr;
  if (scope.ok)
    CHECK(cuModuleLoadData(&module, data));
  return module;
}

/// PTX text (NUL-terminated), JIT-compiled by the driver. MLIR 22's
/// gpu.binary translation calls it as `mgpuModuleLoadJIT(ptr, i32 optLevel)`
/// from the module's constructor, with no size (the embedded PTX of a
/// format=isa object ends with a NUL); a size argument would be garbage.
LSTM_OPT_GPU_EXPORT CUmodule mgpuModuleLoadJIT(void *data, int optLevel) {
  ScopedContext scope;
  CUmodule module = nullptr;
  if (!scope.ok)
    return nullptr;
  char log[8192] = {0};
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL, CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {reinterpret_cast<void *>(static_cast<intptr_t>(optLevel)),
                    log, reinterpret_cast<void *>(sizeof(log))};
  if (!CHECK(cuModuleLoadDataEx(&module, data, 3, options, values)) && log[0])
    fprintf(stderr, "lstm-opt GPU runtime: PTX JIT log:\n%s\n", log);
  return module;
}

LSTM_OPT_GPU_EXPORT void mgpuModuleUnload(CUmodule module) {
  // Generated code unloads its module from a global destructor; at process
  // exit the driver may already be shut down, and the module with it.
  CUresult r = cuModuleUnload(module);
  if (r != CUDA_ERROR_DEINITIALIZED)
    check(r, "cuModuleUnload(module)");
}

LSTM_OPT_GPU_EXPORT CUfunction mgpuModuleGetFunction(CUmodule module,
                                                     const char *name) {
  CUfunction function = nullptr;
  if (CHECK(cuModuleGetFunction(&function, module, name), name)) {
    std::lock_guard<std::mutex> lock(state().mutex);
    state().kernelNames[function] = name;
  }
  return function;
}

LSTM_OPT_GPU_EXPORT void mgpuLaunchKernel(CUfunction function, intptr_t gridX,
                                          intptr_t gridY, intptr_t gridZ,
                                          intptr_t blockX, intptr_t blockY,
                                          intptr_t blockZ, int32_t smem,
                                          CUstream stream, void **params,
                                          void **extra, size_t /*paramsCount*/) {
  ScopedContext scope;
  if (!scope.ok)
    return;
  // Past 48 KiB a kernel must opt in to its dynamic shared memory (the
  // persistent kernel keeping a whole weight matrix there).
  if (smem > 48 * 1024 &&
      !CHECK(cuFuncSetAttribute(function,
                                CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                smem),
             nameOf(function)))
    return;
  // The persistent kernels' blocks wait for each other (a grid barrier per
  // step): launched cooperatively, so that a grid this GPU cannot hold at
  // once is refused instead of hanging.
  std::string name = nameOf(function);
  if (name.find("_persist") != std::string::npos && !extra) {
    CUresult r = cuLaunchCooperativeKernel(function, gridX, gridY, gridZ, blockX,
                                           blockY, blockZ, smem, stream, params);
    if (r == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE) {
      CUdevice device;
      int sms = 0;
      if (cuCtxGetDevice(&device) == CUDA_SUCCESS)
        cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device);
      std::string msg =
          "lstm-opt GPU runtime: the persistent kernel '" + name + "' needs " +
          std::to_string(gridX * gridY * gridZ) +
          " blocks resident at once and this GPU holds fewer (" +
          std::to_string(sms) +
          " SMs): compile with --gpu-design=step, or for this GPU's --gpu-chip";
      fprintf(stderr, "%s\n", msg.c_str());
      std::lock_guard<std::mutex> lock(state().mutex);
      state().lastError = msg;
      return;
    }
    check(r, "cuLaunchCooperativeKernel", name);
    return;
  }
  CHECK(cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY, blockZ,
                       smem, stream, params, extra),
        name);
}

LSTM_OPT_GPU_EXPORT CUstream mgpuStreamCreate() {
  ScopedContext scope;
  CUstream stream = nullptr;
  if (!scope.ok)
    return stream;
  if (caching()) {
    std::lock_guard<std::mutex> lock(pools().mutex);
    if (!pools().streams.empty()) {
      stream = pools().streams.back();
      pools().streams.pop_back();
      return stream;
    }
  }
  CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  return stream;
}

LSTM_OPT_GPU_EXPORT void mgpuStreamDestroy(CUstream stream) {
  ScopedContext scope;
  if (caching() && stream) {
    // Idle before anyone else takes it.
    if (!CHECK(cuStreamSynchronize(stream)))
      return; // a faulted stream is not reused
    std::lock_guard<std::mutex> lock(pools().mutex);
    pools().streams.push_back(stream);
    return;
  }
  CHECK(cuStreamDestroy(stream));
}

/// Kernel faults surface here (launches are asynchronous).
LSTM_OPT_GPU_EXPORT void mgpuStreamSynchronize(CUstream stream) {
  CHECK(cuStreamSynchronize(stream));
}

LSTM_OPT_GPU_EXPORT void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  CHECK(cuStreamWaitEvent(stream, event, 0));
}

LSTM_OPT_GPU_EXPORT CUevent mgpuEventCreate() {
  ScopedContext scope;
  CUevent event = nullptr;
  if (scope.ok)
    CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

LSTM_OPT_GPU_EXPORT void mgpuEventDestroy(CUevent event) {
  CHECK(cuEventDestroy(event));
}

LSTM_OPT_GPU_EXPORT void mgpuEventSynchronize(CUevent event) {
  CHECK(cuEventSynchronize(event));
}

LSTM_OPT_GPU_EXPORT void mgpuEventRecord(CUevent event, CUstream stream) {
  CHECK(cuEventRecord(event, stream));
}

/// The device copy of a compiled model's constant (its weights, a global of
/// `bytes` at `host` whose contents hash to `hash` at compile time), uploaded
/// at its first use and kept for the life of the process: the generated host
/// code calls this instead of allocating and copying its weights on every
/// call. The hash is part of the key, so that a library unloaded and another
/// loaded at the same address never sees the first one's weights. 0 on
/// failure (the reason in lstm_opt_gpu_last_error()).
LSTM_OPT_GPU_EXPORT int64_t lstm_opt_gpu_constant(int64_t host, int64_t bytes,
                                                  int64_t hash) {
  ScopedContext scope;
  if (!scope.ok || bytes <= 0 || !host)
    return 0;
  static std::mutex mutex;
  static auto *cache = new std::map<std::tuple<int64_t, int64_t, int64_t>, CUdeviceptr>;
  std::lock_guard<std::mutex> lock(mutex);
  auto key = std::make_tuple(host, bytes, hash);
  auto it = cache->find(key);
  if (it != cache->end())
    return static_cast<int64_t>(it->second);
  CUdeviceptr ptr = 0;
  if (!CHECK(cuMemAlloc(&ptr, bytes)))
    return 0;
  // Synchronous: the copy is complete before any stream can see the pointer.
  if (!CHECK(cuMemcpyHtoD(ptr, reinterpret_cast<const void *>(host), bytes))) {
    cuMemFree(ptr);
    return 0;
  }
  (*cache)[key] = ptr;
  return static_cast<int64_t>(ptr);
}

LSTM_OPT_GPU_EXPORT void *mgpuMemAlloc(uint64_t sizeBytes, CUstream /*stream*/,
                                       bool isHostShared) {
  ScopedContext scope;
  if (!scope.ok || sizeBytes == 0)
    return nullptr;
  CUdeviceptr ptr = 0;
  if (isHostShared) {
    CHECK(cuMemAllocManaged(&ptr, sizeBytes, CU_MEM_ATTACH_GLOBAL));
    return reinterpret_cast<void *>(ptr);
  }
  if (caching()) {
    std::lock_guard<std::mutex> lock(pools().mutex);
    auto it = pools().buffers.find(sizeBytes);
    if (it != pools().buffers.end()) {
      ptr = it->second;
      pools().buffers.erase(it);
      return reinterpret_cast<void *>(ptr);
    }
  }
  if (CHECK(cuMemAlloc(&ptr, sizeBytes)) && caching()) {
    std::lock_guard<std::mutex> lock(pools().mutex);
    pools().sizes[ptr] = sizeBytes;
  }
  return reinterpret_cast<void *>(ptr);
}

LSTM_OPT_GPU_EXPORT void mgpuMemFree(void *ptr, CUstream stream) {
  if (!ptr)
    return;
  auto dptr = reinterpret_cast<CUdeviceptr>(ptr);
  if (caching()) {
    uint64_t size = 0;
    {
      std::lock_guard<std::mutex> lock(pools().mutex);
      auto it = pools().sizes.find(dptr);
      if (it != pools().sizes.end())
        size = it->second;
    }
    if (size) {
      // The stream's work on the buffer is done before it is handed out.
      ScopedContext scope;
      if (stream && !CHECK(cuStreamSynchronize(stream)))
        return; // after a fault the buffer is not reused
      std::lock_guard<std::mutex> lock(pools().mutex);
      pools().buffers.emplace(size, dptr);
      return;
    }
  }
  CHECK(cuMemFree(dptr));
}

LSTM_OPT_GPU_EXPORT void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                                    CUstream stream) {
  CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                      reinterpret_cast<CUdeviceptr>(src), sizeBytes, stream));
}

LSTM_OPT_GPU_EXPORT void mgpuMemset32(void *dst, unsigned int value,
                                      size_t count, CUstream stream) {
  CHECK(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                         stream));
}

LSTM_OPT_GPU_EXPORT void mgpuMemset16(void *dst, unsigned short value,
                                      size_t count, CUstream stream) {
  CHECK(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value, count,
                         stream));
}

LSTM_OPT_GPU_EXPORT void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  ScopedContext scope;
  if (scope.ok)
    CHECK(cuMemHostRegister(ptr, sizeBytes, 0));
}

LSTM_OPT_GPU_EXPORT void mgpuMemHostUnregister(void *ptr) {
  ScopedContext scope;
  if (scope.ok)
    CHECK(cuMemHostUnregister(ptr));
}
