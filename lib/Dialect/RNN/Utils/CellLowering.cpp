//===- CellLowering.cpp - shared by the rnn backends ----------------------===//

#include "lstm-opt/Dialect/RNN/Utils/CellLowering.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

using namespace mlir;
using namespace lstm_opt;
using namespace lstm_opt::rnn;

FailureOr<SmallVector<SmallVector<Activation>>>
rnn::collectActivations(Operation *op, StringRef pass, CellKind kind,
                        int64_t directions, std::optional<ArrayAttr> names,
                        std::optional<ArrayRef<float>> alphas,
                        std::optional<ArrayRef<float>> betas) {
  int64_t n = getNumActivations(kind);
  SmallVector<StringRef> defaults =
      kind == CellKind::LSTM   ? SmallVector<StringRef>{"Sigmoid", "Tanh", "Tanh"}
      : kind == CellKind::GRU ? SmallVector<StringRef>{"Sigmoid", "Tanh"}
                              : SmallVector<StringRef>{"Tanh"};
  SmallVector<SmallVector<Activation>> out(directions);
  size_t ai = 0, bi = 0;
  for (int64_t k = 0; k < directions; ++k)
    for (int64_t j = 0; j < n; ++j) {
      Activation a;
      a.name = names ? cast<StringAttr>((*names)[k * n + j]).getValue().lower()
                     : defaults[j].lower();
      struct Params { bool known, usesAlpha, usesBeta; float alpha, beta; };
      Params p = llvm::StringSwitch<Params>(a.name)
                     .Case("sigmoid", {true, false, false, 0, 0})
                     .Case("tanh", {true, false, false, 0, 0})
                     .Case("relu", {true, false, false, 0, 0})
                     .Case("softsign", {true, false, false, 0, 0})
                     .Case("softplus", {true, false, false, 0, 0})
                     .Case("leakyrelu", {true, true, false, 0.01f, 0})
                     .Case("thresholdedrelu", {true, true, false, 1.0f, 0})
                     .Case("elu", {true, true, false, 1.0f, 0})
                     .Case("hardsigmoid", {true, true, true, 0.2f, 0.5f})
                     .Case("scaledtanh", {true, true, true, 1.0f, 1.0f})
                     .Case("affine", {true, true, true, 1.0f, 0.0f})
                     .Default({false, false, false, 0, 0});
      if (!p.known) {
        op->emitError() << pass << ": unsupported activation '" << a.name << "'";
        return failure();
      }
      a.alpha = p.alpha;
      a.beta = p.beta;
      if (p.usesAlpha && alphas && ai < alphas->size())
        a.alpha = (*alphas)[ai++];
      if (p.usesBeta && betas && bi < betas->size())
        a.beta = (*betas)[bi++];
      out[k].push_back(a);
    }
  return out;
}

