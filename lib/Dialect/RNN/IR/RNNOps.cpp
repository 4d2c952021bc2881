//===- RNNOps.cpp - rnn dialect: registration and verifiers ---------------===//
//
// The verifiers enforce the canonical layout (RNNBase.td): every static
// dimension must agree; dynamic dimensions are accepted.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Dialect/RNN/IR/RNNOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace lstm_opt::rnn;

#include "lstm-opt/Dialect/RNN/IR/RNNDialect.cpp.inc"
#include "lstm-opt/Dialect/RNN/IR/RNNEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "lstm-opt/Dialect/RNN/IR/RNNAttrs.cpp.inc"

void RNNDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "lstm-opt/Dialect/RNN/IR/RNNAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "lstm-opt/Dialect/RNN/IR/RNNOps.cpp.inc"
      >();
}

int64_t lstm_opt::rnn::getNumGates(CellKind kind) {
  switch (kind) {
  case CellKind::LSTM: return 4;
  case CellKind::GRU: return 3;
  case CellKind::RNN: return 1;
  }
  llvm_unreachable("unknown cell kind");
}

int64_t lstm_opt::rnn::getNumActivations(CellKind kind) {
  switch (kind) {
  case CellKind::LSTM: return 3;
  case CellKind::GRU: return 2;
  case CellKind::RNN: return 1;
  }
  llvm_unreachable("unknown cell kind");
}

bool lstm_opt::rnn::haveSameCell(SequenceOp a, SequenceOp b) {
  return a.getCell() == b.getCell() && a.getHiddenSize() == b.getHiddenSize() &&
         a.getLinearBeforeReset() == b.getLinearBeforeReset() &&
         a.getActivationsAttr() == b.getActivationsAttr() &&
         a.getActivationAlphaAttr() == b.getActivationAlphaAttr() &&
         a.getActivationBetaAttr() == b.getActivationBetaAttr() &&
         a.getClipAttr() == b.getClipAttr() &&
         a.getInputForget() == b.getInputForget() &&
         a.getSequenceLens() == b.getSequenceLens();
}

