//===- Passes.h - lstm-opt conversion passes --------------------*- C++ -*-===//

#ifndef LSTM_OPT_CONVERSION_PASSES_H
#define LSTM_OPT_CONVERSION_PASSES_H

#include "lstm-opt/Conversion/RNNToCPU/RNNToCPU.h"
#include "lstm-opt/Conversion/RNNToCUDNN/RNNToCUDNN.h"
#include "lstm-opt/Conversion/RNNToGPU/RNNToGPU.h"
#include "lstm-opt/Conversion/ONNXToLinalg/ONNXToLinalg.h"
#include "lstm-opt/Conversion/RNNToONNX/RNNToONNX.h"
#include "lstm-opt/Conversion/RNNToLinalg/RNNToLinalg.h"

namespace lstm_opt {

#define GEN_PASS_REGISTRATION
#include "lstm-opt/Conversion/Passes.h.inc"

} // namespace lstm_opt

#endif // LSTM_OPT_CONVERSION_PASSES_H