Value rnn::emitActivation(ImplicitLocOpBuilder &b, const Activation &a,
                          Value x, ActivationForm form) {
  Type t = x.getType();
  Type elem = getElementTypeOrSelf(t);
  auto cst = [&](float v) -> Value {
    auto attr = b.getFloatAttr(elem, v);
    if (auto vt = dyn_cast<VectorType>(t))
      return arith::ConstantOp::create(b, DenseElementsAttr::get(vt, attr));
    return arith::ConstantOp::create(b, attr);
  };
  auto one = [&] { return cst(1.f); };
  auto zero = [&] { return cst(0.f); };
  auto mul = [&](Value l, Value r) { return arith::MulFOp::create(b, l, r); };
  auto add = [&](Value l, Value r) { return arith::AddFOp::create(b, l, r); };
  auto sel = [&](arith::CmpFPredicate pred, Value l, Value r, Value yes,
                 Value no) -> Value {
    Value c = arith::CmpFOp::create(b, pred, l, r);
    return arith::SelectOp::create(b, c, yes, no);
  };
  // Each op's operands are made in statements of their own, so that the
  // IR comes out in one order whatever the compiler's argument order.
  const std::string &n = a.name;
  if (n == "sigmoid" && form == ActivationForm::Reference) {
    // 1 / (1 + exp(-x))
    Value e = math::ExpOp::create(b, arith::NegFOp::create(b, x));
    Value c1 = one();
    Value d = add(c1, e);
    return arith::DivFOp::create(b, c1, d);
  }
  if (n == "sigmoid") {
    // 1 / (1 + exp(-x)) as 0.5 + 0.5 tanh(x / 2): one rational
    // approximation instead of exp's plus a division.
    Value half = cst(0.5f);
    Value t = math::TanhOp::create(b, mul(x, half));
    return math::FmaOp::create(b, t, half, half);
  }
  if (n == "tanh")
    return math::TanhOp::create(b, x);
  if (n == "relu") {
    Value c0 = zero();
    return arith::MaximumFOp::create(b, x, c0);
  }
  if (n == "leakyrelu") {
    Value c0 = zero(), alpha = cst(a.alpha);
    Value neg = mul(x, alpha);
    return sel(arith::CmpFPredicate::OGE, x, c0, x, neg);
  }
  if (n == "thresholdedrelu") {
    Value c0 = zero(), alpha = cst(a.alpha);
    return sel(arith::CmpFPredicate::OGT, x, alpha, x, c0);
  }
  if (n == "elu") {
    Value c0 = zero(), c1 = one(), alpha = cst(a.alpha);
    Value em1 = arith::SubFOp::create(b, math::ExpOp::create(b, x), c1);
    Value neg = mul(em1, alpha);
    return sel(arith::CmpFPredicate::OGE, x, c0, x, neg);
  }
  if (n == "hardsigmoid") {
    Value alpha = cst(a.alpha), beta = cst(a.beta), c0 = zero(), c1 = one();
    Value v = add(mul(x, alpha), beta);
    return arith::MinimumFOp::create(b, arith::MaximumFOp::create(b, v, c0), c1);
  }
  if (n == "scaledtanh") {
    Value alpha = cst(a.alpha), beta = cst(a.beta);
    return mul(alpha, math::TanhOp::create(b, mul(x, beta)));
  }
  if (n == "affine") {
    Value alpha = cst(a.alpha), beta = cst(a.beta);
    return add(mul(x, alpha), beta);
  }
  if (n == "softsign") {
    Value c1 = one();
    return arith::DivFOp::create(b, x, add(c1, math::AbsFOp::create(b, x)));
  }
  return math::Log1pOp::create(b, math::ExpOp::create(b, x)); // softplus
}

float rnn::evalActivation(const Activation &a, float x) {
  const std::string &n = a.name;
  if (n == "sigmoid")
    return 1.f / (1.f + std::exp(-x));
  if (n == "tanh")
    return std::tanh(x);
  if (n == "relu")
    return std::max(x, 0.f);
  if (n == "leakyrelu")
    return x >= 0.f ? x : x * a.alpha;
  if (n == "thresholdedrelu")
    return x > a.alpha ? x : 0.f;
  if (n == "elu")
    return x >= 0.f ? x : a.alpha * (std::exp(x) - 1.f);
  if (n == "hardsigmoid")
    return std::min(std::max(x * a.alpha + a.beta, 0.f), 1.f);
  if (n == "scaledtanh")
    return a.alpha * std::tanh(x * a.beta);
  if (n == "affine")
    return x * a.alpha + a.beta;
  if (n == "softsign")
    return x / (1.f + std::fabs(x));
  return std::log1p(std::exp(x)); // softplus
}

int8_t rnn::quantizeInt8(float v, float maxAbs) {
  if (!(maxAbs > 0.f))
    return 0;
  float q = std::nearbyint(v * (127.f / maxAbs));
  return (int8_t)std::clamp(q, -127.f, 127.f);
}

