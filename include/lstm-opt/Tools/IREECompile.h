//===- IREECompile.h - --target=iree -o m.vmfb ----------------------------===//

#ifndef LSTM_OPT_TOOLS_IREECOMPILE_H
#define LSTM_OPT_TOOLS_IREECOMPILE_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace lstm_opt {

/// The IREE compiler library to load: `given`, else $IREE_COMPILER_LIB, else
/// the libIREECompiler.so of the Python environment holding the
/// iree-compile on PATH, else that of the project's .venv beside the
/// executable (`argv0`). Empty when none is found.
std::string findIREECompilerLibrary(llvm::StringRef given, llvm::StringRef argv0);

/// Compiles `mlir` (lstm-opt's --target=iree module, as text) into a .vmfb
/// at `outputPath` through the IREE compiler's C embedding API in
/// `libPath` (llvm-cpu for this host, then `extraFlags`). On failure the
/// error names `inputName` and no output file is left.
mlir::LogicalResult compileWithIREE(llvm::StringRef mlir, llvm::StringRef inputName,
                                    llvm::StringRef outputPath,
                                    llvm::StringRef libPath,
                                    llvm::ArrayRef<std::string> extraFlags);

} // namespace lstm_opt

#endif // LSTM_OPT_TOOLS_IREECOMPILE_H
