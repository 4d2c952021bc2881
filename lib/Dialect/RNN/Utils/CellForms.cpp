//===- CellForms.cpp - the state updates that identify a recurrent cell ---===//

#include "lstm-opt/Dialect/RNN/Utils/CellForms.h"

#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "llvm/ADT/STLExtras.h"
#include <cfloat>
#include <cmath>
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/ErrorHandling.h"

using namespace mlir;
namespace od = lstm_opt::onnx;

namespace lstm_opt::rnn {

//===----------------------------------------------------------------------===//
// The table
//===----------------------------------------------------------------------===//

// Add a row here to teach rnn-recognize-cells a new way of writing a cell
// (docs/AddingACellPattern.md). Order matters: the first form that matches
// an anchor wins, and a match erases the nodes it replaces.
static const CellForm kCellForms[] = {
    // LSTM: c' = f*c + i*g (h' = o*h(c') is found among the users of c').
    // Which of i and g is the gate is decided by the builder (the one with
    // f's activation), so both are `act` here.
    {"lstm", CellFamily::LSTM, "c' = f*c + i*g",
     "Add(Mul(gate:f, state:c), Mul@ig(act:i, act:g))", false},
    // LSTM with coupled input and forget gates (ONNX's input_forget):
    // f = 1 - i.
    {"lstm-coupled", CellFamily::LSTM, "c' = (1 - i)*c + i*g",
     "Add(Mul(Sub(one, gate:i), state:c), Mul@ig(=i, act:g))", false},
    {"lstm-zero-state", CellFamily::LSTM, "c' = i*g (c = 0 folded)",
     "Mul@ig(gate:i, act:g)", true},
    // GRU, PyTorch's form.
    {"gru-interpolate", CellFamily::GRU, "h' = n + z*(h - n)",
     "Add(act:n, Mul(gate:z, Sub(any:h, =n)))", false},
    // GRU, the textbook's (Keras, TensorFlow, ONNX's definition).
    {"gru", CellFamily::GRU, "h' = (1 - z)*n + z*h",
     "Add(Mul(Sub(one, gate:z), act:n), Mul(=z, any:h))", false},
    // GRU with (1 - z)*n multiplied out, as hand-written graphs do.
    {"gru-expanded", CellFamily::GRU, "h' = (n - z*n) + z*h",
     "Add(Sub(act:n, Mul(gate:z, =n)), Mul(=z, any:h))", false},
    // GRU with the roles of z and 1 - z exchanged (hand-written graphs).
    {"gru-negated", CellFamily::GRU, "h' = z*n + (1 - z)*h",
     "Add(Mul(gate:z, act:n), Mul(Sub(one, =z), any:h))", false,
     /*negatedUpdate=*/true},
    {"gru-zero-state", CellFamily::GRU, "h' = (1 - z)*n (h = 0 folded)",
     "Mul(Sub(one, gate:z), act:n)", true},
    {"gru-expanded-zero-state", CellFamily::GRU, "h' = n - z*n (h = 0 folded)",
     "Sub(act:n, Mul(gate:z, =n))", true},
};

ArrayRef<CellForm> cellForms() { return kCellForms; }

//===----------------------------------------------------------------------===//
// Leaves
//===----------------------------------------------------------------------===//

std::optional<float> getScalarF32(Value v) {
  // (The element count first: a weight is not converted to be refused.)
  auto attr = od::getConstantAttr(od::skipIdentities(v));
  if (!attr || attr.getNumElements() != 1)
    return std::nullopt;
  auto t = od::getConstantF32(attr);
  if (!t || t->values.size() != 1)
    return std::nullopt;
  return t->values[0];
}

std::optional<std::pair<float, float>> getClipBounds(Operation *op) {
  auto clip = dyn_cast_or_null<od::ClipOp>(op);
  if (!clip)
    return std::nullopt;
  auto bound = [](Value v, std::optional<APFloat> attr) -> std::optional<float> {
    if (v && !isa<NoneType>(v.getType()))
      return getScalarF32(v);
    if (attr)
      return attr->convertToFloat();
    return std::nullopt;
  };
  std::optional<float> lo = bound(clip.getMin(), clip.getMinAttr());
  std::optional<float> hi = bound(clip.getMax(), clip.getMaxAttr());
  if (!lo || !hi)
    return std::nullopt;
  return std::make_pair(*lo, *hi);
}

/// (term, constant) of a commutative binary op with one scalar constant.
static std::optional<std::pair<Value, float>> splitScalar(Value a, Value b) {
  if (auto c = getScalarF32(b))
    return std::make_pair(a, *c);
  if (auto c = getScalarF32(a))
    return std::make_pair(b, *c);
  return std::nullopt;
}

/// Keras 3's hard_sigmoid, relu6(x + 3) / 6, exported op by op:
/// Mul(Clip(x + beta', 0, u), s) or Div(Clip(x + beta', 0, u), 1 / s) with
/// u * s = 1 is HardSigmoid(alpha = s, beta = beta' * s), equal in real
/// arithmetic and to a rounding of the f32 operations (a few ulp of a value
/// in [0, 1]). Read as HardSigmoid(s, 0)(x + beta'): the + beta' is part of
/// the gate's linear form, where tf2onnx folds it into the bias.
static std::optional<Activation> getScaledClipHardSigmoid(Operation *def) {
  std::optional<std::pair<Value, float>> scaled;
  if (auto mul = dyn_cast<od::MulOp>(def)) {
    scaled = splitScalar(mul.getA(), mul.getB());
  } else if (auto div = dyn_cast<od::DivOp>(def)) {
    auto d = getScalarF32(div.getB());
    if (d && std::isfinite(*d) && *d != 0.f)
      scaled = std::make_pair(div.getA(), 1.f / *d);
  }
  if (!scaled || !(scaled->second > 0.f) || !std::isfinite(scaled->second))
    return std::nullopt;
  auto clip = od::skipIdentities(scaled->first).getDefiningOp<od::ClipOp>();
  if (!clip)
    return std::nullopt;
  auto bounds = getClipBounds(clip);
  float s = scaled->second;
  if (!bounds || bounds->first != 0.f || !(bounds->second > 0.f) ||
      std::fabs(bounds->second * s - 1.f) > 4 * FLT_EPSILON)
    return std::nullopt;
  // Clip(L, 0, u) * s = HardSigmoid(s, 0)(L): the + beta' stays in L, a
  // bias of the gate's linear form. (An exporter that folds it into the
  // bias at some steps and not at others, as tf2onnx does at a first step,
  // then gives every step the same activation and bias.)
  Activation a;
  a.op = def;
  a.name = "HardSigmoid";
  a.input = clip.getInput();
  a.alpha = s;
  a.beta = 0.f;
  a.hasParams = true;
  return a;
}

static std::optional<Activation> getWrittenOutHardSigmoid(od::ClipOp clip) {
  // Clip(alpha * x + beta, 0, 1), the operands of the Add and the Mul in
  // either order: ONNX's HardSigmoid, exactly (Keras' and TF's
  // hard_sigmoid, exported op by op).
  auto bounds = getClipBounds(clip);
  if (!bounds || bounds->first != 0.f || bounds->second != 1.f)
    return std::nullopt;
  auto add = od::skipIdentities(clip.getInput()).getDefiningOp<od::AddOp>();
  if (!add)
    return std::nullopt;
  auto sum = splitScalar(add.getA(), add.getB());
  if (!sum)
    return std::nullopt;
  auto mul = od::skipIdentities(sum->first).getDefiningOp<od::MulOp>();
  if (!mul)
    return std::nullopt;
  auto prod = splitScalar(mul.getA(), mul.getB());
  if (!prod)
    return std::nullopt;
  Activation a;
  a.op = clip;
  a.name = "HardSigmoid";
  a.input = prod->first;
  a.alpha = prod->second;
  a.beta = sum->second;
  a.hasParams = true;
  return a;
}

std::optional<Activation> getActivation(Value v) {
  Operation *def = od::skipIdentities(v).getDefiningOp();
  if (!def)
    return std::nullopt;
  Activation a;
  a.op = def;
  if (auto s = dyn_cast<od::SigmoidOp>(def)) {
    a.name = "Sigmoid";
    a.input = s.getX();
  } else if (auto t = dyn_cast<od::TanhOp>(def)) {
    a.name = "Tanh";
    a.input = t.getX();
  } else if (auto r = dyn_cast<od::ReluOp>(def)) {
    a.name = "Relu";
    a.input = r.getX();
  } else if (auto h = dyn_cast<od::HardSigmoidOp>(def)) {
    a.name = "HardSigmoid";
    a.input = h.getX();
    a.alpha = h.getAlpha().convertToFloat();
    a.beta = h.getBeta().convertToFloat();
    a.hasParams = true;
  } else if (auto clip = dyn_cast<od::ClipOp>(def)) {
    return getWrittenOutHardSigmoid(clip);
  } else if (isa<od::MulOp, od::DivOp>(def)) {
    return getScaledClipHardSigmoid(def);
  } else if (auto node = dyn_cast<od::NodeOp>(def)) {
    // The other functions ONNX's LSTM/GRU/RNN take, as nodes of the default
    // domain, with the node's alpha (its default where absent).
    StringRef domain = node.getDomain();
    if ((!domain.empty() && domain != "ai.onnx") || node.getInputs().size() != 1 ||
        node->getNumResults() != 1)
      return std::nullopt;
    StringRef type = node.getOpType();
    std::optional<float> alpha =
        llvm::StringSwitch<std::optional<float>>(type)
            .Case("LeakyRelu", 0.01f)
            .Cases({"Elu", "ThresholdedRelu"}, 1.0f)
            .Default(std::nullopt);
    if (type != "Softsign" && type != "Softplus" && !alpha)
      return std::nullopt;
    a.name = type.str();
    a.input = node.getInputs()[0];
    if (alpha) {
      a.alpha = *alpha;
      if (auto attrs = node.getAttrs())
        if (auto f = attrs->getAs<FloatAttr>("alpha"))
          a.alpha = f.getValueAsDouble();
      a.hasParams = true;
    }
  } else {
    return std::nullopt;
  }
  return a;
}



bool isGateActivation(const Activation &a) {
  return a.name == "Sigmoid" || a.name == "HardSigmoid";
}

bool isOnes(Value v) {
  auto t = od::getConstantF32(v);
  return t && llvm::all_of(t->values, [](float f) { return f == 1.0f; });
}

//===----------------------------------------------------------------------===//
// Parsing
//===----------------------------------------------------------------------===//

namespace {
class PatternParser {
public:
  explicit PatternParser(StringRef text) : rest(text) {}

