//===- CompileOptions.cpp - options lstm-opt and lstm-run share -----------===//

#include "lstm-opt/Tools/CompileOptions.h"

#include "lstm-opt/Conversion/RNNToCUDNN/RNNToCUDNN.h"
#include "lstm-opt/Conversion/RNNToGPU/RNNToGPU.h"
#include "lstm-opt/Target/ONNX/ONNXImport.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

using namespace lstm_opt;
namespace cl = llvm::cl;

static bool freeThreadsOption() {
  auto &registered = cl::getRegisteredOptions();
  if (auto it = registered.find("threads"); it != registered.end())
    it->second->removeArgument();
  return true;
}

CompileOptions::CompileOptions(cl::OptionCategory &category,
                               unsigned threadsDefault,
                               llvm::StringRef threadsDefaultText)
    : freedThreads(freeThreadsOption()),
      threadsDesc(("Threads a large layer's hidden blocks are split across "
                   "(OpenMP; default: " +
                   threadsDefaultText +
                   "); layers too small to share stay on one")
                      .str()),
      shapes("input-shape",
             cl::desc("Fix a graph input's shape: NAME=D0xD1x... (or "
                      "NAME=scalar; repeatable). Compiled code needs static "
                      "shapes"),
             cl::value_desc("name=shape"), cl::cat(category)),
      bindings("bind",
               cl::desc("Compile for these values of an int64 graph input, "
                        "NAME=V[,V...] (e.g. --bind sr=16000; repeatable): If "
                        "branches they select are inlined and shapes that "
                        "depend on them become static. The compiled model "
                        "then runs only with those values (--target=onnx: "
                        "the written model has no such input)"),
               cl::value_desc("name=values"), cl::cat(category)),
      threadsOpt("threads", cl::desc(threadsDesc), cl::value_desc("K"),
                 cl::init(threadsDefault), cl::cat(category)),
      batchTile("batch-tile",
                cl::desc("Rows per register tile of the kernels' GEMMs "
                         "(1..8; default: as many as the target's vector "
                         "registers hold)"),
                cl::init(0), cl::cat(category)),
      gemmChunkSteps("gemm-chunk-steps",
                     cl::desc("Steps per chunk of the kernels' hoisted input "
                              "GEMM, computed just before those steps (0, "
                              "the default: one GEMM over the sequence where "
                              "its projections take at most 32 KiB, else "
                              "chunks of about 32 KiB; N >= the steps: one "
                              "GEMM)"),
                     cl::init(0), cl::cat(category)),
      precision("precision",
                cl::desc("The recurrent layers' precision: f32 (default: the "
                         "model's numbers); bf16 (weights stored as bf16, "
                         "half the bytes; x and h rounded to bf16 for the "
                         "products; accumulation, gates and states in f32); "
                         "or int8 (weights int8 with one scale per gate row, "
                         "a quarter of the bytes; x and h quantized per row "
                         "and step to their range; integer products; gates "
                         "and states in f32). Followed by NODE=PRECISION "
                         "items (comma-separated) for single layers: the "
                         "layer fused from ONNX node NODE (the node its "
                         "remark names) runs at that precision, e.g. "
                         "--precision=int8,/rnn/LSTM_1=f32"),
                cl::value_desc("P[,NODE=P...]"),
                cl::init("f32"), cl::cat(category)),
      state("state",
            cl::desc("The model's state: IN=OUT[,IN=OUT...] pairs a graph "
                     "input with the output the next call reads as it, or "
                     "auto (each input that becomes a recurrent layer's "
                     "initial state, paired with the output computed from "
                     "that layer's final state; a remark lists the pairs). "
                     "A compiled library then has the lstm_opt_stream_* API: "
                     "the state lives in a stream object and leaves the calls"),
            cl::value_desc("pairs|auto"), cl::cat(category)),
      targetCPU("target-cpu",
                cl::desc("The CPU the code is for: host (default: this "
                         "machine), or an LLVM CPU name (x86-64-v3 for "
                         "AVX2, x86-64-v4, znver4, sapphirerapids, ...); "
                         "sets the kernels' vector width and register tile"),
                cl::value_desc("cpu"), cl::init("host"), cl::cat(category)),
      cudnnDataType("cudnn-data-type",
                    cl::desc("cuDNN layers: f32, or f16 (half data, Tensor "
                             "Core math)"),
                    cl::init("f32"), cl::cat(category)),
      cudnnAlgo("cudnn-algo",
                cl::desc("cuDNN layers: auto (per layer, at the first "
                         "call), standard, persist-static (small batch) or "
                         "persist-small-h (small hidden size)"),
                cl::init("auto"), cl::cat(category)),
      gpuChip("gpu-chip",
              cl::desc("GPU kernels: sm_80 (default) or sm_90"),
              cl::init("sm_80"), cl::cat(category)),
      gpuDesign("gpu-design",
                cl::desc("GPU kernels: the recurrence kernel: auto (default: "
                         "persistent at small batch, else one fused kernel "
                         "per step), step or persistent"),
                cl::init("auto"), cl::cat(category)),
      gpuUnitsPerBlock("gpu-units-per-block",
                       cl::desc("GPU kernels: hidden units per block of the "
                                "persistent kernel (default 0: one block per "
                                "direction where the layer fits one, else as "
                                "many blocks as the chip has SMs)"),
                       cl::init(0), cl::cat(category)),
      gpuGridSync("gpu-grid-sync",
                  cl::desc("GPU kernels: how the blocks of the persistent "
                           "kernel hand h to each other: flags (default: "
                           "each value with its step in one 64-bit word) or "
                           "barrier (a grid barrier per step)"),
                  cl::init("flags"), cl::cat(category)),
      gpuWeights("gpu-weights",
                 cl::desc("GPU kernels: where the persistent kernel keeps the "
                          "recurrent weights: registers (default: each lane "
                          "its share, where they fit; else shared memory) or "
                          "shared"),
                 cl::init("registers"), cl::cat(category)) {
  (void)freedThreads;
}

