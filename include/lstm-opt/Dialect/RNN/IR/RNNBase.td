//===- RNNBase.td - rnn dialect definition -----------------*- tablegen -*-===//

#ifndef LSTM_OPT_DIALECT_RNN_IR_RNNBASE_TD
#define LSTM_OPT_DIALECT_RNN_IR_RNNBASE_TD

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/OpBase.td"

def RNN_Dialect : Dialect {
  let name = "rnn";
  let cppNamespace = "::lstm_opt::rnn";
  let summary = "Recurrent cells and layers in one canonical form";
  let description = [{
    The `rnn` dialect holds what lstm-opt recognised: single steps of a cell
    (`rnn.lstm_cell`, `rnn.gru_cell`, `rnn.rnn_cell`) and whole layers
    (`rnn.sequence`), optionally split into the hoisted input projection and
    the recurrence (`rnn.input_projection` + `rnn.recurrence`).

    Weights live in one canonical layout (docs/Dialects/RNNRationale.md):

    * gate order: LSTM `i, f, g, o`; GRU `r, z, n`; RNN one gate;
    * per direction, `W` is `[G*H, I]` and `R` is `[G*H, H]`, gate `k`
      occupying rows `k*H .. (k+1)*H` (so `gates = x W^T + h R^T`);
    * two biases `Bw` (input) and `Br` (recurrent), each `[G*H]`, kept apart
      because GRU's `linear_before_reset` needs `Br` of the `n` gate apart;
    * layers are time-major: `X` is `[T, B, I]`, `Y` is `[T, D, B, H]`,
      states are `[D, B, H]` (D = 2 for bidirectional, forward first).

    Every backend (ONNX, cuDNN, CPU) converts from this form.
  }];
  let useDefaultAttributePrinterParser = 1;
}

def RNN_CellKind : I32EnumAttr<"CellKind", "recurrent cell kind", [
    I32EnumAttrCase<"LSTM", 0, "lstm">,
    I32EnumAttrCase<"GRU", 1, "gru">,
    I32EnumAttrCase<"RNN", 2, "rnn">]> {
  let cppNamespace = "::lstm_opt::rnn";
  let genSpecializedAttr = 0;
}
def RNN_CellKindAttr : EnumAttr<RNN_Dialect, RNN_CellKind, "cell">;

def RNN_Direction : I32EnumAttr<"Direction", "time direction of a layer", [
    I32EnumAttrCase<"Forward", 0, "forward">,
    I32EnumAttrCase<"Reverse", 1, "reverse">,
    I32EnumAttrCase<"Bidirectional", 2, "bidirectional">]> {
  let cppNamespace = "::lstm_opt::rnn";
  let genSpecializedAttr = 0;
}
def RNN_DirectionAttr : EnumAttr<RNN_Dialect, RNN_Direction, "direction">;

#endif // LSTM_OPT_DIALECT_RNN_IR_RNNBASE_TD
