//===- RNNToLinalg.cpp - rnn layers -> linalg/tensor/scf on tensors -------===//
//
// The portable lowering of a recurrent layer, in upstream dialects only:
//
//   for d in directions:
//     P = X W[d]^T + bias                   linalg.matmul over T*B rows
//     scf.for s in 0 .. T-1 iter_args(h, c, Y):
//       Rh = h R[d]^T                        linalg.matmul, all gates at once
//       h', c' = cell(P[t], Rh, h, c)        one linalg.generic
//       Y[t] = h'                            tensor.insert_slice
//
// A GRU whose reset comes before its matmul runs two matmuls per step: r and
// z from h, then n from r * h. With sequence_lens, rows past their length
// keep their state and write zeros (selects in the cell); a reverse
// direction then reverses each row's first `len` steps of X before the loop
// and of Y after it (ONNX's ReverseSequence, a gather in a linalg.generic).
// Weights are transposed and biases folded at compile time into
// arith.constant tensors.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Conversion/RNNToLinalg/RNNToLinalg.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"
#include "lstm-opt/Dialect/RNN/Utils/CellLowering.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"

namespace lstm_opt {
#define GEN_PASS_DEF_CONVERTRNNTOLINALGPASS
#define GEN_PASS_DEF_ONNXSTRIPATTRIBUTESPASS
#define GEN_PASS_DEF_LINALGSIGNLESSINTEGERSPASS
#include "lstm-opt/Conversion/Passes.h.inc"
} // namespace lstm_opt

using namespace mlir;
using namespace lstm_opt;

namespace {

namespace od = lstm_opt::onnx;

constexpr llvm::StringLiteral kPass = "convert-rnn-to-linalg";

using rnn::LayerOperands;

/// Builds one layer's tensors.
class LayerBuilder {
public:
  LayerBuilder(ImplicitLocOpBuilder &b, const rnn::LayerShape &s)
      : b(b), s(s), f32(b.getF32Type()) {}