double rnn::simulatedPrecisionError(const LayerShape &s, LowPrecision p,
                                    ArrayRef<float> w, ArrayRef<float> r,
                                    ArrayRef<float> bw, ArrayRef<float> br,
                                    int64_t steps, int64_t batch,
                                    int64_t *stepsRun,
                                    ArrayRef<float> peephole) {
  const int64_t D = s.D, G = s.G, H = s.H, I = s.I;
  batch = std::max<int64_t>(1, std::min(batch, s.B));
  // At most about 2^28 multiply-adds per precision: fewer steps for a very
  // large layer, so that a compile never spends more than a fraction of a
  // second here whatever the model's sizes.
  const int64_t perStep = std::max<int64_t>(1, batch * D * G * H * (I + H));
  steps = std::max<int64_t>(
      1, std::min({steps, s.T, std::max<int64_t>(1, (int64_t(1) << 28) / perStep)}));
  if (stepsRun)
    *stepsRun = steps;
  if ((int64_t)w.size() < D * G * H * I || (int64_t)r.size() < D * G * H * H ||
      (int64_t)bw.size() < D * G * H || (int64_t)br.size() < D * G * H)
    return 0.0;
  auto bf16 = [](float v) {
    uint32_t u;
    std::memcpy(&u, &v, 4);
    if ((u & 0x7f800000u) != 0x7f800000u) // round to nearest even
      u += 0x7fffu + ((u >> 16) & 1u);
    u &= 0xffff0000u;
    std::memcpy(&v, &u, 4);
    return v;
  };
  // Inputs: a fixed linear congruential sequence, uniform in [-1, 1].
  std::vector<float> x(steps * batch * I);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (float &v : x) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    v = float((state >> 40) & 0xffffff) / float(0x800000) - 1.f;
  }
  const bool int8 = p == LowPrecision::Int8;
  // The weights as each precision's products see them, rounded once (int8:
  // quantized per row and dequantized; the products of the quantized
  // integers are exact in double, as the kernels' integer sums are).
  auto roundRows = [&](std::vector<float> &m, int64_t k) {
    for (size_t row = 0; row * k < m.size(); ++row) {
      float *v = &m[row * k];
      if (!int8) {
        for (int64_t i = 0; i < k; ++i)
          v[i] = bf16(v[i]);
        continue;
      }
      float maxAbs = 0.f;
      for (int64_t i = 0; i < k; ++i)
        maxAbs = std::max(maxAbs, std::fabs(v[i]));
      for (int64_t i = 0; i < k; ++i)
        v[i] = quantizeInt8(v[i], maxAbs) * int8Scale(maxAbs);
    }
  };
  std::vector<float> wq(w.begin(), w.begin() + D * G * H * I),
      rq(r.begin(), r.begin() + D * G * H * H);
  roundRows(wq, I);
  roundRows(rq, H);
  auto run = [&](bool round, std::vector<float> &y) {
    // An operand vector as the products see it: bf16-rounded, or int8
    // quantized to its own range and dequantized.
    auto q = [&](std::vector<float> &v) {
      if (round)
        roundRows(v, v.size());
    };
    const float *W = round ? wq.data() : w.data();
    const float *R = round ? rq.data() : r.data();
    y.assign(steps * D * batch * H, 0.f);
    std::vector<float> h(H), c(H), hq(H), rh(H), xr(G * H), hr(G * H), z(H), rg(H);
    for (int64_t d = 0; d < D; ++d) {
      const Activation &f = s.acts[d][0];
      const Activation &g = s.acts[d].size() > 1 ? s.acts[d][1] : f;
      const Activation &hAct = s.acts[d].size() > 2 ? s.acts[d][2] : g;
      auto clip = [&](float v) {
        return s.clip ? std::min(std::max(v, -*s.clip), *s.clip) : v;
      };
      for (int64_t b = 0; b < batch; ++b) {
        std::fill(h.begin(), h.end(), 0.f);
        std::fill(c.begin(), c.end(), 0.f);
        for (int64_t st = 0; st < steps; ++st) {
          int64_t t = s.reverse[d] ? steps - 1 - st : st;
          const float *xt = &x[(t * batch + b) * I];
          hq = h;
          q(hq);
          // x W^T + Bw, and h R^T + Br (kept apart for the GRU's n gate).
          std::vector<float> xq(xt, xt + I);
          q(xq);
          for (int64_t row = 0; row < G * H; ++row) {
            const float *wr = &W[(d * G * H + row) * I];
            const float *rr = &R[(d * G * H + row) * H];
            double ax = 0, ah = 0;
            for (int64_t k = 0; k < I; ++k)
              ax += double(wr[k]) * xq[k];
            for (int64_t k = 0; k < H; ++k)
              ah += double(rr[k]) * hq[k];
            xr[row] = float(ax) + bw[d * G * H + row];
            hr[row] = float(ah) + br[d * G * H + row];
          }
          float *yt = &y[((t * D + d) * batch + b) * H];
          for (int64_t j = 0; j < H; ++j) {
            if (s.isLSTM()) {
              // Peephole k (i, f, o) times the cell state, inside the clip.
              auto peep = [&](int64_t k, float cv) {
                return (int64_t)peephole.size() >= D * 3 * H
                           ? peephole[(d * 3 + k) * H + j] * cv
                           : 0.f;
              };
              float i = evalActivation(f, clip(xr[j] + hr[j] + peep(0, c[j])));
              float fg = s.inputForget
                             ? 1.f - i
                             : evalActivation(f, clip(xr[H + j] + hr[H + j] +
                                                      peep(1, c[j])));
              float gg = evalActivation(g, clip(xr[2 * H + j] + hr[2 * H + j]));
              c[j] = fg * c[j] + i * gg;
              float o = evalActivation(
                  f, clip(xr[3 * H + j] + hr[3 * H + j] + peep(2, c[j])));
              yt[j] = o * evalActivation(hAct, c[j]);
            } else if (!s.isGRU()) {
              yt[j] = evalActivation(f, clip(xr[j] + hr[j]));
            }
          }
          if (s.isGRU()) {
            for (int64_t j = 0; j < H; ++j) {
              rg[j] = evalActivation(f, clip(xr[j] + hr[j]));
              z[j] = evalActivation(f, clip(xr[H + j] + hr[H + j]));
            }
            if (!s.linearBeforeReset) {
              // n's recurrent product is over r * h.
              for (int64_t k = 0; k < H; ++k)
                rh[k] = rg[k] * h[k];
              q(rh);
              for (int64_t j = 0; j < H; ++j) {
                const float *rr = &R[(d * G * H + 2 * H + j) * H];
                double a = 0;
                for (int64_t k = 0; k < H; ++k)
                  a += double(rr[k]) * rh[k];
                hr[2 * H + j] = float(a) + br[d * G * H + 2 * H + j];
              }
            }
            for (int64_t j = 0; j < H; ++j) {
              float n = s.linearBeforeReset
                            ? evalActivation(g, clip(xr[2 * H + j] + rg[j] * hr[2 * H + j]))
                            : evalActivation(g, clip(xr[2 * H + j] + hr[2 * H + j]));
              yt[j] = (1.f - z[j]) * n + z[j] * h[j];
            }
          }
          for (int64_t j = 0; j < H; ++j)
            h[j] = yt[j];
        }
      }
    }
  };
  std::vector<float> exact, rounded;
  run(false, exact);
  run(true, rounded);
  double diff = 0, scale = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    diff = std::max(diff, (double)std::fabs(rounded[i] - exact[i]));
    scale = std::max(scale, (double)std::fabs(exact[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

FailureOr<LayerConstants> rnn::readLayerConstants(
    const LayerOperands &in,
    function_ref<InFlightDiagnostic(const Twine &)> fail) {
  auto w = onnx::getConstantF32(in.w), r = onnx::getConstantF32(in.r),
       bw = onnx::getConstantF32(in.bw), br = onnx::getConstantF32(in.br);
  if (!w || !r || !bw || !br) {
    fail("needs constant f32 weights");
    return failure();
  }
  LayerConstants k{std::move(*w), std::move(*r), std::move(*bw),
                   std::move(*br), std::nullopt};
  if (in.peephole && !(k.peephole = onnx::getConstantF32(in.peephole))) {
    fail("needs constant f32 peephole weights");
    return failure();
  }
  return k;
}

LogicalResult rnn::forEachLayer(
    ModuleOp module, StringRef pass,
    function_ref<LogicalResult(Operation *, const LayerOperands &)> lower) {
  SmallVector<Operation *> layers;
  module.walk([&](Operation *op) {
    if (isa<SequenceOp, RecurrenceOp>(op))
      layers.push_back(op);
  });
  for (Operation *op : layers) {
    if (auto seq = dyn_cast<SequenceOp>(op)) {
      LayerOperands in{seq.getX(),  seq.getW(),  seq.getBw(), seq.getR(),
                       seq.getBr(), seq.getH0(), seq.getC0(),
                       seq.getSequenceLens(), seq.getPeephole()};
      if (failed(lower(op, in)))
        return failure();
      continue;
    }
    auto rec = cast<RecurrenceOp>(op);
    auto proj = rec.getP().getDefiningOp<InputProjectionOp>();
    if (!proj)
      return rec.emitError() << pass << ": the recurrence's input projection "
                                        "must come from rnn.input_projection";
    LayerOperands in{proj.getX(), proj.getW(), proj.getBw(), rec.getR(),
                     rec.getBr(), rec.getH0(), rec.getC0(),
                     rec.getSequenceLens(), rec.getPeephole()};
    if (failed(lower(op, in)))
      return failure();
  }
  return success();
}

LogicalResult rnn::checkOnlyLayersLowered(ModuleOp module, StringRef pass,
                                          StringRef stackMessage) {
  WalkResult left = module.walk([&](Operation *op) {
    if (isa<StackOp>(op)) {
      op->emitError() << pass << ": " << stackMessage;
      return WalkResult::interrupt();
    }
    if (isa<LSTMCellOp, GRUCellOp, RNNCellOp>(op)) {
      op->emitError() << pass << ": a single cell must be rolled into a "
                                 "layer first (run rnn-roll-time-loop)";
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return failure(left.wasInterrupted());
}

std::string rnn::uniqueSymbol(ModuleOp module, StringRef base) {
  std::string name = base.str();
  for (int n = 1; module.lookupSymbol(name); ++n)
    name = (base + "_" + Twine(n)).str();
  return name;
}

std::string rnn::layerSymbol(Location loc, StringRef prefix) {
  std::string n = "layer";
  loc->walk([&](Location l) {
    if (auto nl = dyn_cast<NameLoc>(l)) {
      n = nl.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  std::string out = prefix.str();
  for (char c : n)
    out += llvm::isAlnum(c) ? c : '_';
  return out;
}

LogicalResult rnn::replaceWithBuffers(Operation *op, ArrayRef<Value> buffers) {
  ImplicitLocOpBuilder b(op->getLoc(), op);
  for (auto [res, m] : llvm::zip(op->getResults(), buffers)) {
    auto mt = cast<MemRefType>(m.getType());
    auto tt = RankedTensorType::get(mt.getShape(), mt.getElementType());
    Value t = bufferization::ToTensorOp::create(b, tt, m, /*restrict=*/true,
                                                /*writable=*/true);
    if (t.getType() != res.getType()) {
      if (!tensor::CastOp::areCastCompatible(t.getType(), res.getType()))
        return op->emitError() << "the lowered layer's result type " << t.getType()
                               << " does not match " << res.getType();
      t = tensor::CastOp::create(b, res.getType(), t);
    }
    res.replaceAllUsesWith(t);
  }
  SmallVector<Operation *> inputs;
  for (Value v : op->getOperands())
    if (Operation *def = v.getDefiningOp())
      inputs.push_back(def);
  op->erase();
  onnx::eraseDeadOps(inputs);
  return success();
}

FailureOr<Value> rnn::castToLayerType(ImplicitLocOpBuilder &b, Value v,
                                      ArrayRef<int64_t> shape, Type elt,
                                      StringRef what, LayerFailure fail) {
  if (!v)
    return Value();
  auto want = RankedTensorType::get(shape, elt);
  auto t = cast<TensorType>(v.getType());
  if (t.getElementType() != elt) {
    std::string name;
    llvm::raw_string_ostream(name) << elt;
    return fail(Twine(what) + " must have element type " + name), failure();
  }
  if (t == want)
    return v;
  if (!tensor::CastOp::areCastCompatible(t, want))
    return fail(Twine(what) + " has the wrong shape"), failure();
  return Value(tensor::CastOp::create(b, want, v));
}

LogicalResult rnn::emitLayerCall(ImplicitLocOpBuilder &b, Operation *op,
                                 func::FuncOp fn, Value x,
                                 ArrayRef<Value> inputs, const LayerShape &s,
                                 LayerFailure fail) {
  // Each call reads its inputs where it is: the buffers carry the callee's
  // name, so that CSE cannot merge them with another call's read of the
  // same tensor (one buffer read at the first call only: bufferization
  // would then let later ops write over it before the second call reads it).
  auto toBuffer = [&](Value t) -> Value {
    auto tt = cast<RankedTensorType>(t.getType());
    auto m = bufferization::ToBufferOp::create(
        b, MemRefType::get(tt.getShape(), tt.getElementType()), t,
        /*read_only=*/true);
    m->setAttr("lstm_opt.read_by", b.getStringAttr(fn.getSymName()));
    return m;
  };
  SmallVector<ReassociationIndices> rows = {{0, 1}, {2}};
  SmallVector<Value> args = {
      memref::CollapseShapeOp::create(b, toBuffer(x), rows)};
  for (Value v : inputs)
    args.push_back(toBuffer(v));
  SmallVector<Value> outs;
  for (Value res : op->getResults()) {
    auto rt = RankedTensorType::get(
        res == op->getResult(0) ? SmallVector<int64_t>{s.T, s.D, s.B, s.H}
                                : SmallVector<int64_t>{s.D, s.B, s.H},
        b.getF32Type());
    if (auto want = dyn_cast<RankedTensorType>(res.getType());
        want && want.hasStaticShape() && want != rt)
      return fail("result type does not match the layer's shape");
    Value m = memref::AllocOp::create(
        b, MemRefType::get(rt.getShape(), b.getF32Type()),
        b.getI64IntegerAttr(64));
    args.push_back(m);
    outs.push_back(m);
  }
  func::CallOp::create(b, fn, args);
  return replaceWithBuffers(op, outs);
}

Value rnn::emitFlatGlobal(ImplicitLocOpBuilder &b, ModuleOp module,
                          StringRef sym, Type elt, Attribute values,
                          int64_t n, bool constant) {
  auto type = MemRefType::get({n}, elt);
  OpBuilder mb(module.getBodyRegion());
  mb.setInsertionPointToStart(module.getBody());
  auto g = memref::GlobalOp::create(mb, b.getLoc(), sym,
                                    mb.getStringAttr("private"), type, values,
                                    constant, mb.getI64IntegerAttr(64));
  return memref::GetGlobalOp::create(b, type, g.getSymName());
}

Value rnn::emitShapedGlobal(ImplicitLocOpBuilder &b, ModuleOp module,
                            StringRef sym, ArrayRef<int64_t> shape, Type elt,
                            DenseElementsAttr values) {
  int64_t n = values.getNumElements();
  Value v = emitFlatGlobal(b, module, sym, elt, values, n);
  SmallVector<ReassociationIndices> all(1);
  for (size_t i = 0; i < shape.size(); ++i)
    all[0].push_back(i);
  return memref::ExpandShapeOp::create(b, MemRefType::get(shape, elt), v, all);
}

Value rnn::emitShapedGlobal(ImplicitLocOpBuilder &b, ModuleOp module,
                            StringRef sym, ArrayRef<int64_t> shape,
                            ArrayRef<float> values) {
  Type f32 = b.getF32Type();
  return emitShapedGlobal(
      b, module, sym, shape, f32,
      DenseElementsAttr::get(
          RankedTensorType::get({(int64_t)values.size()}, f32), values));
}

Value rnn::emitClip(ImplicitLocOpBuilder &b, Value x, std::optional<float> clip) {
  if (!clip)
    return x;
  auto bound = [&](float v) -> Value {
    if (auto vt = dyn_cast<VectorType>(x.getType()))
      return arith::ConstantOp::create(
          b, DenseElementsAttr::get(vt, b.getF32FloatAttr(v)));
    return arith::ConstantOp::create(b, b.getF32FloatAttr(v));
  };
  Value hi = bound(*clip), lo = bound(-*clip);
  return arith::MinimumFOp::create(b, arith::MaximumFOp::create(b, x, lo), hi);
}

void rnn::remarkLayerLeftForCPU(Operation *layer, StringRef pass,
                                const Twine &why) {
  layer->emitRemark() << pass << ": layer left for the CPU kernels: " << why;
}
