//===- RNNOps.td - rnn dialect operations ------------------*- tablegen -*-===//

#ifndef LSTM_OPT_DIALECT_RNN_IR_RNNOPS_TD
#define LSTM_OPT_DIALECT_RNN_IR_RNNOPS_TD

include "lstm-opt/Dialect/RNN/IR/RNNBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class RNN_Op<string mnemonic, list<Trait> traits = []>
    : Op<RNN_Dialect, mnemonic, !listconcat([Pure], traits)>;

// Activation functions with their ONNX names and parameters, as on ONNX's
// LSTM/GRU/RNN: `activations` lists the functions (per direction), absent
// means the cell's defaults.
defvar RNN_ActivationAttrs = (ins
    OptionalAttr<StrArrayAttr>:$activations,
    OptionalAttr<DenseF32ArrayAttr>:$activation_alpha,
    OptionalAttr<DenseF32ArrayAttr>:$activation_beta,
    OptionalAttr<F32Attr>:$clip);

// The LSTM variants of ONNX's LSTM, carried by the LSTM cell and layer ops
// (an error on any other cell): `input_forget` couples the forget gate to
// the input gate, f = 1 - i (the forget gate's weights are then unused);
// `peephole` adds `P * c` to the pre-activations of i and f (the cell
// state before the step) and of o (the state after it).
defvar RNN_LSTMVariantAttrs = (ins UnitAttr:$input_forget);

//===----------------------------------------------------------------------===//
// One time step
//===----------------------------------------------------------------------===//