llvm::Expected<std::map<std::string, std::vector<int64_t>>>
CompileOptions::inputShapes() const {
  std::map<std::string, std::vector<int64_t>> out;
  for (const std::string &spec : shapes) {
    auto [name, dims] = llvm::StringRef(spec).rsplit('=');
    std::vector<int64_t> shape;
    llvm::SmallVector<llvm::StringRef> parts;
    if (!dims.empty() && dims != "scalar")
      dims.split(parts, 'x');
    bool ok = !name.empty() && spec.find('=') != std::string::npos;
    for (llvm::StringRef part : parts) {
      int64_t v;
      ok &= !part.getAsInteger(10, v) && v >= 0;
      shape.push_back(v);
    }
    if (!ok)
      return llvm::createStringError("--input-shape takes NAME=D0xD1x..., not '" +
                                     spec + "'");
    out[name.str()] = std::move(shape);
  }
  return out;
}

llvm::Expected<std::map<std::string, std::vector<int64_t>>>
CompileOptions::boundInputs() const {
  std::map<std::string, std::vector<int64_t>> out;
  for (const std::string &spec : bindings) {
    std::string name;
    std::vector<int64_t> values;
    if (!parseInputBinding(spec, name, values))
      return llvm::createStringError("--bind takes NAME=V[,V...] with integer "
                                     "values, not '" + spec + "'");
    out[name] = std::move(values);
  }
  return out;
}

std::vector<std::string> CompileOptions::compileOnlyGiven() const {
  std::vector<std::string> given;
  const llvm::cl::Option *compileOnly[] = {
      &precision, &targetCPU,   &batchTile,        &gemmChunkSteps,
      &cudnnDataType, &cudnnAlgo,
      &gpuChip,   &gpuDesign,   &gpuUnitsPerBlock, &gpuGridSync,   &gpuWeights,
      std::addressof(shapes), &state};
  for (const llvm::cl::Option *o : compileOnly)
    if (o->getNumOccurrences() > 0)
      given.push_back("--" + o->ArgStr.str());
  return given;
}

