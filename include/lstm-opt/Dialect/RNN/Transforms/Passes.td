//===- Passes.td - rnn dialect passes ----------------------*- tablegen -*-===//

#ifndef LSTM_OPT_DIALECT_RNN_TRANSFORMS_PASSES_TD
#define LSTM_OPT_DIALECT_RNN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def RNNUnrollRecurrentLoopsPass
    : Pass<"rnn-unroll-recurrent-loops", "mlir::ModuleOp"> {
  let summary = "Unroll ONNX Loop/Scan nodes whose body is a recurrent step";
  let description = [{
    An ONNX `Loop` or `Scan` at the top level of the graph whose body is one
    step of a recurrence (a value the loop carries and changes reaches a
    MatMul/Gemm whose result reaches Sigmoid/Tanh/Relu) and whose number of
    iterations is known at compile time (a constant trip count, a condition
    that folds at every iteration, or the static length of the scanned axis)
    becomes that many copies of its body chained through the carried values,
    with per-iteration outputs stacked by Unsqueeze + Concat: the unrolled
    form that rnn-recognize-cells and rnn-roll-time-loop turn into one layer.
    Exact: the copies are the body's ops. Other loops are left alone (with a
    remark when the body is recurrent). See
    docs/passes/rnn-unroll-recurrent-loops.md.
  }];
  let dependentDialects = ["lstm_opt::onnx::ONNXDialect"];
  let options = [
    Option<"maxTrips", "max-trips", "int64_t", "4096",
           "Unroll only loops of at most this many iterations">,
    Option<"maxOps", "max-ops", "int64_t", "200000",
           "Unroll only if at most this many ops are copied in all">,
  ];
  let statistics = [
    Statistic<"numUnrolled", "unrolled", "Number of loops unrolled">,
  ];
}

def ONNXInferShapesPass : Pass<"onnx-infer-shapes", "mlir::ModuleOp"> {
  let summary = "Fill in unknown onnx types from the ops' shape rules";
  let description = [{
    Gives each result of a typed onnx op whose declared type is less precise
    than its shape rule's (an unknown rank or dimension) the rule's type,
    walking the graph in order so that what one op learns its users see
    (onnx::refineShapes). Integer operands computed from constants and
    static shapes (Shape -> Gather -> Concat -> Reshape) are evaluated. A
    graph output keeps its declared type, as does a value that a subgraph
    or an op of another dialect reads; what is inferred for it still flows
    on to its onnx users. The importer runs the same refinement where the
    ONNX library's shape inference failed or does not know the model's
    opset. With `graph-outputs`, graph outputs are refined too and the
    function's type follows (the compiled targets, which need static
    outputs). See docs/passes/onnx-infer-shapes.md.
  }];
  let dependentDialects = ["lstm_opt::onnx::ONNXDialect"];
  let options = [
    Option<"graphOutputs", "graph-outputs", "bool", /*default=*/"false",
           "Also refine the graph outputs' types (the function's type follows)">,
  ];
  let statistics = [
    Statistic<"numRefined", "refined", "Number of results given a more precise type">,
  ];
}

def ONNXStreamToSequencePass : Pass<"onnx-stream-to-sequence", "mlir::ModuleOp"> {
  let summary = "A streaming model that takes N chunks in one call (an ONNX Loop)";
  let description = [{
    For a model called once per chunk with its state passed in and out
    (silero-vad: `input`, `state` -> `output`, `stateN`): rewrites the graph
    into one that takes `chunks` chunks at once. Each non-state input gains a
    leading axis of `chunks`; each state input stays the initial state; the
    body becomes an ONNX `Loop` of `chunks` iterations whose loop-carried
    values are the states and whose scan outputs stack the other outputs
    (a leading axis of `chunks`); the state outputs are the final states.
    Running it equals `chunks` successive calls of the original, the state
    carried by hand. Initializers stay in the outer graph. `state` names the
    pairs (`IN=OUT[,IN=OUT...]`, graph input and output names) or `auto`:
    each graph input that reaches a recurrent layer's initial state, paired
    with the output of the same type computed from that layer's final
    state. See docs/passes/onnx-stream-to-sequence.md.
  }];
  let dependentDialects = ["lstm_opt::onnx::ONNXDialect"];
  let options = [
    Option<"chunks", "chunks", "int64_t", /*default=*/"0",
           "How many chunks one call takes (at least 1)">,
    Option<"state", "state", "std::string", /*default=*/"\"auto\"",
           "The state pairs: IN=OUT[,IN=OUT...] or auto">,
    Option<"form", "form", "std::string", /*default=*/"\"auto\"",
           "auto (batched where the graph allows it, else a Loop), batched "
           "(an error where it does not) or loop">,
  ];
}

