//===- IREECompile.cpp - --target=iree -o m.vmfb --------------------------===//
//
// lstm-opt's IREE input compiled to a .vmfb in the same process, through the
// IREE compiler's C embedding API (libIREECompiler.so, loaded at run time:
// lstm-opt does not link IREE, whose LLVM is not the one lstm-opt uses).
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Tools/IREECompile.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <string>
#include <vector>

using namespace llvm;

namespace {

// The C API's opaque types and the functions used, as the embedding API
// (iree/compiler/embedding_api.h, API major version 1) declares them.
struct ApiError;
struct Session;
struct Invocation;
struct Source;
struct Output;
enum Severity { Note = 0, Warning = 1, SeverityError = 2, Remark = 3 };
using DiagCallback = void (*)(Severity, const char *, size_t, void *);

struct API {
  int (*getAPIVersion)();
  void (*globalInitialize)();
  const char *(*errorGetMessage)(ApiError *);
  void (*errorDestroy)(ApiError *);
  Session *(*sessionCreate)();
  void (*sessionDestroy)(Session *);
  ApiError *(*sessionSetFlags)(Session *, int, const char *const *);
  Invocation *(*invocationCreate)(Session *);
  void (*invocationDestroy)(Invocation *);
  void (*enableCallbackDiagnostics)(Invocation *, int, DiagCallback, void *);
  bool (*parseSource)(Invocation *, Source *);
  bool (*pipeline)(Invocation *, int);
  ApiError *(*outputVMBytecode)(Invocation *, Output *);
  ApiError *(*sourceWrapBuffer)(Session *, const char *, const char *, size_t, bool,
                             Source **);
  void (*sourceDestroy)(Source *);
  ApiError *(*outputOpenFile)(const char *, Output **);
  void (*outputKeep)(Output *);
  void (*outputDestroy)(Output *);
};

template <typename F>
bool bind(sys::DynamicLibrary &lib, const char *name, F &fn, std::string &why) {
  fn = reinterpret_cast<F>(lib.getAddressOfSymbol(name));
  if (!fn)
    why = std::string("it has no ") + name;
  return fn != nullptr;
}

/// The libIREECompiler.so of a Python environment whose bin/ holds `bin`.
std::string inPythonEnv(StringRef binDir) {
  SmallString<256> lib(binDir);
  sys::path::remove_filename(lib); // drop bin/ (binDir has no trailing /)
  sys::path::append(lib, "lib");
  std::error_code ec;
  for (sys::fs::directory_iterator it(lib, ec), end; !ec && it != end;
       it.increment(ec)) {
    StringRef name = sys::path::filename(it->path());
    if (!name.starts_with("python3"))
      continue;
    SmallString<256> so(it->path());
    sys::path::append(so, "site-packages", "iree", "compiler");
    sys::path::append(so, "_mlir_libs", "libIREECompiler.so");
    if (sys::fs::exists(so))
      return std::string(so);
  }
  return {};
}

} // namespace

std::string lstm_opt::findIREECompilerLibrary(StringRef given,
                                              StringRef argv0) {
  if (!given.empty())
    return given.str();
  if (const char *env = std::getenv("IREE_COMPILER_LIB"))
    return env;
  // Beside an iree-compile on PATH (a pip environment's bin/).
  if (auto exe = sys::findProgramByName("iree-compile")) {
    SmallString<256> dir(*exe);
    sys::path::remove_filename(dir);
    if (auto so = inPythonEnv(dir); !so.empty())
      return so;
  }
  // The project's .venv (build/bin/lstm-opt -> .venv/).
  std::string self = sys::fs::getMainExecutable(argv0.str().c_str(), nullptr);
  if (!self.empty()) {
    SmallString<256> venv(self);
    for (int i = 0; i < 3; ++i)
      sys::path::remove_filename(venv);
    sys::path::append(venv, ".venv", "bin");
    if (auto so = inPythonEnv(venv); !so.empty())
      return so;
  }
  return {};
}

