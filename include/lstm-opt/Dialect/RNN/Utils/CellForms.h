//===- CellForms.h - the state updates that identify a recurrent cell -*- C++ -*-===//
//
// A cell is found by its state update: c' = f*c + i*g is an LSTM step,
// h' = (1 - z)*n + z*h a GRU step. Exporters write the same update in
// several ways, so the ways are data: a table of cell forms (`cellForms()`),
// each an equation written in a small pattern language, matched against the
// graph from the node that computes the new state (the anchor). A newcomer
// teaches rnn-recognize-cells a new way of writing a cell by adding one row
// to the table in CellForms.cpp (docs/AddingACellPattern.md).
//
// Pattern language:
//
//   pattern := Op ['@' label] '(' pattern ',' pattern ')' | leaf
//   Op      := Add | Mul | Sub          (Add and Mul match either operand order)
//   leaf    := gate:NAME   a gate's activation (any of act's: ONNX's cells
//                          take any for a gate; the builders check that
//                          the gates of one cell agree)
//            | act:NAME    any activation (Sigmoid, Tanh, Relu, HardSigmoid,
//                          Softsign, Softplus, LeakyRelu, Elu, ...)
//            | state:NAME  a value that is not an activation's output
//            | any:NAME    any value
//            | =NAME       the value bound to NAME before
//            | one         a constant whose elements are all 1
//
// A name bound twice must be bound to the same value both times; values are
// compared through Identity nodes. An `@label` names the node it is on.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_DIALECT_RNN_UTILS_CELLFORMS_H
#define LSTM_OPT_DIALECT_RNN_UTILS_CELLFORMS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace lstm_opt::rnn {

/// An activation node: its ONNX name, parameters and operand.
struct Activation {
  std::string name; // ONNX activation name
  float alpha = 0, beta = 0;
  bool hasParams = false;
  mlir::Value input;
  mlir::Operation *op = nullptr;
  bool operator==(const Activation &o) const {
    return name == o.name && alpha == o.alpha && beta == o.beta;
  }
};

/// The activation that computes `v` (through Identity), if one does. A
/// HardSigmoid written out as Clip(alpha * x + beta, 0, 1) counts.
std::optional<Activation> getActivation(mlir::Value v);

/// The one f32 value of a scalar or one-element constant (through
/// Identity).
std::optional<float> getScalarF32(mlir::Value v);

/// A Clip's bounds, from its inputs (opset 11+) or attributes (opset 6),
/// where both are constant.
std::optional<std::pair<float, float>> getClipBounds(mlir::Operation *clip);

/// Sigmoid or HardSigmoid: the activation a gate usually has (preferred
/// where a step could be read two ways).
bool isGateActivation(const Activation &a);

/// A constant all of whose elements are 1.
bool isOnes(mlir::Value v);

/// The cell families a form can belong to. Each has one builder in
/// rnn-recognize-cells that turns a match into an rnn cell op.
enum class CellFamily { LSTM, GRU };

/// One way of writing a cell's state update.
struct CellForm {
  /// Short, stable name (remarks, tests, docs).
  const char *name;
  CellFamily family;
  /// The update in mathematical notation, for people.
  const char *equation;
  /// The update in the pattern language; the root is the anchor.
  const char *pattern;
  /// A first step whose zero initial state the exporter folded away. Such a
  /// form is a part of the full update (i*g is a term of f*c + i*g), so its
  /// anchor is skipped when it feeds an Add, and near misses are not
  /// reported (nearly every Mul of two activations would be one).
  bool foldedState;
  /// The names the family's builder reads. LSTM: activations f (absent in a
  /// folded form), i and g as the two operands of the node labelled `ig`,
  /// and the state c; a full form without f is coupled (f = 1 - i, ONNX's
  /// input_forget) and binds i. GRU: activations z and n, the state h
  /// (absent when folded).
  /// GRU: the update gate enters negated, h' = z*n + (1 - z)*h: a GRU whose
  /// update gate is 1 - z, which the builder makes by negating z's
  /// pre-activation (1 - sigmoid(a) = sigmoid(-a)).
  bool negatedUpdate = false;
};

/// The table, in the order the forms are tried: specific before general;
/// within a family, the full update before its folded first step.
llvm::ArrayRef<CellForm> cellForms();

/// A parsed pattern.
struct CellPattern {
  enum class Kind { Add, Mul, Sub, Gate, Act, State, Any, Same, One };
  Kind kind;
  std::string name; // leaf binding, `=NAME` reference or node label
  std::vector<CellPattern> operands;
  bool isNode() const {
    return kind == Kind::Add || kind == Kind::Mul || kind == Kind::Sub;
  }
};

/// Parses `text`; on failure returns nullopt and says why in `error`.
std::optional<CellPattern> parseCellPattern(llvm::StringRef text,
                                            std::string &error);

/// What a match binds.
struct CellMatch {
  std::map<std::string, mlir::Value> values;
  std::map<std::string, Activation> activations;
  std::map<std::string, mlir::Operation *> labels;
  /// Every node of the pattern, the anchor first.
  llvm::SmallVector<mlir::Operation *> nodes;
  mlir::Value value(llvm::StringRef name) const;
  std::optional<Activation> activation(llvm::StringRef name) const;
  mlir::Operation *label(llvm::StringRef name) const;
};

/// True if `op` is the node kind a node pattern (Add, Mul, Sub) names.
bool matchesNodeKind(const CellPattern &pattern, mlir::Operation *op);

/// The table's patterns, parsed once (a malformed row is a fatal error; the
/// unit tests parse every row).
llvm::ArrayRef<std::pair<const CellForm *, CellPattern>> parsedCellForms();

/// Matches `pattern` with its root at `anchor`.
std::optional<CellMatch> matchCellPattern(const CellPattern &pattern,
                                          mlir::Operation *anchor);

} // namespace lstm_opt::rnn

#endif // LSTM_OPT_DIALECT_RNN_UTILS_CELLFORMS_H