def RNNRecognizeCellsPass : Pass<"rnn-recognize-cells", "mlir::ModuleOp"> {
  let summary = "Find recurrent cells in onnx IR by their equations";
  let description = [{
    Replaces the onnx ops of one step of a cell by `rnn.lstm_cell`,
    `rnn.gru_cell` or `rnn.rnn_cell` with the weights in canonical order:
    LSTM by c' = f*c + i*g and h' = o*h(c') (also a first step whose zero
    state was folded, c' = i*g), GRU by h' = n + z*(h - n) or
    (1 - z)*n + z*h in both linear_before_reset forms, simple RNN cells by
    h' = f(x W + h R + b) inside chains of such steps. Gate pre-activations
    are expanded as linear forms over MatMul/Gemm/Add/Sub/Split/Slice/Concat
    and constants. Standard `onnx.LSTM`/`onnx.GRU`/`onnx.RNN` layers become
    `rnn.sequence`. Anything that does not match exactly is left alone with a
    remark naming the node and the reason; a recurrence left unfused (a
    constant weight applied at several steps, each to values computed from
    an earlier application) gets a remark on its first node even where no
    candidate came close. See docs/passes/rnn-recognize-cells.md.
  }];
  let dependentDialects = ["lstm_opt::rnn::RNNDialect",
                           "lstm_opt::onnx::ONNXDialect"];
  let options = [
    Option<"importQuantized", "import-quantized", "bool", "false",
           "Also import com.microsoft.DynamicQuantizeLSTM layers, their int8 "
           "weights dequantized exactly into f32 (the compiled targets; the "
           "ONNX target keeps the op, which ONNX Runtime runs)">,
    Option<"quantizedPrecision", "quantized-precision", "std::string",
           "\"f32\"",
           "With import-quantized: the precision the imported quantized "
           "layers ask for, as their `lstm_opt.precision` attribute: int8 "
           "(the model's own: the CPU kernels quantize x and h as ONNX "
           "Runtime does), or f32 (no attribute: the layer runs at the "
           "backend's precision)">,
  ];
  let statistics = [
    Statistic<"numCells", "cells", "Number of cells recognised">,
    Statistic<"numLayers", "layers", "Number of ONNX layers imported">,
    Statistic<"numUnfusedRecurrences", "unfused-recurrences",
              "Number of recurrences left unfused">,
  ];
}

def RNNRollTimeLoopPass : Pass<"rnn-roll-time-loop", "mlir::ModuleOp"> {
  let summary = "Roll chains of equal cells over consecutive time steps into one layer";
  let description = [{
    A chain of `rnn.*_cell` ops with the same weights, whose state flows from
    each step to the next and whose inputs are consecutive slices of one
    tensor along its time axis (forward or backward), becomes one
    `rnn.sequence`; per-step outputs stacked by Unsqueeze + Concat become its
    `Y`; other reads of an intermediate hidden state read Y. A read of an
    intermediate cell state cannot be expressed: the chain is cut there
    (with a remark) and each part becomes a layer. A cell that cannot join
    others becomes a one-step layer. See docs/passes/rnn-roll-time-loop.md.
  }];
  let dependentDialects = ["lstm_opt::rnn::RNNDialect",
                           "lstm_opt::onnx::ONNXDialect"];
  let statistics = [
    Statistic<"numLayers", "layers", "Number of layers formed">,
  ];
}

def RNNLoopToSequencePass : Pass<"rnn-loop-to-sequence", "mlir::ModuleOp"> {
  let summary = "Make a Loop over a whole sequence, one fused step per "
                "iteration, one layer";
  let description = [{
    An ONNX `Loop` whose number of iterations is not known when the model is
    compiled (a dynamic time axis), whose body is one step of a fused layer
    (a one-step `rnn.sequence`, as rnn-recognize-cells makes of the body),
    reading step `k` of a sequence `X` at iteration `k`, carrying the
    layer's state, and stopping after exactly as many iterations as `X` has
    steps (the trip count or the condition compares the iteration with `X`'s
    time dimension, read from its shape), becomes one `rnn.sequence` over
    `X`: the final carried states are its final states, the stacked per-step
    outputs its `Y`. Anything else is left alone with a remark naming the
    node. See docs/passes/rnn-loop-to-sequence.md.
  }];
  let dependentDialects = ["lstm_opt::rnn::RNNDialect",
                           "lstm_opt::onnx::ONNXDialect"];
  let statistics = [
    Statistic<"numRolled", "loops", "Number of Loops made one layer">,
  ];
}

def RNNFuseGateGemmsPass : Pass<"rnn-fuse-gate-gemms", "mlir::ModuleOp"> {
  let summary = "Merge matmuls that share an input into one packed GEMM";
  let description = [{
    MatMul/Gemm nodes that multiply the same value by different constant
    matrices (one per gate in hand-written cells: 8 per LSTM step) become one
    MatMul by the column-concatenated matrix, plus one Add of the
    concatenated biases, and a Split that hands each former node its columns.
    Only products in one block are merged. The arithmetic of every output
    element is unchanged. Not in the default pipeline (it would also merge
    products outside recurrent cells). See docs/passes/rnn-fuse-gate-gemms.md.
  }];
  let dependentDialects = ["lstm_opt::onnx::ONNXDialect"];
  let statistics = [
    Statistic<"numFused", "fused", "Number of GEMMs merged away">,
  ];
}

def RNNHoistInputGemmPass : Pass<"rnn-hoist-input-gemm", "mlir::ModuleOp"> {
  let summary = "Split a layer into one input GEMM over all steps and a recurrence";
  let description = [{
    `rnn.sequence` becomes `rnn.input_projection` (X W^T + Bw for all T steps
    at once: one [T*B, I] x [I, G*H] GEMM per direction instead of T small
    ones) feeding `rnn.recurrence`, which does only h R^T per step. For the
    compiled backends; the ONNX target keeps rnn.sequence (ONNX's LSTM does
    this internally). See docs/passes/rnn-hoist-input-gemm.md.
  }];
  let dependentDialects = ["lstm_opt::rnn::RNNDialect"];
}

def RNNPairBidirectionalPass : Pass<"rnn-pair-bidirectional", "mlir::ModuleOp"> {
  let summary = "Merge a forward and a reverse layer over the same input";
  let description = [{
    Two `rnn.sequence` ops of the same cell, size and attributes, one
    forward and one reverse, reading the same X, become one bidirectional
    layer; each former result becomes a slice of the joint one. First, a
    forward layer over a whole-length ReverseSequence of X whose Y is
    reversed back becomes a reverse layer over X. See
    docs/passes/rnn-pair-bidirectional.md.
  }];
  let dependentDialects = ["lstm_opt::rnn::RNNDialect",
                           "lstm_opt::onnx::ONNXDialect"];
  let statistics = [
    Statistic<"numPaired", "paired", "Number of bidirectional layers formed">,
  ];
}

def RNNStackLayersPass : Pass<"rnn-stack-layers", "mlir::ModuleOp"> {
  let summary = "Merge layers that read each other's output into one rnn.stack";
  let description = [{
    Single-direction `rnn.sequence` layers of the same cell and size, each
    reading the previous one's whole Y and nothing else reading it, become one
    `rnn.stack` (what cuDNN runs as one call). convert-rnn-to-onnx unstacks
    it again. See docs/passes/rnn-stack-layers.md.
  }];
  let dependentDialects = ["lstm_opt::rnn::RNNDialect",
                           "lstm_opt::onnx::ONNXDialect"];
  let statistics = [
    Statistic<"numStacks", "stacks", "Number of stacks formed">,
  ];
}

#endif // LSTM_OPT_DIALECT_RNN_TRANSFORMS_PASSES_TD
