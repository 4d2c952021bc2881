//===- LstmOptMain.h - the lstm-opt driver ----------------------*- C++ -*-===//
//
// `lstm-opt IN.{onnx,onnxtext,mlir} [-o OUT.{onnx,onnxtext,mlir}] [passes]
//  [--report[=json]]`. On .mlir input with .mlir output it is mlir-opt (lit
// uses that); with ONNX on either side it imports, runs the passes (the
// default pipeline when none is named), and exports.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_TOOLS_LSTMOPTMAIN_H
#define LSTM_OPT_TOOLS_LSTMOPTMAIN_H

namespace lstm_opt {

/// Runs the lstm-opt driver; returns the process exit code.
int lstmOptMain(int argc, char **argv);

} // namespace lstm_opt

#endif // LSTM_OPT_TOOLS_LSTMOPTMAIN_H