  RankedTensorType tensor(ArrayRef<int64_t> shape, Type elt = {}) {
    return RankedTensorType::get(shape, elt ? elt : f32);
  }
  Value cst(ArrayRef<int64_t> shape, ArrayRef<float> values) {
    return arith::ConstantOp::create(
        b, DenseElementsAttr::get(tensor(shape), values));
  }
  Value zeros(ArrayRef<int64_t> shape) {
    Value zero = arith::ConstantOp::create(b, b.getF32FloatAttr(0.f));
    Value empty = tensor::EmptyOp::create(b, shape, f32);
    return linalg::FillOp::create(b, ValueRange{zero}, ValueRange{empty})
        .getResult(0);
  }
  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, v); }

  /// a [M, K] x bT [K, N] -> [M, N]; with `recurrent` and an IREE
  /// dispatch being built, the matmul gets the lowering config that keeps
  /// it in one workgroup (see ireeRecurrentConfig).
  Value matmul(Value a, Value bT, bool recurrent = false) {
    auto at = cast<RankedTensorType>(a.getType());
    auto bt = cast<RankedTensorType>(bT.getType());
    Value init = zeros({at.getDimSize(0), bt.getDimSize(1)});
    auto mm = linalg::MatmulOp::create(b, ValueRange{a, bT}, ValueRange{init});
    if (recurrent && ireeDispatch)
      mm->setAttr("compilation_info",
                  ireeRecurrentConfig(bt.getDimSize(1)));
    return mm.getResult(0);
  }

  /// IREE's `#iree_codegen.compilation_info` for a step's [M, K] x [K, N]
  /// matmul inside the recurrence's dispatch, as an opaque attribute (the
  /// IREE dialects are not linked here; IREE parses the text). No
  /// distribution: the whole dispatch is one workgroup, which the step's
  /// dependence on the previous one needs (IREE would otherwise split the
  /// matmul over workgroups inside the sequential loop). Vector tiles of
  /// [1, n] with the reduction one row of the weights at a time: n / 16
  /// independent accumulators (16 AVX-512 registers at most). One batch row
  /// per tile: IREE 3.13 fails to bufferize the loop when the tile covers
  /// all of a small batch (B = 3 with a [3, n] tile).
  Attribute ireeRecurrentConfig(int64_t N) {
    int64_t n = 16;
    while (n < 256 && n < N)
      n *= 2;
    std::string text;
    llvm::raw_string_ostream os(text);
    os << "compilation_info<lowering_config = #iree_cpu.lowering_config<"
          "distribution = [0, 0, 0], vector_common_parallel = [1, "
       << n
       << ", 0], vector_reduction = [0, 0, 1]>, translation_info = "
          "#iree_codegen.translation_info<pipeline = "
          "#iree_cpu.pipeline<DoubleTilingExpert>>>";
    return OpaqueAttr::get(b.getStringAttr("iree_codegen"), text,
                           NoneType::get(b.getContext()));
  }

  /// src[off0 + 0 .. , off1 ..] of `sizes`, rank-reduced to `resultShape`.
  Value slice(Value src, ArrayRef<OpFoldResult> offsets,
              ArrayRef<int64_t> sizes, ArrayRef<int64_t> resultShape) {
    SmallVector<OpFoldResult> sz, st;
    for (int64_t n : sizes) {
      sz.push_back(b.getIndexAttr(n));
      st.push_back(b.getIndexAttr(1));
    }
    return tensor::ExtractSliceOp::create(b, tensor(resultShape), src, offsets,
                                          sz, st);
  }
  Value insert(Value src, Value dst, ArrayRef<OpFoldResult> offsets,
               ArrayRef<int64_t> sizes) {
    SmallVector<OpFoldResult> sz, st;
    for (int64_t n : sizes) {
      sz.push_back(b.getIndexAttr(n));
      st.push_back(b.getIndexAttr(1));
    }
    return tensor::InsertSliceOp::create(b, src, dst, offsets, sz, st);
  }

  /// An elementwise linalg.generic over `shape`: identity maps for `ins`
  /// of that shape, (d0, ..) -> (d0) for `rowIns` (one value per row).
  SmallVector<Value>
  elementwise(ArrayRef<int64_t> shape, ValueRange ins, ValueRange rowIns,
              unsigned numResults,
              function_ref<SmallVector<Value>(ImplicitLocOpBuilder &,
                                              ArrayRef<Value>, ArrayRef<Value>)>
                  body) {
    MLIRContext *ctx = b.getContext();
    unsigned rank = shape.size();
    AffineMap id = AffineMap::getMultiDimIdentityMap(rank, ctx);
    AffineMap row = AffineMap::get(rank, 0, {getAffineDimExpr(0, ctx)}, ctx);
    SmallVector<AffineMap> maps;
    SmallVector<Value> inputs(ins.begin(), ins.end());
    for (size_t i = 0; i < ins.size(); ++i)
      maps.push_back(id);
    for (Value v : rowIns) {
      inputs.push_back(v);
      maps.push_back(row);
    }
    SmallVector<Value> outs;
    SmallVector<Type> types;
    for (unsigned i = 0; i < numResults; ++i) {
      outs.push_back(tensor::EmptyOp::create(b, shape, f32));
      types.push_back(tensor(shape));
      maps.push_back(id);
    }
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    size_t nIns = ins.size();
    auto op = linalg::GenericOp::create(
        b, types, inputs, outs, maps, iters,
        [&](OpBuilder &ob, Location loc, ValueRange args) {
          ImplicitLocOpBuilder ib(loc, ob);
          SmallVector<Value> a(args.begin(), args.begin() + nIns);
          SmallVector<Value> r(args.begin() + nIns,
                               args.begin() + nIns + rowIns.size());
          linalg::YieldOp::create(ib, body(ib, a, r));
        });
    return SmallVector<Value>(op.getResults().begin(), op.getResults().end());
  }

  /// ONNX's ReverseSequence on [T, B, K] (batch axis 1): each row's first
  /// `len` steps reversed, the rest as they are.
  Value reverseRows(Value x, Value lens) {
    auto xt = cast<RankedTensorType>(x.getType());
    MLIRContext *ctx = b.getContext();
    AffineMap row = AffineMap::get(3, 0, {getAffineDimExpr(1, ctx)}, ctx);
    AffineMap id = AffineMap::getMultiDimIdentityMap(3, ctx);
    Value out = tensor::EmptyOp::create(b, xt.getShape(), f32);
    SmallVector<utils::IteratorType> iters(3, utils::IteratorType::parallel);
    auto op = linalg::GenericOp::create(
        b, TypeRange{xt}, ValueRange{lens}, ValueRange{out},
        ArrayRef<AffineMap>{row, id}, iters,
        [&](OpBuilder &ob, Location loc, ValueRange args) {
          ImplicitLocOpBuilder ib(loc, ob);
          Value t = linalg::IndexOp::create(ib, 0);
          Value bi = linalg::IndexOp::create(ib, 1);
          Value k = linalg::IndexOp::create(ib, 2);
          Value len = arith::IndexCastOp::create(ib, ib.getIndexType(), args[0]);
          Value inside = arith::CmpIOp::create(ib, arith::CmpIPredicate::slt, t, len);
          Value back = arith::SubIOp::create(
              ib, arith::SubIOp::create(ib, len, arith::ConstantIndexOp::create(ib, 1)),
              t);
          Value src = arith::SelectOp::create(ib, inside, back, t);
          Value v = tensor::ExtractOp::create(ib, x, ValueRange{src, bi, k});
          linalg::YieldOp::create(ib, v);
        });
    return op.getResult(0);
  }

  ImplicitLocOpBuilder &b;
  const rnn::LayerShape &s;
  Type f32;
  bool ireeDispatch = false;
};