  std::optional<CellPattern> parseAll(std::string &error) {
    auto p = parse(0);
    skipSpace();
    if (p && !rest.empty())
      fail("unexpected '" + rest.take_front(8).str() + "'");
    if (!why.empty()) {
      error = why;
      return std::nullopt;
    }
    return p;
  }

private:
  // Patterns are written by people; a few levels suffice.
  static constexpr int kMaxDepth = 16;

  void skipSpace() { rest = rest.ltrim(); }
  bool consume(StringRef token) {
    skipSpace();
    return rest.consume_front(token);
  }
  StringRef identifier() {
    skipSpace();
    size_t n = 0;
    while (n < rest.size() && (llvm::isAlnum(rest[n]) || rest[n] == '_'))
      ++n;
    StringRef id = rest.take_front(n);
    rest = rest.drop_front(n);
    return id;
  }
  std::nullopt_t fail(const std::string &message) {
    if (why.empty())
      why = message;
    return std::nullopt;
  }

  std::optional<CellPattern> parse(int depth) {
    if (depth > kMaxDepth)
      return fail("pattern nested deeper than " + std::to_string(kMaxDepth));
    CellPattern p;
    if (consume("=")) {
      p.kind = CellPattern::Kind::Same;
      p.name = identifier().str();
      if (p.name.empty())
        return fail("'=' without a name");
      return p;
    }
    StringRef word = identifier();
    if (word.empty())
      return fail(rest.empty() ? "unexpected end of pattern"
                               : "unexpected '" + rest.take_front(8).str() + "'");
    if (word == "one") {
      p.kind = CellPattern::Kind::One;
      return p;
    }
    static const std::pair<StringRef, CellPattern::Kind> kLeaves[] = {
        {"gate", CellPattern::Kind::Gate},
        {"act", CellPattern::Kind::Act},
        {"state", CellPattern::Kind::State},
        {"any", CellPattern::Kind::Any}};
    for (auto [leaf, kind] : kLeaves)
      if (word == leaf) {
        if (!consume(":"))
          return fail("'" + leaf.str() + "' needs ':NAME'");
        p.kind = kind;
        p.name = identifier().str();
        if (p.name.empty())
          return fail("'" + leaf.str() + ":' without a name");
        return p;
      }
    static const std::pair<StringRef, CellPattern::Kind> kNodes[] = {
        {"Add", CellPattern::Kind::Add},
        {"Mul", CellPattern::Kind::Mul},
        {"Sub", CellPattern::Kind::Sub}};
    auto node = llvm::find_if(kNodes, [&](auto &n) { return n.first == word; });
    if (node == std::end(kNodes))
      return fail("unknown word '" + word.str() + "'");
    p.kind = node->second;
    if (consume("@")) {
      p.name = identifier().str();
      if (p.name.empty())
        return fail("'@' without a label");
    }
    if (!consume("("))
      return fail("'" + word.str() + "' needs '('");
    for (int k = 0; k < 2; ++k) {
      if (k == 1 && !consume(","))
        return fail("'" + word.str() + "' needs two operands");
      auto operand = parse(depth + 1);
      if (!operand)
        return std::nullopt;
      p.operands.push_back(std::move(*operand));
    }
    if (!consume(")"))
      return fail("'" + word.str() + "' needs ')'");
    return p;
  }