namespace {
constexpr int64_t kAny = ShapedType::kDynamic;

/// Checks `v`'s shape against `expected` (kAny = not known); dynamic
/// dimensions of `v` always match.
LogicalResult checkShape(Operation *op, Value v, StringRef name,
                         ArrayRef<int64_t> expected) {
  auto t = cast<RankedTensorType>(v.getType());
  if (t.getRank() != (int64_t)expected.size())
    return op->emitOpError() << name << " must have rank " << expected.size()
                             << ", got " << t;
  for (auto [i, pair] : llvm::enumerate(llvm::zip(t.getShape(), expected))) {
    auto [have, want] = pair;
    if (have != kAny && want != kAny && have != want)
      return op->emitOpError() << name << " dimension " << i << " is " << have
                               << ", expected " << want;
  }
  if (!t.getElementType().isF32() && !t.getElementType().isF16() &&
      !t.getElementType().isBF16() && !t.getElementType().isF64() &&
      name != "sequence_lens")
    return op->emitOpError() << name << " must hold floats, got " << t;
  return success();
}

int64_t dim(Value v, int64_t i) {
  auto t = cast<RankedTensorType>(v.getType());
  return i < t.getRank() ? t.getDimSize(i) : kAny;
}

/// First known of two dimension sizes.
int64_t pick(int64_t a, int64_t b) { return a != kAny ? a : b; }

LogicalResult checkActivations(Operation *op, std::optional<ArrayAttr> acts,
                               CellKind kind, int64_t directions) {
  if (!acts)
    return success();
  int64_t want = getNumActivations(kind) * directions;
  if ((int64_t)acts->size() != want)
    return op->emitOpError() << "needs " << want << " activations, got "
                             << acts->size();
  return success();
}

/// Shared checks of a single step: x [B, I], h [B, H], W [G*H, I],
/// R [G*H, H], Bw/Br [G*H], results [B, H].
LogicalResult verifyCell(Operation *op, CellKind kind, Value x, Value h,
                         Value W, Value R, Value Bw, Value Br,
                         ValueRange results, std::optional<ArrayAttr> acts) {
  int64_t g = getNumGates(kind);
  int64_t hidden = pick(dim(h, 1), dim(R, 1));
  int64_t gh = hidden == kAny ? kAny : g * hidden;
  int64_t batch = pick(dim(x, 0), dim(h, 0));
  int64_t input = pick(dim(x, 1), dim(W, 1));
  if (failed(checkShape(op, x, "x", {batch, input})) ||
      failed(checkShape(op, h, "h", {batch, hidden})) ||
      failed(checkShape(op, W, "W", {gh, input})) ||
      failed(checkShape(op, R, "R", {gh, hidden})) ||
      failed(checkShape(op, Bw, "Bw", {gh})) ||
      failed(checkShape(op, Br, "Br", {gh})))
    return failure();
  for (Value r : results)
    if (failed(checkShape(op, r, "result", {batch, hidden})))
      return failure();
  return checkActivations(op, acts, kind, 1);
}

/// input_forget and peephole weights (of shape `peepholeShape`) belong to
/// LSTMs only.
LogicalResult verifyLSTMVariant(Operation *op, CellKind kind, bool inputForget,
                                Value peephole,
                                ArrayRef<int64_t> peepholeShape) {
  if (kind != CellKind::LSTM && (inputForget || peephole))
    return op->emitOpError()
           << "input_forget and peephole weights are LSTM variants";
  if (peephole)
    return checkShape(op, peephole, "peephole", peepholeShape);
  return success();
}

/// Shared checks of rnn.sequence / rnn.recurrence.
template <typename OpTy>
LogicalResult verifyLayer(OpTy op, int64_t steps, int64_t batch,
                          int64_t hidden) {
  CellKind kind = op.getCell();
  int64_t d = op.getNumDirections();
  Operation *o = op.getOperation();
  if (op.getHiddenSize() <= 0)
    return op.emitOpError() << "hidden_size must be positive";
  if (hidden != kAny && hidden != (int64_t)op.getHiddenSize())
    return op.emitOpError() << "hidden_size is " << op.getHiddenSize()
                            << " but the weights say " << hidden;
  hidden = op.getHiddenSize();
  int64_t gh = getNumGates(kind) * hidden;
  if (failed(checkShape(o, op.getR(), "R", {d, gh, hidden})) ||
      failed(checkShape(o, op.getBr(), "Br", {d, gh})))
    return failure();
  if (op.getH0() && failed(checkShape(o, op.getH0(), "h0", {d, batch, hidden})))
    return failure();
  if (op.getC0()) {
    if (kind != CellKind::LSTM)
      return op.emitOpError() << "only LSTM layers take c0";
    if (failed(checkShape(o, op.getC0(), "c0", {d, batch, hidden})))
      return failure();
  }
  if (Value lens = op.getSequenceLens()) {
    if (failed(checkShape(o, lens, "sequence_lens", {batch})))
      return failure();
    if (!cast<RankedTensorType>(lens.getType()).getElementType().isInteger(32))
      return op.emitOpError() << "sequence_lens must be i32";
  }
  if (op.getLinearBeforeReset() && kind != CellKind::GRU)
    return op.emitOpError() << "linear_before_reset is a GRU attribute";
  if (failed(verifyLSTMVariant(o, kind, op.getInputForget(), op.getPeephole(),
                               {d, 3 * hidden})))
    return failure();
  if (failed(checkShape(o, op.getY(), "Y", {steps, d, batch, hidden})) ||
      failed(checkShape(o, op.getHN(), "h_n", {d, batch, hidden})))
    return failure();
  if ((kind == CellKind::LSTM) != (op.getCN() != nullptr))
    return op.emitOpError() << "has c_n exactly when the cell is an LSTM";
  if (op.getCN() && failed(checkShape(o, op.getCN(), "c_n", {d, batch, hidden})))
    return failure();
  return checkActivations(o, op.getActivations(), kind, d);
}
} // namespace

LogicalResult LSTMCellOp::verify() {
  if (failed(checkShape(*this, getC(), "c",
                        {pick(dim(getH(), 0), dim(getX(), 0)),
                         pick(dim(getH(), 1), dim(getR(), 1))})))
    return failure();
  int64_t hidden = pick(dim(getH(), 1), dim(getR(), 1));
  if (failed(verifyLSTMVariant(*this, CellKind::LSTM, getInputForget(),
                               getPeephole(),
                               {hidden == kAny ? kAny : 3 * hidden})))
    return failure();
  return verifyCell(*this, CellKind::LSTM, getX(), getH(), getW(), getR(),
                    getBw(), getBr(), getResults(), getActivations());
}

LogicalResult GRUCellOp::verify() {
  return verifyCell(*this, CellKind::GRU, getX(), getH(), getW(), getR(),
                    getBw(), getBr(), getResult(), getActivations());
}

LogicalResult RNNCellOp::verify() {
  return verifyCell(*this, CellKind::RNN, getX(), getH(), getW(), getR(),
                    getBw(), getBr(), getResult(), getActivations());
}

int64_t SequenceOp::getNumGates() { return rnn::getNumGates(getCell()); }

LogicalResult SequenceOp::verify() {
  int64_t d = getNumDirections();
  int64_t hidden = getHiddenSize();
  int64_t gh = rnn::getNumGates(getCell()) * hidden;
  int64_t steps = dim(getX(), 0), batch = dim(getX(), 1);
  int64_t input = pick(dim(getX(), 2), dim(getW(), 2));
  if (failed(verifyLayer(*this, steps, batch, dim(getR(), 2))))
    return failure();
  return success(succeeded(checkShape(*this, getX(), "X", {steps, batch, input})) &&
                 succeeded(checkShape(*this, getW(), "W", {d, gh, input})) &&
                 succeeded(checkShape(*this, getBw(), "Bw", {d, gh})));
}

