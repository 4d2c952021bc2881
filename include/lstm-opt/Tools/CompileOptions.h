//===- CompileOptions.h - options lstm-opt and lstm-run share ---*- C++ -*-===//
//
// The command-line options that say how a model is compiled, declared once
// for both drivers (lstm-opt compiles ahead of time, lstm-run just in time):
// input shapes and bound inputs, threads, the target CPU and register tile,
// cuDNN and GPU kernel settings. Each driver keeps only the options that are
// its own (lstm-opt: --target, -o, reports; lstm-run: --inputs, --bench, ...).
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_TOOLS_COMPILEOPTIONS_H
#define LSTM_OPT_TOOLS_COMPILEOPTIONS_H

#include "lstm-opt/Target/CPU/CPUBackend.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace lstm_opt {

/// Registered when constructed (once per process, in the driver's main,
/// before parsing the command line); the values are read after parsing.
class CompileOptions {
public:
  /// `threadsDefault`: what --threads is when not given (lstm-opt: 1;
  /// lstm-run: 0, meaning all cores).
  CompileOptions(llvm::cl::OptionCategory &category, unsigned threadsDefault,
                 llvm::StringRef threadsDefaultText);

  /// --input-shape NAME=D0xD1x... (repeatable; "NAME=scalar" for rank 0),
  /// parsed; an error names the malformed value.
  llvm::Expected<std::map<std::string, std::vector<int64_t>>>
  inputShapes() const;
  /// --bind NAME=V[,V...] (repeatable), parsed.
  llvm::Expected<std::map<std::string, std::vector<int64_t>>>
  boundInputs() const;
  bool hasBindings() const { return !bindings.empty(); }

  /// Checks the values and sets the fields of `o` these options own
  /// (threads as given: 0 when not given to lstm-run). An error names the
  /// option and the value.
  llvm::Error fill(cpu::CPUOptions &o) const;

  unsigned threads() const { return threadsOpt; }
  bool threadsGiven() const { return threadsOpt.getNumOccurrences() > 0; }
  bool targetCPUGiven() const { return targetCPU.getNumOccurrences() > 0; }
  /// The options given that only compiling reads (--precision,
  /// --target-cpu, --batch-tile, the cuDNN and GPU kernel choices), as
  /// "--name" each: a compiled library cannot take them.
  std::vector<std::string> compileOnlyGiven() const;
  llvm::StringRef targetCPUName() const { return targetCPU; }

private:
  /// libLLVM registers a hidden "threads" option of its own: unregistered
  /// before ours is made (this member is initialised first).
  bool freedThreads;
  /// --threads' description (cl::desc keeps a reference to it).
  std::string threadsDesc;
  llvm::cl::list<std::string> shapes;
  llvm::cl::list<std::string> bindings;
  llvm::cl::opt<unsigned> threadsOpt;
  llvm::cl::opt<int> batchTile;
  llvm::cl::opt<int> gemmChunkSteps;
  llvm::cl::opt<std::string> precision;
  llvm::cl::opt<std::string> state;
  llvm::cl::opt<std::string> targetCPU;
  llvm::cl::opt<std::string> cudnnDataType;
  llvm::cl::opt<std::string> cudnnAlgo;
  llvm::cl::opt<std::string> gpuChip;
  llvm::cl::opt<std::string> gpuDesign;
  llvm::cl::opt<int64_t> gpuUnitsPerBlock;
  llvm::cl::opt<std::string> gpuGridSync;
  llvm::cl::opt<std::string> gpuWeights;
};

} // namespace lstm_opt

#endif // LSTM_OPT_TOOLS_COMPILEOPTIONS_H