/// [rows][cols] -> [cols][rows] of a row-major block.
/// Whether one step's tensors fit the stack IREE gives a dispatch (32 KiB
/// on llvm-cpu: it keeps the step's gates [B, G*H] and the cell's new states
/// there; 4 * B * (G*H + 2*H) bytes measured with IREE 3.13). When not, the
/// layer keeps the plain loop (IREE runs it step by step) and a remark says
/// why.
bool fitsIREEStack(Operation *op, int64_t B, int64_t gh, int64_t H) {
  constexpr int64_t kStack = 32 * 1024;
  int64_t bytes = 4 * B * (gh + 3 * H);
  if (bytes <= kStack)
    return true;
  op->emitRemark() << kPass
                   << ": the time loop stays outside an IREE dispatch region: "
                      "one step's tensors take about "
                   << bytes / 1024 << " KiB, over the 32 KiB of stack IREE "
                   << "gives a dispatch";
  return false;
}

/// The time loop of one direction inside an IREE `flow.dispatch.region`
/// (built as an unregistered op: `"flow.dispatch.region"() ({...}, {})`), so
/// that IREE compiles the whole recurrence into one dispatch. Written for
/// IREE's bufferization: the carried states live in one flat tensor
/// ([h; c], B*H each; a GRU's or RNN's second half unused) created inside
/// the region and updated with insert_slice, the output sequence too, so
/// that both bufferize in place into the dispatch's result buffers. A state
/// carried as a fresh tensor per step would need a new buffer per
/// iteration, which IREE refuses. The other layouts tried trip IREE 3.13's
/// reshape propagation (a reshape of the loop's argument hoisted out of the
/// loop): a [2, B, H] or [2B, H] state, and a flat one whose full-size
/// slices fold away. Returns h, Y and c (null for GRU/RNN) as the plain
/// loop does.
SmallVector<Value> ireeDispatchLoop(
    ImplicitLocOpBuilder &b, const rnn::LayerShape &s, int64_t T, Value hInit,
    Value cInit,
    function_ref<SmallVector<Value>(ImplicitLocOpBuilder &, Value, ValueRange)>
        stepBody) {
  const int64_t B = s.B, H = s.H, bh = B * H;
  const bool lstm = s.isLSTM();
  LayerBuilder lb(b, s);
  auto stateType = lb.tensor({2 * bh});
  auto yType = lb.tensor({T, B, H});
  auto flat = [&](ImplicitLocOpBuilder &ib, Value v) -> Value {
    return tensor::CollapseShapeOp::create(
        ib, RankedTensorType::get({bh}, b.getF32Type()), v,
        ArrayRef<ReassociationIndices>{{0, 1}});
  };
  auto part = [&](ImplicitLocOpBuilder &ib, Value st, int64_t k) -> Value {
    LayerBuilder L(ib, s);
    Value v = L.slice(st, {ib.getIndexAttr(k * bh)}, {bh}, {bh});
    return tensor::ExpandShapeOp::create(ib, L.tensor({B, H}), v,
                                         ArrayRef<ReassociationIndices>{{0, 1}});
  };
  auto store = [&](ImplicitLocOpBuilder &ib, Value st, Value v, int64_t k) {
    LayerBuilder L(ib, s);
    return L.insert(flat(ib, v), st, {ib.getIndexAttr(k * bh)}, {bh});
  };

  OperationState state(b.getLoc(), "flow.dispatch.region");
  state.addTypes({stateType, yType});
  // No result dims, no workload: static shapes, IREE's default count.
  state.addAttribute("operandSegmentSizes", b.getDenseI32ArrayAttr({0, 0}));
  Region *body = state.addRegion();
  state.addRegion(); // the workgroup count region, empty
  Block *block = new Block();
  body->push_back(block);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(block);
    Value st = tensor::EmptyOp::create(b, stateType.getShape(), b.getF32Type());
    st = store(b, st, hInit, 0);
    if (lstm)
      st = store(b, st, cInit, 1);
    Value y0 = tensor::EmptyOp::create(b, yType.getShape(), b.getF32Type());
    auto loop = scf::ForOp::create(
        b, lb.index(0), lb.index(T), lb.index(1), ValueRange{st, y0},
        [&](OpBuilder &ob, Location loc, Value step, ValueRange iter) {
          ImplicitLocOpBuilder sb(loc, ob);
          SmallVector<Value> cur = {part(sb, iter[0], 0), iter[1]};
          if (lstm)
            cur.push_back(part(sb, iter[0], 1));
          SmallVector<Value> next = stepBody(sb, step, cur);
          Value ns = store(sb, iter[0], next[0], 0);
          if (lstm)
            ns = store(sb, ns, next[2], 1);
          scf::YieldOp::create(sb, ValueRange{ns, next[1]});
        });
    OperationState ret(b.getLoc(), "flow.return");
    ret.addOperands(loop.getResults());
    b.create(ret);
  }
  Operation *region = b.create(state);
  Value finalState = region->getResult(0);
  return {part(b, finalState, 0), region->getResult(1),
          lstm ? part(b, finalState, 1) : Value()};
}

std::vector<float> transposed(ArrayRef<float> m, int64_t rows, int64_t cols) {
  std::vector<float> t(rows * cols);
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      t[j * rows + i] = m[i * cols + j];
  return t;
}