llvm::Error CompileOptions::fill(cpu::CPUOptions &o) const {
  auto oneOf = [](llvm::StringRef flag, llvm::StringRef value,
                  llvm::ArrayRef<llvm::StringRef> allowed) -> llvm::Error {
    for (llvm::StringRef a : allowed)
      if (value == a)
        return llvm::Error::success();
    std::string list;
    size_t i = 0;
    for (llvm::StringRef a : allowed)
      list += (i++ == 0 ? "" : i == allowed.size() ? " or " : ", ") + a.str();
    return llvm::createStringError("--" + flag.str() + " takes " + list +
                                   ", not '" + value.str() + "'");
  };
  if (batchTile < 0 || batchTile > 8)
    return llvm::createStringError("--batch-tile takes 0 to 8, not " +
                                   std::to_string(batchTile));
  if (gemmChunkSteps < 0)
    return llvm::createStringError("--gemm-chunk-steps takes 0 or more, not " +
                                   std::to_string(gemmChunkSteps));
  // The values each pass takes, from the pass (one list each).
  if (llvm::Error e = oneOf("cudnn-data-type", cudnnDataType, cudnn::dataTypeNames()))
    return e;
  if (llvm::Error e = oneOf("cudnn-algo", cudnnAlgo, cudnn::algoNames()))
    return e;
  if (llvm::Error e = oneOf("gpu-chip", gpuChip, gpu_kernels::chipNames()))
    return e;
  if (llvm::Error e = oneOf("gpu-design", gpuDesign, gpu_kernels::designNames()))
    return e;
  // P[,NODE=P...]: the precision of every layer (f32 when left out), then
  // single layers'.
  bool defaultGiven = false;
  o.precision = "f32";
  o.layerPrecisions.clear();
  llvm::SmallVector<llvm::StringRef> items;
  if (precision.getNumOccurrences() > 0)
    llvm::StringRef(precision).split(items, ',');
  for (llvm::StringRef item : items) {
    auto [node, p] = item.rsplit('=');
    bool perLayer = item.contains('=');
    if (llvm::Error e = oneOf("precision", perLayer ? p : item,
                              {"f32", "bf16", "int8"}))
      return e;
    if (perLayer) {
      if (node.empty())
        return llvm::createStringError("--precision: '" + item.str() +
                                       "' names no node (NODE=PRECISION)");
      o.layerPrecisions.push_back(item.str());
      continue;
    }
    if (defaultGiven)
      return llvm::createStringError(
          "--precision takes one precision for every layer, then "
          "NODE=PRECISION items; '" + precision + "' has two");
    defaultGiven = true;
    o.precision = item.str();
  }
  o.statePairs = state;
  // A quantized layer runs int8 unless a precision was asked for (for
  // every layer; a NODE=PRECISION item sets that layer's).
  o.quantizedInt8 = !defaultGiven;
  o.threads = threadsOpt;
  o.batchTile = batchTile;
  o.gemmChunkSteps = gemmChunkSteps;
  o.targetCPU = targetCPU;
  o.cudnnDataType = cudnnDataType;
  o.cudnnAlgo = cudnnAlgo;
  o.gpuChip = gpuChip;
  o.gpuKernelsDesign = gpuDesign;
  if (gpuUnitsPerBlock < 0)
    return llvm::createStringError("--gpu-units-per-block takes 0 or more, not " +
                                   std::to_string(gpuUnitsPerBlock));
  o.gpuUnitsPerBlock = gpuUnitsPerBlock;
  if (llvm::Error e = oneOf("gpu-grid-sync", gpuGridSync, {"flags", "barrier"}))
    return e;
  o.gpuGridSync = gpuGridSync;
  if (llvm::Error e = oneOf("gpu-weights", gpuWeights, {"registers", "shared"}))
    return e;
  o.gpuWeights = gpuWeights;
  return llvm::Error::success();
}