  StringRef rest;
  std::string why;
};
} // namespace

std::optional<CellPattern> parseCellPattern(StringRef text,
                                            std::string &error) {
  auto p = PatternParser(text).parseAll(error);
  if (p && !p->isNode()) {
    error = "the root of a pattern must be Add, Mul or Sub";
    return std::nullopt;
  }
  return p;
}

//===----------------------------------------------------------------------===//
// Matching
//===----------------------------------------------------------------------===//

Value CellMatch::value(StringRef name) const {
  auto it = values.find(name.str());
  return it == values.end() ? Value() : it->second;
}

std::optional<Activation> CellMatch::activation(StringRef name) const {
  auto it = activations.find(name.str());
  if (it == activations.end())
    return std::nullopt;
  return it->second;
}

Operation *CellMatch::label(StringRef name) const {
  auto it = labels.find(name.str());
  return it == labels.end() ? nullptr : it->second;
}

namespace {
bool matchValue(const CellPattern &p, Value v, CellMatch &m);

/// Binds `name` to `v` (and its activation), or checks that it is bound to
/// the same value already.
bool bindName(const std::string &name, Value v, std::optional<Activation> act,
          CellMatch &m) {
  auto [it, inserted] = m.values.try_emplace(name, v);
  if (!inserted)
    return od::skipIdentities(it->second) == od::skipIdentities(v);
  if (act)
    m.activations[name] = *act;
  return true;
}

bool matchNode(const CellPattern &p, Operation *op, CellMatch &m) {
  if (!matchesNodeKind(p, op) || op->getNumOperands() != 2 ||
      op->getNumResults() != 1)
    return false;
  Value a = op->getOperand(0), b = op->getOperand(1);
  auto tryOrder = [&](Value first, Value second) {
    CellMatch trial = m;
    trial.nodes.push_back(op);
    if (!p.name.empty())
      trial.labels[p.name] = op;
    if (!matchValue(p.operands[0], first, trial) ||
        !matchValue(p.operands[1], second, trial))
      return false;
    m = std::move(trial);
    return true;
  };
  if (tryOrder(a, b))
    return true;
  return p.kind != CellPattern::Kind::Sub && tryOrder(b, a);
}

bool matchValue(const CellPattern &p, Value v, CellMatch &m) {
  switch (p.kind) {
  case CellPattern::Kind::Add:
  case CellPattern::Kind::Mul:
  case CellPattern::Kind::Sub: {
    Operation *def = od::skipIdentities(v).getDefiningOp();
    return def && matchNode(p, def, m);
  }
  case CellPattern::Kind::Gate: {
    // Any of ONNX's activations: a cell's gates may use any of them (Keras'
    // recurrent_activation="tanh", "relu", ...). The builders check that the
    // gates of one cell agree.
    auto a = getActivation(v);
    return a && bindName(p.name, v, a, m);
  }
  case CellPattern::Kind::Act: {
    auto a = getActivation(v);
    return a && bindName(p.name, v, a, m);
  }
  case CellPattern::Kind::State:
    return !getActivation(v) && bindName(p.name, v, std::nullopt, m);
  case CellPattern::Kind::Any:
    return bindName(p.name, v, getActivation(v), m);
  case CellPattern::Kind::Same: {
    Value bound = m.value(p.name);
    return bound && od::skipIdentities(bound) == od::skipIdentities(v);
  }
  case CellPattern::Kind::One:
    return isOnes(v);
  }
  return false;
}
} // namespace

bool matchesNodeKind(const CellPattern &p, Operation *op) {
  switch (p.kind) {
  case CellPattern::Kind::Add:
    return isa<od::AddOp>(op);
  case CellPattern::Kind::Mul:
    return isa<od::MulOp>(op);
  case CellPattern::Kind::Sub:
    return isa<od::SubOp>(op);
  default:
    return false;
  }
}

ArrayRef<std::pair<const CellForm *, CellPattern>> parsedCellForms() {
  static const std::vector<std::pair<const CellForm *, CellPattern>> parsed = [] {
    std::vector<std::pair<const CellForm *, CellPattern>> out;
    for (const CellForm &form : cellForms()) {
      std::string error;
      auto pattern = parseCellPattern(form.pattern, error);
      if (!pattern)
        llvm::report_fatal_error(llvm::Twine("cell form '") + form.name +
                                 "': " + error);
      out.emplace_back(&form, std::move(*pattern));
    }
    return out;
  }();
  return parsed;
}

std::optional<CellMatch> matchCellPattern(const CellPattern &pattern,
                                          Operation *anchor) {
  CellMatch m;
  if (!matchNode(pattern, anchor, m))
    return std::nullopt;
  return m;
}

} // namespace lstm_opt::rnn