template <typename OpTy>
LogicalResult lowerLayer(OpTy op, const LayerOperands &in, int64_t unrollSteps,
                         bool ireeDispatch) {
  auto fail = [&](const Twine &why) {
    return op->emitError() << kPass << ": " << why;
  };
  auto xt = dyn_cast<RankedTensorType>(in.x.getType());
  if (!xt || !xt.hasStaticShape() || xt.getRank() != 3 ||
      !xt.getElementType().isF32())
    return fail("needs a static f32 [T, B, I] input; specialise the input "
                "shapes first");
  auto consts = rnn::readLayerConstants(in, fail);
  if (failed(consts))
    return failure();
  const od::F32Tensor *w = &consts->w, *r = &consts->r, *bw = &consts->bw,
                      *br = &consts->br;
  const std::optional<od::F32Tensor> &peephole = consts->peephole;
  if (auto p = op->template getAttrOfType<StringAttr>(rnn::kPrecisionAttr))
    if (p.getValue() != "f32")
      return fail("lowers f32 layers only; this layer asks for precision " +
                  p.getValue());
  rnn::LayerShape s;
  if (failed(rnn::describeLayer(op, kPass, xt, w->shape[2], (bool)in.h0,
                                (bool)in.c0, s)))
    return failure();
  const int64_t T = s.T, B = s.B, I = s.I, H = s.H, D = s.D, G = s.G;
  ImplicitLocOpBuilder b(op.getLoc(), op);
  auto h0 = rnn::castToLayerType(b, in.h0, {D, B, H}, b.getF32Type(),
                                 "the initial state", fail);
  auto c0 = rnn::castToLayerType(b, s.hasC0 ? in.c0 : Value(), {D, B, H},
                                 b.getF32Type(), "the initial cell state", fail);
  auto lens = rnn::castToLayerType(b, in.lens, {B}, b.getI32Type(),
                                   "sequence_lens", fail);
  if (failed(h0) || failed(c0) || failed(lens))
    return failure();
  for (unsigned i = 0; i < op->getNumResults(); ++i) {
    auto rt = dyn_cast<RankedTensorType>(op->getResult(i).getType());
    SmallVector<int64_t> want = i == 0 ? SmallVector<int64_t>{T, D, B, H}
                                       : SmallVector<int64_t>{D, B, H};
    if (!rt || rt.getShape() != ArrayRef<int64_t>(want) ||
        !rt.getElementType().isF32())
      return fail("result #" + Twine(i) + " is not the layer's static f32 type");
  }

  // sequence_lens clamped into [0, T]: a length past the steps, or a
  // negative one, would index the sequence out of range (ONNX Runtime
  // refuses it; the lowered code has no error channel, so such a row runs
  // T steps, or none).
  if (*lens) {
    auto lt = cast<RankedTensorType>((*lens).getType());
    AffineMap id = AffineMap::getMultiDimIdentityMap(1, b.getContext());
    Value out = tensor::EmptyOp::create(b, lt.getShape(), lt.getElementType());
    *lens = linalg::GenericOp::create(
                b, TypeRange{lt}, ValueRange{*lens}, ValueRange{out},
                ArrayRef<AffineMap>{id, id},
                ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
                [&](OpBuilder &ob, Location loc, ValueRange a) {
                  ImplicitLocOpBuilder ib(loc, ob);
                  Value v = arith::MaxSIOp::create(
                      ib, a[0],
                      arith::ConstantOp::create(ib, ib.getI32IntegerAttr(0)));
                  v = arith::MinSIOp::create(
                      ib, v,
                      arith::ConstantOp::create(
                          ib, ib.getI32IntegerAttr((int32_t)T)));
                  linalg::YieldOp::create(ib, v);
                })
                .getResult(0);
  }
  LayerBuilder lb(b, s);
  Value x2 = tensor::CollapseShapeOp::create(
      b, lb.tensor({T * B, I}), in.x,
      ArrayRef<ReassociationIndices>{{0, 1}, {2}});
  Value yAll = tensor::EmptyOp::create(b, ArrayRef<int64_t>{T, D, B, H},
                                       b.getF32Type());
  Value hAll = tensor::EmptyOp::create(b, ArrayRef<int64_t>{D, B, H}, b.getF32Type());
  Value cAll = s.isLSTM() ? tensor::EmptyOp::create(b, ArrayRef<int64_t>{D, B, H},
                                                    b.getF32Type())
                          : Value();
  auto idx = [&](int64_t v) -> OpFoldResult { return b.getIndexAttr(v); };

  for (int64_t d = 0; d < D; ++d) {
    const auto &acts = s.acts[d];
    const bool rev = s.reverse[d];
    const int64_t gh = G * H;
    // Weights: W[d]^T [I, G*H]; R[d]^T [H, G*H] (a two-phase GRU: r, z
    // [H, 2H] and n [H, H]); biases folded: Bw + Br, except a GRU's n gate
    // under linear_before_reset, whose Br sits inside r * (.).
    ArrayRef<float> wd = ArrayRef<float>(w->values).slice(d * gh * I, gh * I);
    ArrayRef<float> rd = ArrayRef<float>(r->values).slice(d * gh * H, gh * H);
    Value wT = lb.cst({I, gh}, transposed(wd, gh, I));
    Value rT, rTn;
    if (s.twoPhase()) {
      rT = lb.cst({H, 2 * H}, transposed(rd.take_front(2 * H * H), 2 * H, H));
      rTn = lb.cst({H, H}, transposed(rd.drop_front(2 * H * H), H, H));
    } else {
      rT = lb.cst({H, gh}, transposed(rd, gh, H));
    }
    std::vector<float> bias(gh), brn(H, 0.f);
    bool split = s.isGRU() && s.linearBeforeReset;
    for (int64_t j = 0; j < gh; ++j) {
      float rb = br->values[d * gh + j];
      bool n = split && j >= 2 * H;
      bias[j] = bw->values[d * gh + j] + (n ? 0.f : rb);
      if (n)
        brn[j - 2 * H] = rb;
    }
    Value biasV = lb.cst({gh}, bias);

    // 1. The input GEMM over every step: P [T, B, G*H].
    Value xd = x2;
    if (rev && *lens) {
      Value x3 = lb.reverseRows(in.x, *lens);
      xd = tensor::CollapseShapeOp::create(
          b, lb.tensor({T * B, I}), x3,
          ArrayRef<ReassociationIndices>{{0, 1}, {2}});
    }
    Value p = lb.matmul(xd, wT);
    {
      MLIRContext *ctx = b.getContext();
      AffineMap id = AffineMap::getMultiDimIdentityMap(2, ctx);
      AffineMap col = AffineMap::get(2, 0, {getAffineDimExpr(1, ctx)}, ctx);
      SmallVector<utils::IteratorType> iters(2, utils::IteratorType::parallel);
      p = linalg::GenericOp::create(
              b, TypeRange{p.getType()}, ValueRange{biasV}, ValueRange{p},
              ArrayRef<AffineMap>{col, id}, iters,
              [&](OpBuilder &ob, Location loc, ValueRange args) {
                ImplicitLocOpBuilder ib(loc, ob);
                linalg::YieldOp::create(
                    ib, ValueRange{arith::AddFOp::create(ib, args[1], args[0])});
              })
              .getResult(0);
    }
    Value p3 = tensor::ExpandShapeOp::create(
        b, lb.tensor({T, B, gh}), p,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}});
    Value brnV = split ? lb.cst({H}, brn) : Value();
    // An LSTM's peephole weights [3*H] (i, f, o), read with linalg.index.
    Value peepV =
        peephole ? lb.cst({3 * H}, ArrayRef<float>(peephole->values)
                                       .slice(d * 3 * H, 3 * H)
                                       .vec())
                 : Value();

    // 2. Initial states.
    auto initial = [&](FailureOr<Value> all) -> Value {
      if (!*all)
        return lb.zeros({B, H});
      return lb.slice(*all, {idx(d), idx(0), idx(0)}, {1, B, H}, {B, H});
    };
    Value hInit = initial(h0);
    Value cInit = s.isLSTM() ? initial(c0) : Value();
    Value yInit = tensor::EmptyOp::create(b, ArrayRef<int64_t>{T, B, H},
                                          b.getF32Type());

    // 3. The time loop.
    SmallVector<Value> iterInit = {hInit, yInit};
    if (s.isLSTM())
      iterInit.push_back(cInit);
    // One step: the new h, Y and c from the previous ones.
    auto stepBody = [&](ImplicitLocOpBuilder &sb, Value step,
                        ValueRange iter) -> SmallVector<Value> {
          LayerBuilder L(sb, s);
          L.ireeDispatch = ireeDispatch;
          Value h = iter[0], yAcc = iter[1];
          Value c = s.isLSTM() ? iter[2] : Value();
          // Reverse without lengths walks the steps backwards; with them the
          // rows were reversed instead.
          Value t = step;
          if (rev && !*lens)
            t = arith::SubIOp::create(sb, L.index(T - 1), step);
          Value pt = L.slice(p3, {t, sb.getIndexAttr(0), sb.getIndexAttr(0)},
                             {1, B, gh}, {B, gh});
          auto gate = [&](Value m, int64_t g) {
            return L.slice(m, {sb.getIndexAttr(0), sb.getIndexAttr(g * H)},
                           {B, H}, {B, H});
          };
          Value rh = L.matmul(h, rT, /*recurrent=*/true);
          SmallVector<Value> rowIns;
          if (*lens)
            rowIns.push_back(*lens);
          Value step32 = arith::IndexCastOp::create(sb, sb.getI32Type(), step);
          auto active = [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> rows) -> Value {
            if (rows.empty())
              return Value();
            return arith::CmpIOp::create(ib, arith::CmpIPredicate::slt, step32,
                                         rows[0]);
          };
          auto act = [&](ImplicitLocOpBuilder &ib, unsigned k, Value v) {
            return rnn::emitActivation(ib, acts[k], rnn::emitClip(ib, v, s.clip),
                                       rnn::ActivationForm::Reference);
          };
          Value zero = arith::ConstantOp::create(sb, sb.getF32FloatAttr(0.f));
          SmallVector<Value> next; // h', y row, c'
          if (s.isLSTM()) {
            SmallVector<Value> ins;
            for (int64_t g = 0; g < 4; ++g)
              ins.push_back(gate(pt, g));
            for (int64_t g = 0; g < 4; ++g)
              ins.push_back(gate(rh, g));
            ins.push_back(c);
            ins.push_back(h);
            next = L.elementwise(
                {B, H}, ins, rowIns, 3,
                [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> a,
                    ArrayRef<Value> rows) -> SmallVector<Value> {
                  auto pre = [&](int64_t g) {
                    return arith::AddFOp::create(ib, a[g], a[4 + g]).getResult();
                  };
                  // Peephole k (i, f, o) times a cell state, inside the
                  // clip (as ONNX Runtime).
                  auto peep = [&](Value v, int64_t k, Value cv) -> Value {
                    if (!peepV)
                      return v;
                    Value j = linalg::IndexOp::create(ib, 1);
                    Value at = arith::AddIOp::create(
                        ib, j, arith::ConstantIndexOp::create(ib, k * H));
                    Value pk = tensor::ExtractOp::create(ib, peepV, ValueRange{at});
                    return arith::AddFOp::create(
                        ib, v, arith::MulFOp::create(ib, pk, cv));
                  };
                  Value i = act(ib, 0, peep(pre(0), 0, a[8]));
                  Value f;
                  if (s.inputForget) {
                    Value one = arith::ConstantOp::create(ib, ib.getF32FloatAttr(1.f));
                    f = arith::SubFOp::create(ib, one, i);
                  } else {
                    f = act(ib, 0, peep(pre(1), 1, a[8]));
                  }
                  Value gg = act(ib, 1, pre(2));
                  Value cNew = arith::AddFOp::create(
                      ib, arith::MulFOp::create(ib, f, a[8]),
                      arith::MulFOp::create(ib, i, gg));
                  Value o = act(ib, 0, peep(pre(3), 2, cNew));
                  Value hNew = arith::MulFOp::create(
                      ib, o, rnn::emitActivation(ib, acts[2], cNew,
                                                 rnn::ActivationForm::Reference));
                  Value y = hNew;
                  if (Value on = active(ib, rows)) {
                    cNew = arith::SelectOp::create(ib, on, cNew, a[8]);
                    hNew = arith::SelectOp::create(ib, on, hNew, a[9]);
                    y = arith::SelectOp::create(ib, on, hNew, zero);
                  }
                  return {hNew, y, cNew};
                });
          } else if (s.isGRU()) {
            Value rhN;
            if (s.twoPhase()) {
              // r * h first (n's product is over it).
              Value rr = gate(rh, 0);
              SmallVector<Value> prh = L.elementwise(
                  {B, H}, {gate(pt, 0), rr, h}, {}, 1,
                  [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> a,
                      ArrayRef<Value>) -> SmallVector<Value> {
                    Value rg = act(ib, 0, arith::AddFOp::create(ib, a[0], a[1]));
                    return {arith::MulFOp::create(ib, rg, a[2]).getResult()};
                  });
              // Untagged: IREE takes one op's config per dispatch and
              // lowers the other matmul to match.
              rhN = L.matmul(prh[0], rTn);
            } else {
              rhN = gate(rh, 2);
            }
            SmallVector<Value> ins = {gate(pt, 0), gate(pt, 1), gate(pt, 2),
                                      gate(rh, 0), gate(rh, 1), rhN, h};
            SmallVector<Value> rowsIn = rowIns;
            next = L.elementwise(
                {B, H}, ins, rowsIn, 2,
                [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> a,
                    ArrayRef<Value> rows) -> SmallVector<Value> {
                  Value rg = act(ib, 0, arith::AddFOp::create(ib, a[0], a[3]));
                  Value z = act(ib, 0, arith::AddFOp::create(ib, a[1], a[4]));
                  Value npre;
                  if (s.twoPhase()) {
                    npre = arith::AddFOp::create(ib, a[2], a[5]);
                  } else {
                    // The n gate's recurrent bias, inside r * (.): a
                    // constant per unit, read with linalg.index.
                    Value j = linalg::IndexOp::create(ib, 1);
                    Value bn = tensor::ExtractOp::create(ib, brnV, ValueRange{j});
                    npre = arith::AddFOp::create(
                        ib, a[2],
                        arith::MulFOp::create(ib, rg,
                                              arith::AddFOp::create(ib, a[5], bn)));
                  }
                  Value n = act(ib, 1, npre);
                  Value one = arith::ConstantOp::create(ib, ib.getF32FloatAttr(1.f));
                  Value hNew = arith::AddFOp::create(
                      ib,
                      arith::MulFOp::create(ib, arith::SubFOp::create(ib, one, z), n),
                      arith::MulFOp::create(ib, z, a[6]));
                  Value y = hNew;
                  if (Value on = active(ib, rows)) {
                    hNew = arith::SelectOp::create(ib, on, hNew, a[6]);
                    y = arith::SelectOp::create(ib, on, hNew, zero);
                  }
                  return {hNew, y};
                });
          } else {
            next = L.elementwise(
                {B, H}, {pt, rh, h}, rowIns, 2,
                [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> a,
                    ArrayRef<Value> rows) -> SmallVector<Value> {
                  Value hNew = act(ib, 0, arith::AddFOp::create(ib, a[0], a[1]));
                  Value y = hNew;
                  if (Value on = active(ib, rows)) {
                    hNew = arith::SelectOp::create(ib, on, hNew, a[2]);
                    y = arith::SelectOp::create(ib, on, hNew, zero);
                  }
                  return {hNew, y};
                });
          }
          // Y[t] = the step's row (zeros past a row's length).
          Value yRow = tensor::ExpandShapeOp::create(
              sb, L.tensor({1, B, H}), next[1],
              ArrayRef<ReassociationIndices>{{0, 1}, {2}});
          Value y = L.insert(yRow, yAcc, {t, sb.getIndexAttr(0), sb.getIndexAttr(0)},
                             {1, B, H});
          SmallVector<Value> yields = {next[0], y};
          if (s.isLSTM())
            yields.push_back(next[2]);
          return yields;
    };
    SmallVector<Value> finals;
    if (T <= unrollSteps) {
      // Unrolled: a straight line of steps, for stacks that do not fuse
      // across a host loop.
      SmallVector<Value> iter = iterInit;
      for (int64_t k = 0; k < T; ++k)
        iter = stepBody(b, lb.index(k), iter);
      finals = iter;
    } else if (ireeDispatch && T > 1 && B * H > 1 &&
               fitsIREEStack(op, B, G * H, H)) {
      // (One step needs no loop, one unit no dispatch of its own; IREE 3.13
      // also rejects the rank-expanding slices MLIR 22 folds their
      // reshapes into.)
      finals = ireeDispatchLoop(b, s, T, hInit, cInit, stepBody);
    } else {
      auto loop = scf::ForOp::create(
          b, lb.index(0), lb.index(T), lb.index(1), iterInit,
          [&](OpBuilder &ob, Location loc, Value step, ValueRange iter) {
            ImplicitLocOpBuilder sb(loc, ob);
            scf::YieldOp::create(sb, stepBody(sb, step, iter));
          });
      finals.assign(loop.getResults().begin(), loop.getResults().end());
    }
    Value hFinal = finals[0], y = finals[1];
    Value cFinal = s.isLSTM() ? finals[2] : Value();
    if (rev && *lens)
      y = lb.reverseRows(y, *lens);
    if (*lens) {
      // As ONNX Runtime: a row of length 0 ends in zeros.
      auto zeroEmpty = [&](Value st) {
        return lb.elementwise(
            {B, H}, {st}, {*lens}, 1,
            [&](ImplicitLocOpBuilder &ib, ArrayRef<Value> a,
                ArrayRef<Value> rows) -> SmallVector<Value> {
              Value empty = arith::CmpIOp::create(
                  ib, arith::CmpIPredicate::eq, rows[0],
                  arith::ConstantOp::create(ib, ib.getI32IntegerAttr(0)));
              return {arith::SelectOp::create(
                          ib, empty,
                          arith::ConstantOp::create(ib, ib.getF32FloatAttr(0.f)),
                          a[0])
                          .getResult()};
            })[0];
      };
      hFinal = zeroEmpty(hFinal);
      if (cFinal)
        cFinal = zeroEmpty(cFinal);
    }
    Value y4 = tensor::ExpandShapeOp::create(
        b, lb.tensor({T, 1, B, H}), y,
        ArrayRef<ReassociationIndices>{{0, 1}, {2}, {3}});
    yAll = lb.insert(y4, yAll, {idx(0), idx(d), idx(0), idx(0)}, {T, 1, B, H});
    auto place = [&](Value st, Value all) {
      Value st3 = tensor::ExpandShapeOp::create(
          b, lb.tensor({1, B, H}), st, ArrayRef<ReassociationIndices>{{0, 1}, {2}});
      return lb.insert(st3, all, {idx(d), idx(0), idx(0)}, {1, B, H});
    };
    hAll = place(hFinal, hAll);
    if (s.isLSTM())
      cAll = place(cFinal, cAll);
  }
  op->getResult(0).replaceAllUsesWith(yAll);
  op->getResult(1).replaceAllUsesWith(hAll);
  if (s.isLSTM() && op->getNumResults() > 2)
    op->getResult(2).replaceAllUsesWith(cAll);
  op->erase();
  return success();
}