LogicalResult lstm_opt::compileWithIREE(StringRef mlir, StringRef inputName,
                                        StringRef outputPath, StringRef libPath,
                                        ArrayRef<std::string> extraFlags) {
  auto fail = [&](const Twine &why) {
    errs() << inputName << ": error: --target=iree -o " << outputPath << ": "
           << why << "\n";
    return failure();
  };
  if (libPath.empty())
    return fail("the IREE compiler library (libIREECompiler.so) was not found "
                "(give --iree-compiler-lib=PATH or IREE_COMPILER_LIB; pip "
                "install iree-base-compiler provides it), or write .mlir and "
                "run iree-compile");
  std::string err;
  auto lib = sys::DynamicLibrary::getPermanentLibrary(libPath.str().c_str(), &err);
  if (!lib.isValid())
    return fail("cannot load " + libPath + ": " + err);
  API api;
  std::string why;
  if (!bind(lib, "ireeCompilerGetAPIVersion", api.getAPIVersion, why) ||
      !bind(lib, "ireeCompilerGlobalInitialize", api.globalInitialize, why) ||
      !bind(lib, "ireeCompilerErrorGetMessage", api.errorGetMessage, why) ||
      !bind(lib, "ireeCompilerErrorDestroy", api.errorDestroy, why) ||
      !bind(lib, "ireeCompilerSessionCreate", api.sessionCreate, why) ||
      !bind(lib, "ireeCompilerSessionDestroy", api.sessionDestroy, why) ||
      !bind(lib, "ireeCompilerSessionSetFlags", api.sessionSetFlags, why) ||
      !bind(lib, "ireeCompilerInvocationCreate", api.invocationCreate, why) ||
      !bind(lib, "ireeCompilerInvocationDestroy", api.invocationDestroy, why) ||
      !bind(lib, "ireeCompilerInvocationEnableCallbackDiagnostics",
            api.enableCallbackDiagnostics, why) ||
      !bind(lib, "ireeCompilerInvocationParseSource", api.parseSource, why) ||
      !bind(lib, "ireeCompilerInvocationPipeline", api.pipeline, why) ||
      !bind(lib, "ireeCompilerInvocationOutputVMBytecode", api.outputVMBytecode,
            why) ||
      !bind(lib, "ireeCompilerSourceWrapBuffer", api.sourceWrapBuffer, why) ||
      !bind(lib, "ireeCompilerSourceDestroy", api.sourceDestroy, why) ||
      !bind(lib, "ireeCompilerOutputOpenFile", api.outputOpenFile, why) ||
      !bind(lib, "ireeCompilerOutputKeep", api.outputKeep, why) ||
      !bind(lib, "ireeCompilerOutputDestroy", api.outputDestroy, why))
    return fail(libPath + " is not an IREE compiler library: " + why);
  int version = api.getAPIVersion();
  if ((version >> 16) != 1)
    return fail(libPath + " has IREE compiler API version " +
                Twine(version >> 16) + "." + Twine(version & 0xffff) +
                "; lstm-opt speaks 1.x");
  api.globalInitialize();

  Session *session = api.sessionCreate();
  Invocation *inv = nullptr;
  Source *source = nullptr;
  Output *output = nullptr;
  auto cleanup = [&] {
    if (output)
      api.outputDestroy(output); // not kept: the file is removed
    if (source)
      api.sourceDestroy(source);
    if (inv)
      api.invocationDestroy(inv);
    api.sessionDestroy(session);
  };
  auto apiError = [&](ApiError *e, const Twine &what) {
    // One line: IREE's messages span several ("Error parsing flags:\n  ...").
    std::string msg;
    for (StringRef line : llvm::split(StringRef(api.errorGetMessage(e)), '\n'))
      if (!line.trim().empty())
        msg += (msg.empty() ? "" : " ") + line.trim().str();
    api.errorDestroy(e);
    cleanup();
    return fail(what + ": " + msg);
  };
  std::vector<std::string> flags = {
      "--iree-input-type=none", "--iree-hal-target-device=local",
      "--iree-hal-local-target-device-backends=llvm-cpu",
      "--iree-llvmcpu-target-cpu=host"};
  flags.insert(flags.end(), extraFlags.begin(), extraFlags.end());
  std::vector<const char *> argv;
  for (const std::string &f : flags)
    argv.push_back(f.c_str());
  if (ApiError *e = api.sessionSetFlags(session, (int)argv.size(), argv.data()))
    return apiError(e, "the IREE flags");
  inv = api.invocationCreate(session);
  std::string diagnostics;
  api.enableCallbackDiagnostics(
      inv, 0,
      [](Severity s, const char *msg, size_t n, void *user) {
        if (s == SeverityError || s == Warning)
          static_cast<std::string *>(user)->append(msg, n).append("\n");
      },
      &diagnostics);
  std::string text = mlir.str();
  if (ApiError *e = api.sourceWrapBuffer(session, inputName.str().c_str(),
                                      text.c_str(), text.size() + 1, true,
                                      &source))
    return apiError(e, "the module");
  if (!api.parseSource(inv, source)) {
    cleanup();
    return fail("IREE cannot parse the module: " + diagnostics);
  }
  if (!api.pipeline(inv, /*IREE_COMPILER_PIPELINE_STD=*/0)) {
    cleanup();
    return fail("IREE failed to compile the module: " + diagnostics);
  }
  if (ApiError *e = api.outputOpenFile(outputPath.str().c_str(), &output))
    return apiError(e, "cannot open the output");
  if (ApiError *e = api.outputVMBytecode(inv, output))
    return apiError(e, "cannot write the VM bytecode");
  api.outputKeep(output);
  api.outputDestroy(output);
  output = nullptr;
  cleanup();
  return success();
}
