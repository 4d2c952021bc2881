//===- lstm-run.cpp - compile a model for this CPU and run it -------------===//
//
//   lstm-run MODEL.onnx (--inputs in.npz | --random-inputs) [--outputs out.npz]
//            [--bench N] [--threads K]
//
// The model is specialised to the shapes of the given inputs (symbolic sizes
// resolve from them), recognised, lowered through the CPU pipeline and
// compiled in memory; then it runs once (and --bench N more times, timed).
// npz keys are graph input/output names.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/InitAll.h"
#include "lstm-opt/Support/CheckedMath.h"
#include "lstm-opt/Support/Diagnostics.h"
#include "lstm-opt/Support/Npz.h"
#include "lstm-opt/Target/CPU/CPUBackend.h"
#include "lstm-opt/Target/ONNX/ONNXImport.h"
#include "lstm-opt/Tools/CompileOptions.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/raw_ostream.h"

#include <climits>
#include <malloc.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <cstdlib>
#include <map>
#include <optional>
#include <random>

using namespace mlir;
using namespace lstm_opt;

namespace cl = llvm::cl;

static cl::OptionCategory category("lstm-run options");
static cl::opt<std::string> modelPath(cl::Positional,
                                      cl::desc("MODEL.onnx, or MODEL.so from "
                                               "lstm-opt --target=cpu"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> inputsPath("inputs",
                                       cl::desc("npz with one array per graph input"),
                                       cl::value_desc("in.npz"), cl::cat(category));
static cl::opt<bool> randomInputs(
    "random-inputs",
    cl::desc("Run on random inputs instead of --inputs (floats uniform in "
             "[-1, 1), integers 0/1; symbolic sizes need --input-shape)"),
    cl::init(false), cl::cat(category));

static cl::opt<std::string> outputsPath("outputs",
                                        cl::desc("Write the graph outputs to this npz"),
                                        cl::value_desc("out.npz"), cl::cat(category));
static cl::opt<unsigned> benchRuns(
    "bench", cl::desc("Time N inferences after a warm-up; prints "
                      "'median_ms: X min_ms: Y'"),
    cl::value_desc("N"), cl::init(0), cl::cat(category));
static cl::opt<bool> streamMode(
    "stream",
    cl::desc("Run the model as a stream, chunk by chunk, its state carried "
             "(--state; auto when not given): each input in --inputs with one "
             "more leading axis than the model's holds N chunks (an input of "
             "the model's own rank, e.g. a state's initial value or a bound "
             "sample rate, is the same for every chunk); the outputs come "
             "back stacked. With --bench R: R passes over the chunks, "
             "printing each call's median and p99 and the time per chunk of "
             "a whole pass"),
    cl::cat(category));
static cl::opt<std::string> device(
    "device",
    cl::desc("cpu (default); cuda: the recurrent layers cuDNN can run go "
             "through the cuDNN runtime on the GPU, the rest runs here; gpu: "
             "the recurrent layers run as lstm-opt's generated GPU kernels "
             "(libLstmOptGPURuntime), the rest runs here"),
    cl::init("cpu"), cl::cat(category));
static cl::opt<std::string> gpuKernelsOnCPU(
    "gpu-kernels-on-cpu",
    cl::desc("Run the recurrent layers through the generated GPU kernel "
             "bodies mapped to CPU loops (convert-rnn-to-gpu{mapping=cpu}), "
             "a numerics test of the GPU kernels; =step or =persistent "
             "forces the recurrence kernel's design"),
    cl::ValueOptional, cl::init("off"), cl::cat(category));
static cl::opt<bool> gpuSkipProbe(
    "gpu-skip-device-probe",
    cl::desc("Testing: compile and run --device=gpu even without a usable "
             "device (every GPU runtime call then fails and says so)"),
    cl::Hidden, cl::init(false), cl::cat(category));
static cl::opt<unsigned> maxInputMiB(
    "max-input-mb",
    cl::desc("Largest npz member (MiB) accepted for an input with dynamic "
             "dimensions; static inputs take exactly their size "
             "(default 4096)"),
    cl::init(4096), cl::cat(category));
static cl::opt<bool> quiet("q", cl::desc("Print only the timing line"),
                           cl::init(false), cl::cat(category));

namespace {

int fail(const llvm::Twine &msg) {
  llvm::errs() << "lstm-run: error: " << msg << "\n";
  return 1;
}

/// The bytes a tensor of `shape` and `elemSize` needs, or an error message:
/// computed with overflow checks, and at most this machine's memory, so a
/// shape from a hostile model is refused before anything is allocated.
std::optional<std::string> checkTensorBytes(llvm::StringRef what,
                                            llvm::ArrayRef<int64_t> shape,
                                            size_t elemSize) {
  if (llvm::any_of(shape, [](int64_t d) { return d < 0; }))
    return (what + " has a negative dimension").str();
  std::optional<uint64_t> size = checkedByteSize(shape, elemSize);
  if (!size)
    return (what + " is too large (its byte size overflows 64 bits)").str();
  uint64_t bytes = *size;
  uint64_t memory = uint64_t(sysconf(_SC_PHYS_PAGES)) * uint64_t(sysconf(_SC_PAGESIZE));
  if (memory && bytes > memory)
    return (what + " needs " + llvm::Twine(bytes) + " bytes, more than this "
            "machine's memory (" + llvm::Twine(memory) + " bytes)").str();
  return std::nullopt;
}

double peakRssMiB() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;
}

/// A 64-byte aligned buffer.
struct Buffer {
  explicit Buffer(size_t bytes)
      : ptr(static_cast<uint8_t *>(std::aligned_alloc(64, std::max<size_t>(64, (bytes + 63) / 64 * 64)))),
        size(bytes) {}
  ~Buffer() { std::free(ptr); }
  Buffer(const Buffer &) = delete;
  Buffer(Buffer &&o) noexcept : ptr(o.ptr), size(o.size) { o.ptr = nullptr; }
  uint8_t *ptr;
  size_t size;
};

std::optional<npz::DType> npzDType(StringRef name) {
  static const std::map<std::string, npz::DType> m = {
      {"float32", npz::DType::F32}, {"float64", npz::DType::F64},
      {"float16", npz::DType::F16}, {"int64", npz::DType::I64},
      {"int32", npz::DType::I32},   {"int16", npz::DType::I16},
      {"int8", npz::DType::I8},     {"uint8", npz::DType::U8},
      {"bool", npz::DType::Bool}};
  auto it = m.find(name.str());
  if (it == m.end())
    return std::nullopt;
  return it->second;
}

/// What a graph input takes, known before its array is read.
struct ExpectedInput {
  std::optional<npz::DType> dtype; // none: a type npz arrays cannot hold
  std::string typeName;            // the model's name of the type
  bool ranked = false;
  std::vector<int64_t> dims; // -1: dynamic
};

/// The npz dtype of an ONNX element type (TensorProto.DataType).
std::optional<npz::DType> npzDTypeOfONNX(int32_t elemType) {
  switch (elemType) {
  case 1: return npz::DType::F32;
  case 2: return npz::DType::U8;
  case 3: return npz::DType::I8;
  case 4: return npz::DType::U16;
  case 5: return npz::DType::I16;
  case 6: return npz::DType::I32;
  case 7: return npz::DType::I64;
  case 9: return npz::DType::Bool;
  case 10: return npz::DType::F16;
  case 11: return npz::DType::F64;
  case 12: return npz::DType::U32;
  case 13: return npz::DType::U64;
  default: return std::nullopt;
  }
}

std::string onnxTypeName(int32_t elemType) {
  if (auto d = npzDTypeOfONNX(elemType))
    return npz::dtypeName(*d).str();
  return "ONNX element type " + std::to_string(elemType);
}

std::string shapeString(llvm::ArrayRef<int64_t> dims) {
  std::string s = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    s += (i ? "," : "") + (dims[i] < 0 ? std::string("?") : std::to_string(dims[i]));
  return s + "]";
}

/// Checks an npz member's header against the input it feeds, before the
/// member is inflated: its dtype, its rank, every static dimension, and for
/// dynamic dimensions a byte size of at most `maxDynamicBytes`. A member no
/// input takes is refused for an ONNX model (as the importer would) and,
/// for a compiled library, bounded like a dynamic input.
llvm::Error checkMember(const npz::MemberInfo &m,
                        const std::map<std::string, ExpectedInput> &expected,
                        bool compiledLibrary, uint64_t maxDynamicBytes) {
  std::string what = inputsPath + ": member '" + m.key.str() + ".npy' (" +
                     npz::dtypeName(m.dtype).str() + shapeString(m.shape) + ")";
  auto refuse = [&](const llvm::Twine &why) {
    return llvm::createStringError(what + ": " + why + " (not inflated)");
  };
  auto it = expected.find(m.key.str());
  if (it == expected.end()) {
    if (!compiledLibrary)
      return refuse("the model has no graph input named '" + m.key + "'");
  } else {
    ExpectedInput e = it->second;
    // A stream's chunked input: one more leading axis, N chunks.
    if (streamMode && e.ranked && m.shape.size() == e.dims.size() + 1)
      e.dims.insert(e.dims.begin(), m.shape[0]);
    if (e.dtype && *e.dtype != m.dtype)
      return refuse("the model's input '" + m.key + "' takes " + e.typeName);
    if (e.ranked && e.dims.size() != m.shape.size())
      return refuse("the model's input '" + m.key + "' has rank " +
                    llvm::Twine(e.dims.size()) + " " + shapeString(e.dims));
    bool dynamic = !e.ranked;
    for (size_t k = 0; e.ranked && k < e.dims.size(); ++k) {
      if (e.dims[k] < 0)
        dynamic = true;
      else if (e.dims[k] != m.shape[k])
        return refuse("the model's input '" + m.key + "' has size " +
                      llvm::Twine(e.dims[k]) + " in dimension " +
                      llvm::Twine(k) + " " + shapeString(e.dims));
    }
    if (!dynamic)
      return llvm::Error::success();
  }
  if (m.bytes > maxDynamicBytes)
    return refuse("it holds " + llvm::Twine(m.bytes) +
                  " bytes, more than --max-input-mb=" +
                  llvm::Twine(maxDynamicBytes >> 20) +
                  " allows for an input with dynamic dimensions");
  return llvm::Error::success();
}

/// Random arrays for the graph function's arguments (static shapes needed).
LogicalResult
makeRandomInputs(ModuleOp module,
                 std::vector<std::pair<std::string, npz::Array>> &out) {
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> uniform(-1.f, 1.f);
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isPrivate() || f.isExternal())
      continue;
    for (unsigned i = 0; i < f.getNumArguments(); ++i) {
      auto name = f.getArgAttrOfType<StringAttr>(i, "onnx.name");
      std::string n = name ? name.str() : "input" + std::to_string(i);
      auto t = dyn_cast<RankedTensorType>(f.getArgument(i).getType());
      if (!t || !t.hasStaticShape())
        return f.emitError() << "graph input '" << n << "' has type "
                             << f.getArgument(i).getType()
                             << "; give its shape with --input-shape=" << n
                             << "=D0xD1x...";
      npz::Array a;
      a.shape.assign(t.getShape().begin(), t.getShape().end());
      Type e = t.getElementType();
      if (auto err = checkTensorBytes("graph input '" + n + "'", a.shape,
                                      std::max<size_t>(1, e.getIntOrFloatBitWidth() / 8)))
        return f.emitError() << *err;
      size_t count = a.numElements();
      if (e.isF32()) {
        std::vector<float> v(count);
        for (float &x : v)
          x = uniform(rng);
        a = npz::Array::fromF32(a.shape, v.data());
      } else if (e.isInteger(64) || e.isInteger(32) || e.isInteger(1)) {
        a.dtype = e.isInteger(64) ? npz::DType::I64
                  : e.isInteger(32) ? npz::DType::I32 : npz::DType::Bool;
        a.data.assign(count * a.elementSize(), 0);
        for (size_t k = 0; k < count; ++k)
          a.data[k * a.elementSize()] = rng() & 1;
      } else {
        return f.emitError() << "--random-inputs: graph input '" << n
                             << "' has element type " << e
                             << "; give it with --inputs";
      }
      out.emplace_back(n, std::move(a));
    }
    return success();
  }
  return module.emitError() << "no graph function";
}