struct ConvertRNNToLinalgPass
    : public lstm_opt::impl::ConvertRNNToLinalgPassBase<ConvertRNNToLinalgPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto lower = [&](Operation *op, const LayerOperands &in) -> LogicalResult {
      if (ireeDispatch && !op->getContext()->allowsUnregisteredDialects())
        return op->emitError()
               << kPass
               << ": iree-dispatch writes IREE's flow.dispatch.region, which "
                  "this context does not know: allow unregistered dialects "
                  "(--allow-unregistered-dialect)";
      if (auto seq = dyn_cast<rnn::SequenceOp>(op))
        return lowerLayer(seq, in, unrollSteps, ireeDispatch);
      auto rec = cast<rnn::RecurrenceOp>(op);
      Operation *proj = rec.getP().getDefiningOp();
      if (failed(lowerLayer(rec, in, unrollSteps, ireeDispatch)))
        return failure();
      if (proj->use_empty())
        proj->erase();
      return success();
    };
    if (failed(rnn::forEachLayer(module, kPass, lower)) ||
        failed(rnn::checkOnlyLayersLowered(
            module, kPass,
            "rnn.stack is not lowered; run the pipeline without "
            "rnn-stack-layers")))
      signalPassFailure();
  }
};

/// `t` with every signed or unsigned integer (itself, or the element type
/// of a shaped type) made signless of the same width.
Type signless(Type t) {
  if (auto it = dyn_cast<IntegerType>(t))
    return it.isSignless() ? t : IntegerType::get(t.getContext(), it.getWidth());
  if (auto st = dyn_cast<ShapedType>(t)) {
    Type e = signless(st.getElementType());
    return e == st.getElementType() ? t : st.clone(e);
  }
  if (auto ft = dyn_cast<FunctionType>(t)) {
    auto all = [](TypeRange ts) {
      return llvm::map_to_vector(ts, [](Type x) { return signless(x); });
    };
    return FunctionType::get(t.getContext(), all(ft.getInputs()),
                             all(ft.getResults()));
  }
  return t;
}