LogicalResult StackOp::verify() {
  int64_t l = getNumLayers();
  if (l < 2)
    return emitOpError() << "stacks at least 2 layers, got " << l;
  int64_t d = getNumDirections(), h = getHiddenSize();
  int64_t gh = rnn::getNumGates(getCell()) * h;
  int64_t steps = dim(getX(), 0), batch = dim(getX(), 1);
  int64_t input = pick(dim(getX(), 2), dim(getW0(), 2));
  if (failed(checkShape(*this, getX(), "X", {steps, batch, input})) ||
      failed(checkShape(*this, getW0(), "W0", {d, gh, input})) ||
      failed(checkShape(*this, getWn(), "Wn", {l - 1, d, gh, d * h})) ||
      failed(checkShape(*this, getR(), "R", {l, d, gh, h})) ||
      failed(checkShape(*this, getBw(), "Bw", {l, d, gh})) ||
      failed(checkShape(*this, getBr(), "Br", {l, d, gh})))
    return failure();
  for (auto [v, name] : {std::pair(Value(getH0()), "h0"), std::pair(Value(getC0()), "c0"),
                         std::pair(Value(getHN()), "h_n"),
                         std::pair(Value(getCN()), "c_n")})
    if (v && failed(checkShape(*this, v, name, {l * d, batch, h})))
      return failure();
  if ((getCell() == CellKind::LSTM) != (getCN() != nullptr))
    return emitOpError() << "has c_n exactly when the cell is an LSTM";
  if (getC0() && getCell() != CellKind::LSTM)
    return emitOpError() << "only LSTM layers take c0";
  if (getLinearBeforeReset() && getCell() != CellKind::GRU)
    return emitOpError() << "linear_before_reset is a GRU attribute";
  if (Value lens = getSequenceLens())
    if (failed(checkShape(*this, lens, "sequence_lens", {batch})))
      return failure();
  if (failed(checkShape(*this, getY(), "Y", {steps, d, batch, h})))
    return failure();
  return checkActivations(*this, getActivations(), getCell(), d);
}

LogicalResult InputProjectionOp::verify() {
  int64_t d = dim(getW(), 0), gh = pick(dim(getW(), 1), dim(getBw(), 1));
  int64_t steps = dim(getX(), 0), batch = dim(getX(), 1);
  int64_t input = pick(dim(getX(), 2), dim(getW(), 2));
  if (failed(checkShape(*this, getX(), "X", {steps, batch, input})) ||
      failed(checkShape(*this, getW(), "W", {d, gh, input})) ||
      failed(checkShape(*this, getBw(), "Bw", {d, gh})) ||
      failed(checkShape(*this, getP(), "P", {d, steps, batch, gh})))
    return failure();
  if (d != kAny && d != 1 && d != 2)
    return emitOpError() << "has " << d << " directions; 1 or 2 expected";
  return success();
}

LogicalResult RecurrenceOp::verify() {
  int64_t d = getNumDirections();
  int64_t gh = rnn::getNumGates(getCell()) * (int64_t)getHiddenSize();
  int64_t steps = dim(getP(), 1), batch = dim(getP(), 2);
  if (failed(checkShape(*this, getP(), "P", {d, steps, batch, gh})))
    return failure();
  return verifyLayer(*this, steps, batch, dim(getR(), 2));
}

/// `lstm forward`: the cell kind and direction as bare keywords.
static ParseResult parseCellAndDirection(OpAsmParser &parser,
                                         CellKindAttr &cell,
                                         DirectionAttr &direction) {
  StringRef kind, dir;
  llvm::SMLoc loc = parser.getCurrentLocation();
  if (parser.parseKeyword(&kind) || parser.parseKeyword(&dir))
    return failure();
  auto k = symbolizeCellKind(kind);
  auto d = symbolizeDirection(dir);
  if (!k)
    return parser.emitError(loc) << "unknown cell kind '" << kind << "'";
  if (!d)
    return parser.emitError(loc) << "unknown direction '" << dir << "'";
  cell = CellKindAttr::get(parser.getContext(), *k);
  direction = DirectionAttr::get(parser.getContext(), *d);
  return success();
}

static void printCellAndDirection(OpAsmPrinter &p, Operation *,
                                  CellKindAttr cell, DirectionAttr direction) {
  p << stringifyCellKind(cell.getValue()) << " "
    << stringifyDirection(direction.getValue());
}

#define GET_OP_CLASSES
#include "lstm-opt/Dialect/RNN/IR/RNNOps.cpp.inc"