/// --stream: the N chunks one call each, the state pairs carried from one
/// call to the next (the state starts at the array given for it, else at
/// zeros); the other outputs are stacked into --outputs with the final
/// states. With --bench R, R more passes are timed.
int runStream(cpu::JITModel &model, const cpu::ModelSignature &sig,
              const std::vector<std::pair<std::string, npz::Array>> &arrays,
              std::map<std::string, bool> &chunked, int64_t n, unsigned threads,
              double compileMs) {
  if (sig.state.empty())
    return fail(modelPath + ": --stream needs state pairs (--state IN=OUT, "
                "or a compiled library built with --state)");
  auto find = [&](const std::string &name) -> const npz::Array * {
    for (auto &[k, a] : arrays)
      if (k == name)
        return &a;
    return nullptr;
  };
  size_t nIn = sig.inputs.size(), nOut = sig.outputs.size();
  // Per input: its chunks (a stride per chunk), its one value, or a state.
  std::vector<const uint8_t *> base(nIn, nullptr);
  std::vector<size_t> step(nIn, 0);
  std::vector<int> inSlot(nIn, -1), outSlot(nOut, -1);
  std::vector<Buffer> cur, next;
  for (size_t k = 0; k < sig.state.size(); ++k) {
    const cpu::TensorSig &t = sig.inputs[sig.state[k].first];
    size_t bytes = t.numElements() * t.elementSize();
    cur.emplace_back(bytes);
    next.emplace_back(bytes);
    std::memset(cur.back().ptr, 0, bytes);
    inSlot[sig.state[k].first] = k;
    outSlot[sig.state[k].second] = k;
  }
  for (size_t i = 0; i < nIn; ++i) {
    const cpu::TensorSig &t = sig.inputs[i];
    const npz::Array *a = find(t.name);
    size_t bytes = t.numElements() * t.elementSize();
    if (inSlot[i] >= 0) {
      if (a && (chunked[t.name] || a->data.size() != bytes))
        return fail(inputsPath + ": state input '" + t.name +
                    "' is the initial state: one value of its shape");
      if (a)
        std::memcpy(cur[inSlot[i]].ptr, a->data.data(), bytes);
      continue;
    }
    if (!a)
      return fail(inputsPath + ": no array for graph input '" + t.name + "'");
    if (npzDType(t.dtype) != a->dtype)
      return fail(inputsPath + ": input '" + t.name + "' is " +
                  npz::dtypeName(a->dtype) + ", the model takes " + t.dtype);
    bool c = chunked[t.name];
    if (a->data.size() != bytes * (c ? n : 1))
      return fail(inputsPath + ": input '" + t.name +
                  "' has another shape than the model's chunk");
    base[i] = a->data.data();
    step[i] = c ? bytes : 0;
  }
  std::vector<Buffer> outBufs;
  std::vector<size_t> outBytes(nOut);
  for (size_t o = 0; o < nOut; ++o) {
    const cpu::TensorSig &t = sig.outputs[o];
    outBytes[o] = t.numElements() * t.elementSize();
    outBufs.emplace_back(outSlot[o] >= 0 ? 1 : outBytes[o] * n);
  }
  std::vector<const void *> in(nIn);
  std::vector<void *> out(nOut);
  std::vector<double> calls;
  auto pass = [&](bool timed) -> llvm::Error {
    for (int64_t c = 0; c < n; ++c) {
      for (size_t i = 0; i < nIn; ++i)
        in[i] = inSlot[i] >= 0 ? cur[inSlot[i]].ptr : base[i] + c * step[i];
      for (size_t o = 0; o < nOut; ++o)
        out[o] = outSlot[o] >= 0 ? next[outSlot[o]].ptr
                                 : outBufs[o].ptr + c * outBytes[o];
      auto a = std::chrono::steady_clock::now();
      if (llvm::Error e = model.run(in, out))
        return e;
      if (timed)
        calls.push_back(std::chrono::duration<double, std::micro>(
                            std::chrono::steady_clock::now() - a)
                            .count());
      for (size_t k = 0; k < cur.size(); ++k)
        std::swap(cur[k].ptr, next[k].ptr);
    }
    return llvm::Error::success();
  };
  // The initial state, for the timed passes.
  std::vector<std::vector<uint8_t>> initial;
  for (Buffer &b : cur)
    initial.emplace_back(b.ptr, b.ptr + b.size);
  auto first = std::chrono::steady_clock::now();
  if (llvm::Error e = pass(false))
    return fail(llvm::toString(std::move(e)));
  double firstMs = std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - first)
                       .count();
  if (!outputsPath.empty()) {
    std::vector<std::pair<std::string, npz::Array>> outArrays;
    for (size_t o = 0; o < nOut; ++o) {
      const cpu::TensorSig &t = sig.outputs[o];
      npz::Array a;
      a.dtype = *npzDType(t.dtype);
      a.shape = t.shape;
      if (outSlot[o] >= 0) {
        const Buffer &b = cur[outSlot[o]]; // the final state
        a.data.assign(b.ptr, b.ptr + b.size);
      } else {
        a.shape.insert(a.shape.begin(), n);
        a.data.assign(outBufs[o].ptr, outBufs[o].ptr + outBytes[o] * n);
      }
      outArrays.emplace_back(t.name, std::move(a));
    }
    if (llvm::Error e = npz::writeNpz(outputsPath, outArrays))
      return fail(llvm::toString(std::move(e)));
  }
  if (!quiet) {
    llvm::errs() << "lstm-run: compiled " << modelPath << " in "
                 << llvm::format("%.1f", compileMs) << " ms (threads " << threads
                 << "); streamed " << n << " chunks in "
                 << llvm::format("%.3f", firstMs) << " ms; state";
    for (auto [i, o] : sig.state)
      llvm::errs() << " " << sig.inputs[i].name << "=" << sig.outputs[o].name;
    llvm::errs() << "\n";
  }
  if (benchRuns > 0) {
    std::vector<double> passes;
    for (unsigned r = 0; r < benchRuns; ++r) {
      for (size_t k = 0; k < cur.size(); ++k)
        std::memcpy(cur[k].ptr, initial[k].data(), initial[k].size());
      auto a = std::chrono::steady_clock::now();
      if (llvm::Error e = pass(true))
        return fail(llvm::toString(std::move(e)));
      passes.push_back(std::chrono::duration<double, std::micro>(
                           std::chrono::steady_clock::now() - a)
                           .count() /
                       n);
    }
    std::sort(calls.begin(), calls.end());
    std::sort(passes.begin(), passes.end());
    auto at = [](const std::vector<double> &v, double q) {
      return v[std::min(v.size() - 1, (size_t)(q * (v.size() - 1) + 0.5))];
    };
    llvm::outs() << "stream_chunks: " << n << " call_median_us: "
                 << llvm::format("%.2f", at(calls, 0.5)) << " call_p99_us: "
                 << llvm::format("%.2f", at(calls, 0.99))
                 << " pass_per_chunk_us: " << llvm::format("%.2f", at(passes, 0.5))
                 << "\n";
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  static CompileOptions compile(category, 0, "all cores; for a compiled "
                                             "library, the count it was "
                                             "compiled with");
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(argc, argv,
                              "lstm-run: compile an ONNX model for this CPU "
                              "and run it on npz inputs\n");
  auto t0 = std::chrono::steady_clock::now();
  auto ms = [](auto a, auto b) {
    return std::chrono::duration<double, std::milli>(b - a).count();
  };

  if (inputsPath.empty() == !randomInputs)
    return fail("give either --inputs in.npz or --random-inputs");
  // What each input takes is known before any array is read: from a
  // compiled library's signature, or from the graph inputs an ONNX model
  // declares (and --input-shape). Every npz member's .npy header is checked
  // against it before the member is inflated, so a small archive cannot make
  // lstm-run inflate gigabytes.
  std::unique_ptr<cpu::JITModel> preloaded;
  std::map<std::string, ExpectedInput> expected;
  bool compiledLibrary = StringRef(modelPath).ends_with(".so");
  if (compiledLibrary && !randomInputs) {
    auto loaded = cpu::JITModel::load(modelPath);
    if (!loaded)
      return fail(llvm::toString(loaded.takeError()));
    preloaded = std::move(*loaded);
    for (const cpu::TensorSig &t : preloaded->signature().inputs)
      expected[t.name] = {npzDType(t.dtype), t.dtype, true, t.shape};
  } else if (!randomInputs) {
    MLIRContext context;
    context.printOpOnDiagnostic(false);
    ScopedDiagnosticHandler diagnostics(&context, [](Diagnostic &diag) {
      printToolDiagnostic(diag);
      return success();
    });
    auto declared = readDeclaredInputs(modelPath, &context);
    if (failed(declared))
      return 1;
    auto shapes = compile.inputShapes();
    if (!shapes)
      return fail(llvm::toString(shapes.takeError()));
    for (DeclaredInput &d : *declared) {
      ExpectedInput &e = expected[d.name];
      e.dtype = npzDTypeOfONNX(d.elemType);
      e.typeName = onnxTypeName(d.elemType);
      e.ranked = d.ranked;
      e.dims = d.dims;
      if (auto it = shapes->find(d.name); it != shapes->end()) {
        // A shape the model declares otherwise is the option's mistake,
        // not the arrays'.
        bool contradicts = d.ranked && d.dims.size() != it->second.size();
        for (size_t k = 0; !contradicts && d.ranked && k < d.dims.size(); ++k)
          contradicts = d.dims[k] >= 0 && d.dims[k] != it->second[k];
        if (contradicts)
          return fail("--input-shape=" + d.name + "=...: " + modelPath +
                      " declares input '" + d.name + "' as " +
                      shapeString(d.dims) + ", not " +
                      shapeString(it->second));
        e.ranked = true;
        e.dims = it->second;
      }
    }
  }
  std::vector<std::pair<std::string, npz::Array>> inputArrays;
  if (!randomInputs) {
    uint64_t maxDynamicBytes = uint64_t(maxInputMiB) << 20;
    npz::ReadOptions readOptions;
    readOptions.checkMember = [&](const npz::MemberInfo &m) -> llvm::Error {
      return checkMember(m, expected, compiledLibrary, maxDynamicBytes);
    };
    auto read = npz::readNpz(inputsPath, readOptions);
    if (!read)
      return fail(llvm::toString(read.takeError()));
    inputArrays = std::move(*read);
  }
  auto *inputs = &inputArrays;
  // --stream: the arrays with one more leading axis than their input are N
  // chunks; the model is compiled for one chunk.
  std::map<std::string, bool> chunked;
  int64_t numChunks = -1;
  if (streamMode) {
    if (randomInputs)
      return fail("--stream needs --inputs with the chunks");
    for (auto &[name, array] : inputArrays) {
      auto it = expected.find(name);
      bool c = it != expected.end() && it->second.ranked &&
               array.shape.size() == it->second.dims.size() + 1;
      chunked[name] = c;
      if (!c)
        continue;
      if (numChunks >= 0 && array.shape[0] != numChunks)
        return fail(inputsPath + ": input '" + name + "' holds " +
                    std::to_string(array.shape[0]) + " chunks, another " +
                    std::to_string(numChunks));
      numChunks = array.shape[0];
    }
    if (numChunks == 0)
      return fail("--stream: the inputs in " + inputsPath +
                  " hold 0 chunks (their leading chunk axis is empty); give "
                  "at least one");
    if (numChunks < 1)
      return fail("--stream: no input in " + inputsPath +
                  " has a leading chunk axis (one more dimension than the "
                  "model's input)");
    // An input given by neither the arrays nor --input-shape (a state that
    // starts at zeros) needs a static shape from the model itself.
    auto shapes = compile.inputShapes();
    if (!shapes)
      return fail(llvm::toString(shapes.takeError()));
    for (auto &[name, e] : expected) {
      bool given = llvm::any_of(inputArrays, [&](auto &kv) { return kv.first == name; }) ||
                   shapes->count(name);
      if (!given && (!e.ranked || llvm::any_of(e.dims, [](int64_t d) { return d < 0; })))
        return fail("--stream: input '" + name + "' has the shape " +
                    (e.ranked ? shapeString(e.dims) : std::string("(unranked)")) +
                    "; give its initial value in " + inputsPath +
                    " or its shape with --input-shape=" + name + "=D0xD1x...");
    }
  }
  auto chunkShape = [&](const std::string &name, const npz::Array &a) {
    std::vector<int64_t> shape = a.shape;
    if (chunked.count(name) && chunked[name])
      shape.erase(shape.begin());
    return shape;
  };

  cpu::CPUOptions options;
  if (llvm::Error e = compile.fill(options))
    return fail(llvm::toString(std::move(e)));
  if (streamMode && options.statePairs.empty())
    options.statePairs = "auto";
  if (!options.threads)
    options.threads = std::max(1u, llvm::hardware_concurrency().compute_thread_count());
  if (gpuKernelsOnCPU != "off") {
    std::string design = gpuKernelsOnCPU.empty() ? std::string("auto") : gpuKernelsOnCPU.getValue();
    if (design != "auto" && design != "step" && design != "persistent")
      return fail("--gpu-kernels-on-cpu takes auto, step or persistent, not '" +
                  design + "'");
    options.gpuKernelsOnCPU = true;
    options.gpuKernelsDesign = design;
  }
  // Each thread keeps the same hidden blocks - the same weight slice - every
  // step; pinning the OpenMP threads keeps that slice in the thread's own
  // cache (measured: 1.76 -> 1.28 ms for an LSTM(150, 1, 16, 256) on 2
  // threads). The user's settings win.
  setenv("OMP_PROC_BIND", "close", /*overwrite=*/0);
  // The compiled code allocates its scratch (the input projection: T*B*G*H
  // floats) per call. glibc serves large blocks with mmap and unmaps them on
  // free, so every inference would fault in and zero them again; keeping
  // them in the heap lets the next inference reuse the pages (measured:
  // LSTM(100, 64, 512, 512) 352 -> 289 ms on 2 busy cores).
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, INT_MAX);
  setenv("OMP_PLACES", "cores", /*overwrite=*/0);
  if (device != "cpu" && device != "cuda" && device != "gpu")
    return fail("--device takes cpu, cuda or gpu, not '" + device + "'");
  // The precision is the CPU kernels': the cuDNN and GPU layers have their
  // own data types, and the GPU kernel bodies on the CPU are f32.
  if (!options.layerPrecisions.empty() &&
      (device != "cpu" || options.gpuKernelsOnCPU))
    return fail("--precision's NODE=PRECISION items are for the CPU kernels "
                "(--device=cpu)");
  if (options.precision != "f32" &&
      !((device == "gpu" || options.gpuKernelsOnCPU) && options.precision == "bf16") &&
      (device != "cpu" || options.gpuKernelsOnCPU))
    return fail("--precision is for the CPU kernels (--device=cpu), and bf16 "
                "for the generated GPU kernels (--device=gpu, and their "
                "twin --gpu-kernels-on-cpu) too; the cuDNN layers take "
                "--cudnn-data-type");
  if (device == "gpu") {
    if (!cpu::haveGPURuntime())
      return fail("--device=gpu: this build has no GPU runtime (the CUDA "
                  "toolkit was not found)");
    // Before compiling anything: the JIT loads the runtime, which needs the
    // CUDA driver, and the kernels need a device.
    if (!gpuSkipProbe && !cpu::gpuDeviceAvailable())
      return fail("--device=gpu: no CUDA device is available on this machine");
    if (options.gpuKernelsOnCPU)
      return fail("--device=gpu and --gpu-kernels-on-cpu exclude each other");
    options.gpuKernels = true;
  }
  if (device == "cuda") {
    if (!cpu::haveCUDNNRuntime())
      return fail("--device=cuda: this build has no cuDNN runtime (CUDA and "
                  "cuDNN were not found, or LSTM_OPT_ENABLE_CUDNN is OFF)");
    if (!cpu::cudaDeviceAvailable())
      return fail("--device=cuda: no CUDA device is available on this machine");
    options.cuda = true;
  }

  std::unique_ptr<cpu::JITModel> model;
  if (StringRef(modelPath).ends_with(".so")) {
    // Compiled ahead of time (lstm-opt --target=cpu -o m.so): no compiler in
    // this process, only the weights and activations.
    if (randomInputs)
      return fail("--random-inputs needs an ONNX model, not a compiled library");
    // What the library was compiled with is fixed: an option only compiling
    // reads would be silently ignored.
    if (std::vector<std::string> given = compile.compileOnlyGiven(); !given.empty())
      return fail(llvm::join(given, ", ") + (given.size() == 1 ? " is" : " are") +
                  " for compiling, and " + modelPath +
                  " is compiled already: recompile it with lstm-opt --target=cpu " +
                  llvm::join(given, " ") + " (with the values), or leave " +
                  (given.size() == 1 ? "it" : "them") + " out");
    model = std::move(preloaded);
    // --threads given: the library's parallel loops use that many threads
    // instead of the count it was compiled with.
    options.threads = compile.threadsGiven() ? model->setThreads(compile.threads())
                                             : model->threads();
    for (const cpu::TensorSig &t : model->signature().inputs) {
      auto it = llvm::find_if(inputArrays, [&](auto &kv) { return kv.first == t.name; });
      if (it != inputArrays.end() && chunkShape(it->first, it->second) != t.shape)
        return fail(inputsPath + ": input '" + t.name +
                    "' has another shape than the library was compiled for");
      if (it != inputArrays.end() && !t.bound.empty()) {
        std::vector<int64_t> v(t.bound.size());
        if (it->second.dtype != npz::DType::I64 ||
            it->second.numElements() != (int64_t)v.size())
          return fail(inputsPath + ": input '" + t.name + "' must be int64");
        std::memcpy(v.data(), it->second.data.data(), v.size() * sizeof(int64_t));
        if (v != t.bound) {
          std::string want;
          for (int64_t x : t.bound)
            want += (want.empty() ? "" : ",") + std::to_string(x);
          return fail(inputsPath + ": input '" + t.name +
                      "' differs from the value the library was compiled "
                      "for (--bind " + t.name + "=" + want + ")");
        }
      }
    }
  } else {
    // The MLIR module (and its copies of the weights) lives only while
    // compiling.
    DialectRegistry registry;
    registerAllDialects(registry);
    registerAllPasses();
    MLIRContext context(registry);
    context.loadAllAvailableDialects();
    context.printOpOnDiagnostic(false);
    // Errors and warnings name the file and node; recognition remarks are
    // lstm-opt --report's business, except a standard layer's "not
    // imported" one: the CPU backend cannot run such a layer, and the error
    // that follows points to it.
    ScopedDiagnosticHandler diagnostics(&context, [](Diagnostic &diag) {
      if (diag.getSeverity() != DiagnosticSeverity::Remark ||
          StringRef(diag.str()).starts_with("not imported into the rnn dialect"))
        printToolDiagnostic(diag);
      return success();
    });
    ONNXImportOptions io;
    for (auto &[name, array] : *inputs)
      io.inputShapes[name] = chunkShape(name, array);
    auto shapes = compile.inputShapes();
    if (!shapes)
      return fail(llvm::toString(shapes.takeError()));
    for (auto &[name, shape] : *shapes)
      io.inputShapes[name] = shape;
    OwningOpRef<ModuleOp> module = importONNXFile(modelPath, &context, io);
    if (!module || failed(unrollRecurrentLoops(module, io)))
      return 1;
    // Small int64 inputs (a sample rate, a mode) are compiled in as
    // constants: If branches they select are inlined and shapes that depend
    // on them become static. A model compiled so runs only with those values
    // (lstm-run compiles for the inputs it is given).
    std::map<std::string, std::vector<int64_t>> bound;
    if (!randomInputs)
      for (auto &[name, array] : *inputs)
        if (array.dtype == npz::DType::I64 && array.numElements() <= 16 &&
            !(chunked.count(name) && chunked[name])) {
          std::vector<int64_t> v(array.numElements());
          std::memcpy(v.data(), array.data.data(), v.size() * sizeof(int64_t));
          bound[name] = std::move(v);
        }
    auto given = compile.boundInputs();
    if (!given)
      return fail(llvm::toString(given.takeError()));
    for (auto &[name, v] : *given) {
      if (auto it = bound.find(name); it != bound.end() && it->second != v) {
        std::string values;
        for (int64_t x : v)
          values += (values.empty() ? "" : ",") + std::to_string(x);
        return fail("--bind " + name + "=" + values +
                    " disagrees with the value of '" + name + "' in " +
                    inputsPath);
      }
      bound[name] = v;
    }
    if (failed(specializeModel(module, bound, io)))
      return 1;
    if (randomInputs && failed(makeRandomInputs(*module, inputArrays)))
      return 1;
    auto sig = cpu::lowerToLLVMDialect(*module, options);
    if (failed(sig))
      return 1;
    auto jit = cpu::JITModel::create(*module, *sig, options);
    if (!jit)
      return fail(modelPath + ": cannot compile: " + llvm::toString(jit.takeError()));
    model = std::move(*jit);
  }
  auto t1 = std::chrono::steady_clock::now();

  // Inputs by name, in signature order, with the model's element types.
  const cpu::ModelSignature &sig = model->signature();
  for (auto [list, kind] : {std::pair{&sig.inputs, "input"}, std::pair{&sig.outputs, "output"}})
    for (const cpu::TensorSig &t : *list)
      if (auto err = checkTensorBytes(std::string(kind) + " '" + t.name + "'",
                                      t.shape, t.elementSize()))
        return fail(modelPath + ": " + *err);
  if (streamMode)
    return runStream(*model, sig, *inputs, chunked, numChunks, options.threads,
                     ms(t0, t1));
  std::vector<const void *> in;
  for (const cpu::TensorSig &t : sig.inputs) {
    auto it = llvm::find_if(*inputs, [&](auto &kv) { return kv.first == t.name; });
    if (it == inputs->end())
      return fail(inputsPath + ": no array for graph input '" + t.name + "'");
    if (npzDType(t.dtype) != it->second.dtype)
      return fail((randomInputs ? std::string("random inputs") : inputsPath.getValue()) +
                  ": input '" + t.name + "' is " +
                  npz::dtypeName(it->second.dtype) + ", the model takes " +
                  t.dtype);
    in.push_back(it->second.data.data());
  }
  std::vector<Buffer> outBufs;
  std::vector<void *> out;
  for (const cpu::TensorSig &t : sig.outputs) {
    outBufs.emplace_back(t.numElements() * t.elementSize());
    out.push_back(outBufs.back().ptr);
  }

  if (llvm::Error e = model->run(in, out))
    return fail(llvm::toString(std::move(e)));
  auto t2 = std::chrono::steady_clock::now();

  if (!outputsPath.empty()) {
    std::vector<std::pair<std::string, npz::Array>> arrays;
    for (size_t i = 0; i < sig.outputs.size(); ++i) {
      const cpu::TensorSig &t = sig.outputs[i];
      npz::Array a;
      a.dtype = *npzDType(t.dtype);
      a.shape = t.shape;
      a.data.assign(outBufs[i].ptr, outBufs[i].ptr + outBufs[i].size);
      arrays.emplace_back(t.name, std::move(a));
    }
    if (llvm::Error e = npz::writeNpz(outputsPath, arrays))
      return fail(llvm::toString(std::move(e)));
  }

  if (!quiet) {
    llvm::errs() << "lstm-run: compiled " << modelPath << " in "
                 << llvm::format("%.1f", ms(t0, t1)) << " ms (threads "
                 << options.threads << "); first run "
                 << llvm::format("%.3f", ms(t1, t2)) << " ms\n";
    for (size_t i = 0; i < sig.outputs.size(); ++i) {
      llvm::errs() << "  output '" << sig.outputs[i].name << "' "
                   << sig.outputs[i].dtype << "[";
      llvm::interleaveComma(sig.outputs[i].shape, llvm::errs());
      llvm::errs() << "]\n";
    }
  }

  if (benchRuns > 0) {
    unsigned warm = std::max(2u, (unsigned)benchRuns / 10);
    for (unsigned i = 0; i < warm; ++i)
      (void)model->run(in, out);
    std::vector<double> times;
    for (unsigned i = 0; i < benchRuns; ++i) {
      auto a = std::chrono::steady_clock::now();
      (void)model->run(in, out);
      times.push_back(ms(a, std::chrono::steady_clock::now()));
    }
    std::sort(times.begin(), times.end());
    double median = times.size() % 2 ? times[times.size() / 2]
                                     : 0.5 * (times[times.size() / 2 - 1] +
                                              times[times.size() / 2]);
    if (!quiet)
      llvm::outs() << "peak_rss_mib: " << llvm::format("%.1f", peakRssMiB())
                   << "\n";
    llvm::outs() << "median_ms: " << llvm::format("%.4f", median)
                 << " min_ms: " << llvm::format("%.4f", times.front())
                 << " max_ms: " << llvm::format("%.4f", times.back()) << "\n";
  }
  return 0;
}