struct LinalgSignlessIntegersPass
    : public lstm_opt::impl::LinalgSignlessIntegersPassBase<
          LinalgSignlessIntegersPass> {
  using Base::Base;
  void runOnOperation() override {
    auto retype = [](Value v) {
      Type t = signless(v.getType());
      if (t != v.getType())
        v.setType(t);
    };
    SmallVector<UnrealizedConversionCastOp> casts;
    getOperation()->walk([&](Operation *op) {
      for (Region &r : op->getRegions())
        for (Block &b : r)
          for (BlockArgument a : b.getArguments())
            retype(a);
      for (Value v : op->getResults())
        retype(v);
      if (auto f = dyn_cast<FunctionOpInterface>(op))
        f.setType(signless(f.getFunctionType()));
      // Constants keep their bits under the signless type.
      if (auto c = dyn_cast<arith::ConstantOp>(op)) {
        if (auto d = dyn_cast<DenseElementsAttr>(c.getValue());
            d && d.getType() != c.getType())
          c.setValueAttr(d.bitcast(cast<ShapedType>(c.getType()).getElementType()));
        else if (auto r = dyn_cast<DenseResourceElementsAttr>(c.getValue());
                 r && r.getType() != c.getType())
          c.setValueAttr(DenseResourceElementsAttr::get(
              cast<ShapedType>(c.getType()), r.getRawHandle()));
        else if (auto i = dyn_cast<IntegerAttr>(c.getValue());
                 i && i.getType() != c.getType())
          c.setValueAttr(IntegerAttr::get(c.getType(), i.getValue()));
      }
      if (auto cast = dyn_cast<UnrealizedConversionCastOp>(op))
        casts.push_back(cast);
    });
    for (UnrealizedConversionCastOp c : casts)
      if (c->getNumOperands() == 1 && c->getNumResults() == 1 &&
          c.getOperand(0).getType() == c.getResult(0).getType()) {
        c.getResult(0).replaceAllUsesWith(c.getOperand(0));
        c->erase();
      }
  }
};

struct ONNXStripAttributesPass
    : public lstm_opt::impl::ONNXStripAttributesPassBase<ONNXStripAttributesPass> {
  using Base::Base;
  void runOnOperation() override {
    auto stripDict = [](DictionaryAttr d) -> DictionaryAttr {
      if (!d)
        return d;
      SmallVector<NamedAttribute> keep;
      for (NamedAttribute a : d)
        if (!a.getName().getValue().starts_with("onnx."))
          keep.push_back(a);
      return DictionaryAttr::get(d.getContext(), keep);
    };
    getOperation()->walk([&](Operation *op) {
      od::stripONNXAttrs(op);
      if (auto f = dyn_cast<FunctionOpInterface>(op)) {
        for (unsigned i = 0; i < f.getNumArguments(); ++i)
          f.setArgAttrs(i, stripDict(f.getArgAttrDict(i)));
        for (unsigned i = 0; i < f.getNumResults(); ++i)
          f.setResultAttrs(i, stripDict(f.getResultAttrDict(i)));
      }
    });
  }
};

} // namespace