def RNN_LSTMCellOp : RNN_Op<"lstm_cell"> {
  let summary = "one LSTM step";
  let description = [{
    With `gates = x W^T + Bw + h R^T + Br` split into `i, f, g, o`:
    `c' = f(f) * c + f(i) * g(g)`, `h' = f(o) * h(c')` where the activations
    `f, g, h` default to Sigmoid, Tanh, Tanh.

    With `peephole(%P)` (`P [3*H]`, gates `i, f, o`), `P_i * c` and
    `P_f * c` are added to the pre-activations of `i` and `f`, and
    `P_o * c'` to `o`'s. With `input_forget`, `f(f)` is replaced by
    `1 - f(i)`.

    ```mlir
    %h1, %c1 = rnn.lstm_cell %x, %h0, %c0, %W, %R, %Bw, %Br : (tensor<1x8xf32>, tensor<1x16xf32>, tensor<1x16xf32>, tensor<64x8xf32>, tensor<64x16xf32>, tensor<64xf32>, tensor<64xf32>) -> (tensor<1x16xf32>, tensor<1x16xf32>)

    States and results are `[B, H]`; their types may differ in what they
    know statically (a dynamic batch on one, static on another).
    ```
  }];
  let arguments = !con((ins AnyRankedTensor:$x, AnyRankedTensor:$h,
                            AnyRankedTensor:$c, AnyRankedTensor:$W,
                            AnyRankedTensor:$R, AnyRankedTensor:$Bw,
                            AnyRankedTensor:$Br,
                            Optional<AnyRankedTensor>:$peephole),
                       RNN_ActivationAttrs, RNN_LSTMVariantAttrs);
  let results = (outs AnyRankedTensor:$h_out, AnyRankedTensor:$c_out);
  let assemblyFormat = [{
    $x `,` $h `,` $c `,` $W `,` $R `,` $Bw `,` $Br
    (`peephole` `(` $peephole^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def RNN_GRUCellOp : RNN_Op<"gru_cell"> {
  let summary = "one GRU step";
  let description = [{
    With gate order `r, z, n`: `r = f(x Wr^T + Bwr + h Rr^T + Brr)`,
    `z = f(x Wz^T + Bwz + h Rz^T + Brz)`,
    `n = g(x Wn^T + Bwn + r * (h Rn^T + Brn))` if `linear_before_reset`,
    else `g(x Wn^T + Bwn + (r * h) Rn^T + Brn)`; `h' = (1 - z) * n + z * h`.
  }];
  let arguments = !con((ins AnyRankedTensor:$x, AnyRankedTensor:$h,
                            AnyRankedTensor:$W, AnyRankedTensor:$R,
                            AnyRankedTensor:$Bw, AnyRankedTensor:$Br,
                            UnitAttr:$linear_before_reset), RNN_ActivationAttrs);
  let results = (outs AnyRankedTensor:$h_out);
  let assemblyFormat = [{
    $x `,` $h `,` $W `,` $R `,` $Bw `,` $Br attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def RNN_RNNCellOp : RNN_Op<"rnn_cell"> {
  let summary = "one simple RNN step";
  let description = [{
    `h' = f(x W^T + Bw + h R^T + Br)`, `f` Tanh by default (or Relu, ...).
  }];
  let arguments = !con((ins AnyRankedTensor:$x, AnyRankedTensor:$h,
                            AnyRankedTensor:$W, AnyRankedTensor:$R,
                            AnyRankedTensor:$Bw, AnyRankedTensor:$Br),
                       RNN_ActivationAttrs);
  let results = (outs AnyRankedTensor:$h_out);
  let assemblyFormat = [{
    $x `,` $h `,` $W `,` $R `,` $Bw `,` $Br attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Whole layers
//===----------------------------------------------------------------------===//

def RNN_SequenceOp : RNN_Op<"sequence", [AttrSizedOperandSegments]> {
  let summary = "a whole recurrent layer: the time loop over one cell";
  let description = [{
    Runs `cell` over `X [T, B, I]` in `direction`, from initial states `h0`
    (and `c0` for LSTM) `[D, B, H]`, zeros where absent. Weights per
    direction: `W [D, G*H, I]`, `R [D, G*H, H]`, `Bw`/`Br [D, G*H]`, in the
    canonical gate order. With `sequence_lens [B]` (i32), batch entry `b` runs
    `sequence_lens[b]` steps; `Y` is zero past them and the final states are
    those of the last step run. Results: `Y [T, D, B, H]`, `h_n [D, B, H]`
    and, for LSTM, `c_n [D, B, H]`. An LSTM layer may carry peephole
    weights `peephole [D, 3*H]` (gates `i, f, o`) and `input_forget`, as on
    `rnn.lstm_cell`.

    ```mlir
    %y, %hn, %cn = rnn.sequence lstm forward %X, %W, %R, %Bw, %Br init(%h0, %c0) {hidden_size = 16 : i64} : (tensor<5x1x8xf32>, tensor<1x64x8xf32>, tensor<1x64x16xf32>, tensor<1x64xf32>, tensor<1x64xf32>, tensor<1x1x16xf32>, tensor<1x1x16xf32>) -> (tensor<5x1x1x16xf32>, tensor<1x1x16xf32>, tensor<1x1x16xf32>)
    ```
  }];
  let arguments = !con((ins RNN_CellKindAttr:$cell, RNN_DirectionAttr:$direction,
                            I64Attr:$hidden_size, UnitAttr:$linear_before_reset,
                            AnyRankedTensor:$X, AnyRankedTensor:$W,
                            AnyRankedTensor:$R, AnyRankedTensor:$Bw,
                            AnyRankedTensor:$Br,
                            Optional<AnyRankedTensor>:$h0,
                            Optional<AnyRankedTensor>:$c0,
                            Optional<AnyRankedTensor>:$sequence_lens,
                            Optional<AnyRankedTensor>:$peephole),
                       RNN_ActivationAttrs, RNN_LSTMVariantAttrs);
  let results = (outs AnyRankedTensor:$Y, AnyRankedTensor:$h_n,
                      Optional<AnyRankedTensor>:$c_n);
  let assemblyFormat = [{
    custom<CellAndDirection>($cell, $direction) $X `,` $W `,` $R `,` $Bw `,` $Br
    (`init` `(` $h0^ (`,` $c0^)? `)`)? (`lens` `(` $sequence_lens^ `)`)?
    (`peephole` `(` $peephole^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNumDirections() {
      return getDirection() == Direction::Bidirectional ? 2 : 1;
    }
    int64_t getNumGates();
  }];
}

def RNN_StackOp : RNN_Op<"stack", [AttrSizedOperandSegments]> {
  let summary = "several layers of one cell stacked: each reads the one below";
  let description = [{
    `num_layers` layers of the same cell, size and direction; layer `k + 1`
    reads layer `k`'s Y as its input (`[T, B, D*H]`, directions concatenated
    on the feature axis, forward first). What cuDNN runs as one call.

    * `W0 [D, G*H, I]`: layer 0's input weights;
    * `Wn [L-1, D, G*H, D*H]`: the input weights of layers 1 .. L-1;
    * `R [L, D, G*H, H]`, `Bw`/`Br [L, D, G*H]`;
    * `h0`/`c0 [L*D, B, H]`, layer-major (layer 0's directions first);
    * results: the top layer's `Y [T, D, B, H]`, `h_n`/`c_n [L*D, B, H]`.

    ```mlir
    %y, %hn, %cn = rnn.stack lstm forward %x, %w0, %wn, %r, %bw, %br {hidden_size = 16 : i64, num_layers = 2 : i64} : (...) -> (...)
    ```
  }];
  let arguments = !con((ins RNN_CellKindAttr:$cell, RNN_DirectionAttr:$direction,
                            I64Attr:$hidden_size, I64Attr:$num_layers,
                            UnitAttr:$linear_before_reset,
                            AnyRankedTensor:$X, AnyRankedTensor:$W0,
                            AnyRankedTensor:$Wn, AnyRankedTensor:$R,
                            AnyRankedTensor:$Bw, AnyRankedTensor:$Br,
                            Optional<AnyRankedTensor>:$h0,
                            Optional<AnyRankedTensor>:$c0,
                            Optional<AnyRankedTensor>:$sequence_lens),
                       RNN_ActivationAttrs);
  let results = (outs AnyRankedTensor:$Y, AnyRankedTensor:$h_n,
                      Optional<AnyRankedTensor>:$c_n);
  let assemblyFormat = [{
    custom<CellAndDirection>($cell, $direction) $X `,` $W0 `,` $Wn `,` $R `,`
    $Bw `,` $Br (`init` `(` $h0^ (`,` $c0^)? `)`)?
    (`lens` `(` $sequence_lens^ `)`)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNumDirections() {
      return getDirection() == Direction::Bidirectional ? 2 : 1;
    }
  }];
}

def RNN_InputProjectionOp : RNN_Op<"input_projection"> {
  let summary = "the input GEMM of a layer, hoisted out of the time loop";
  let description = [{
    `P[d, t, b, :] = X[t, b, :] W[d]^T + Bw[d]` for all steps at once: one
    `[T*B, I] x [I, G*H]` GEMM per direction instead of T small ones.
    Result `[D, T, B, G*H]`.
  }];
  let arguments = (ins AnyRankedTensor:$X, AnyRankedTensor:$W,
                       AnyRankedTensor:$Bw);
  let results = (outs AnyRankedTensor:$P);
  let assemblyFormat = [{
    $X `,` $W `,` $Bw attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def RNN_RecurrenceOp : RNN_Op<"recurrence", [AttrSizedOperandSegments]> {
  let summary = "the time loop of a layer over a precomputed input projection";
  let description = [{
    `rnn.sequence` with the input GEMM hoisted: per step only
    `h R^T + Br` is computed and added to `P[d, t]` (from
    `rnn.input_projection`) before the cell's pointwise math. An LSTM's
    `peephole` and `input_forget` are as on `rnn.sequence`.
  }];
  let arguments = !con((ins RNN_CellKindAttr:$cell, RNN_DirectionAttr:$direction,
                            I64Attr:$hidden_size, UnitAttr:$linear_before_reset,
                            AnyRankedTensor:$P, AnyRankedTensor:$R,
                            AnyRankedTensor:$Br,
                            Optional<AnyRankedTensor>:$h0,
                            Optional<AnyRankedTensor>:$c0,
                            Optional<AnyRankedTensor>:$sequence_lens,
                            Optional<AnyRankedTensor>:$peephole),
                       RNN_ActivationAttrs, RNN_LSTMVariantAttrs);
  let results = (outs AnyRankedTensor:$Y, AnyRankedTensor:$h_n,
                      Optional<AnyRankedTensor>:$c_n);
  let assemblyFormat = [{
    custom<CellAndDirection>($cell, $direction) $P `,` $R `,` $Br
    (`init` `(` $h0^ (`,` $c0^)? `)`)? (`lens` `(` $sequence_lens^ `)`)?
    (`peephole` `(` $peephole^ `)`)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNumDirections() {
      return getDirection() == Direction::Bidirectional ? 2 : 1;
    }
  }];
}

#endif // LSTM_OPT_DIALECT_RNN_IR_RNNOPS_TD
