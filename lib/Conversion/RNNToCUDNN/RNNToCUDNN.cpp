//===- RNNToCUDNN.cpp - rnn layers -> cuDNN runtime calls -----------------===//
//
// Every rnn.sequence / rnn.stack cuDNN can run becomes one call into the
// project's cuDNN runtime (include/lstm-opt/Runtime/CUDNNRuntime.h):
//
//   func.call @lstm_opt_rnn_forward_memref(%config, %state, %W0, %Wn, %R,
//                                          %Bw, %Br, %x, %lens, %h0, %c0, %y,
//                                          %hn, %cn)
//
// with the canonical weights as flat constant globals (the runtime converts
// them into cuDNN's weight space once, on the layer's first call), a
// constant i64 config (cell, directions, layers, sizes, data type, algorithm,
// layer id), and a zero-initialised mutable i64 global, the layer's state
// slot, where the runtime keeps its handle: each loaded copy of a compiled
// model has its own, so two models in one process never share a layer. Absent operands are empty memrefs. What cuDNN cannot express
// exactly is left for the CPU kernels (convert-rnn-to-cpu), with a remark
// naming the node and the reason: reverse-only layers, GRU with the reset
// before the recurrent GEMM, non-default activations, clip.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Conversion/RNNToCUDNN/RNNToCUDNN.h"

#include "lstm-opt/Conversion/RNNToONNX/RNNToONNX.h"

#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"
#include "lstm-opt/Dialect/RNN/Utils/CellLowering.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/ImplicitLocOpBuilder.h"
#include "llvm/ADT/STLExtras.h"

namespace lstm_opt {
#define GEN_PASS_DEF_CONVERTRNNTOCUDNNPASS
#include "lstm-opt/Conversion/Passes.h.inc"
} // namespace lstm_opt

using namespace mlir;
using namespace lstm_opt;

namespace {

constexpr const char *kForwardFn = "lstm_opt_rnn_forward_memref";

/// What cuDNN runs exactly: everything but a reverse-only layer, a GRU
/// with the reset before the recurrent GEMM, ONNX's clip and activations
/// other than the defaults.
const rnn::BackendCapabilities kCUDNN = {/*name=*/"cuDNN",
                                         /*sequenceLens=*/true,
                                         /*reverseOnly=*/false,
                                         /*clip=*/false,
                                         /*gruResetBeforeGemm=*/false,
                                         /*anyActivations=*/false,
                                         /*lstmVariants=*/false};

int64_t cellCode(rnn::CellKind kind, std::optional<ArrayAttr> acts) {
  switch (kind) {
  case rnn::CellKind::LSTM: return 0;
  case rnn::CellKind::GRU: return 1;
  case rnn::CellKind::RNN:
    return acts && cast<StringAttr>((*acts)[0]).getValue().lower() == "relu" ? 3 : 2;
  }
  return 0;
}

/// The declaration of the runtime entry (C interface).
func::FuncOp getOrDeclareForward(ModuleOp module) {
  if (auto f = module.lookupSymbol<func::FuncOp>(kForwardFn))
    return f;
  MLIRContext *ctx = module.getContext();
  Type f32 = Float32Type::get(ctx), i32 = IntegerType::get(ctx, 32),
       i64 = IntegerType::get(ctx, 64);
  auto dyn = [&](int64_t rank, Type t) {
    return MemRefType::get(SmallVector<int64_t>(rank, ShapedType::kDynamic), t);
  };
  SmallVector<Type> args = {dyn(1, i64), dyn(1, i64), dyn(1, f32), dyn(1, f32), dyn(1, f32),
                            dyn(1, f32), dyn(1, f32), dyn(3, f32), dyn(1, i32),
                            dyn(3, f32), dyn(3, f32), dyn(4, f32), dyn(3, f32),
                            dyn(3, f32)};
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), kForwardFn,
                                FunctionType::get(ctx, args, {}));
  f.setPrivate();
  f->setAttr(LLVM::LLVMDialect::getEmitCWrapperAttrName(), UnitAttr::get(ctx));
  return f;
}

class Lowering {
public:
  Lowering(ModuleOp module, int64_t dataType, int64_t algo)
      : module(module), dataType(dataType), algo(algo) {}

  /// One layer stack: weights as canonical arrays, tensors from the op.
  LogicalResult lower(Operation *op, rnn::CellKind kind,
                      std::optional<ArrayAttr> acts, bool bidir,
                      int64_t layers, int64_t hidden, Value x,
                      ArrayRef<Value> weights, Value h0, Value c0, Value lens);

private:
  Value flatGlobal(ImplicitLocOpBuilder &b, StringRef base, StringRef suffix,
                   Type elt, Attribute values, int64_t n, bool constant = true);

  ModuleOp module;
  int64_t dataType, algo, nextId = 0;
};

Value Lowering::flatGlobal(ImplicitLocOpBuilder &b, StringRef base,
                           StringRef suffix, Type elt, Attribute values,
                           int64_t n, bool constant) {
  Value v = rnn::emitFlatGlobal(
      b, module, rnn::uniqueSymbol(module, (base + "_" + suffix).str()), elt,
      values, n, constant);
  return memref::CastOp::create(
      b, MemRefType::get({ShapedType::kDynamic}, elt), v);
}

LogicalResult Lowering::lower(Operation *op, rnn::CellKind kind,
                              std::optional<ArrayAttr> acts, bool bidir,
                              int64_t layers, int64_t hidden, Value x,
                              ArrayRef<Value> weights, Value h0, Value c0,
                              Value lens) {
  auto fail = [&](const Twine &why) {
    return op->emitError() << "convert-rnn-to-cudnn: " << why;
  };
  auto xt = dyn_cast<RankedTensorType>(x.getType());
  if (!xt || !xt.hasStaticShape() || xt.getRank() != 3 ||
      !xt.getElementType().isF32())
    return fail("needs a static f32 [T, B, I] input; specialise the input "
                "shapes first");
  int64_t T = xt.getDimSize(0), B = xt.getDimSize(1), I = xt.getDimSize(2);
  int64_t D = bidir ? 2 : 1, H = hidden;
  ImplicitLocOpBuilder b(op->getLoc(), op);
  std::string base = rnn::layerSymbol(op->getLoc(), "__lstm_opt_cudnn_");
  Type f32 = b.getF32Type();

  // Weights: W0, Wn, R, Bw, Br, flattened (Wn empty for one layer).
  SmallVector<Value> w;
  for (auto [i, v] : llvm::enumerate(weights)) {
    static const char *names[] = {"W0", "Wn", "R", "Bw", "Br"};
    if (!v) {
      w.push_back(flatGlobal(b, base, names[i], f32,
                             DenseElementsAttr::get(RankedTensorType::get({0}, f32),
                                                    ArrayRef<float>{}),
                             0));
      continue;
    }
    auto t = onnx::getConstantF32(v);
    if (!t)
      return fail("needs constant f32 weights");
    int64_t n = t->numElements();
    w.push_back(flatGlobal(b, base, names[i], f32,
                           DenseElementsAttr::get(RankedTensorType::get({n}, f32),
                                                  ArrayRef<float>(t->values)),
                           n));
  }
  int64_t id = nextId++;
  SmallVector<int64_t> config = {cellCode(kind, acts), bidir ? 1 : 0, layers, I,
                                 H, T, B, dataType, algo, id};
  Value cfg = flatGlobal(b, base, "config", b.getI64Type(),
                         DenseElementsAttr::get(
                             RankedTensorType::get({10}, b.getI64Type()),
                             ArrayRef<int64_t>(config)),
                         10);
  // The runtime's handle of this layer (0 until the first call).
  Value state = flatGlobal(
      b, base, "state", b.getI64Type(),
      DenseElementsAttr::get(RankedTensorType::get({1}, b.getI64Type()),
                             ArrayRef<int64_t>{0}),
      1, /*constant=*/false);

  auto dynType = [&](int64_t rank, Type elt) {
    return MemRefType::get(SmallVector<int64_t>(rank, ShapedType::kDynamic), elt);
  };
  // A tensor operand as a read-only buffer of the runtime's type (static
  // [shape] first), or an empty one when absent.
  auto operand = [&](Value v, ArrayRef<int64_t> shape, Type elt) -> FailureOr<Value> {
    auto staticType = MemRefType::get(shape, elt);
    if (!v) {
      SmallVector<int64_t> zeros(shape.size(), 0);
      Value m = memref::AllocOp::create(b, MemRefType::get(zeros, elt));
      return Value(memref::CastOp::create(b, dynType(shape.size(), elt), m));
    }
    auto tt = RankedTensorType::get(shape, elt);
    if (v.getType() != tt) {
      if (!tensor::CastOp::areCastCompatible(v.getType(), tt))
        return fail("an initial state or sequence_lens has the wrong shape"),
               failure();
      v = tensor::CastOp::create(b, tt, v);
    }
    auto m = bufferization::ToBufferOp::create(b, staticType, v, /*read_only=*/true);
    // Read by this layer's call only (see rnn::emitLayerCall).
    m->setAttr("lstm_opt.read_by", b.getStringAttr(base));
    return Value(memref::CastOp::create(b, dynType(shape.size(), elt), m));
  };
  auto xm = operand(x, {T, B, I}, f32);
  auto lm = operand(lens, {B}, b.getI32Type());
  auto hm = operand(h0, {layers * D, B, H}, f32);
  auto cm = operand(c0, {layers * D, B, H}, f32);
  if (failed(xm) || failed(lm) || failed(hm) || failed(cm))
    return failure();

  SmallVector<Value> outs;
  SmallVector<SmallVector<int64_t>> shapes = {{T, D, B, H}, {layers * D, B, H}};
  if (kind == rnn::CellKind::LSTM)
    shapes.push_back({layers * D, B, H});
  for (auto &shape : shapes)
    outs.push_back(memref::AllocOp::create(b, MemRefType::get(shape, f32),
                                           b.getI64IntegerAttr(64)));
  Value cn = kind == rnn::CellKind::LSTM
                 ? Value(memref::CastOp::create(b, dynType(3, f32), outs[2]))
                 : memref::CastOp::create(
                       b, dynType(3, f32),
                       memref::AllocOp::create(b, MemRefType::get({0, 0, 0}, f32)))
                       .getResult();
  func::FuncOp fn = getOrDeclareForward(module);
  SmallVector<Value> args = {cfg, state};
  args.append(w.begin(), w.end());
  args.append({*xm, *lm, *hm, *cm,
               memref::CastOp::create(b, dynType(4, f32), outs[0]),
               memref::CastOp::create(b, dynType(3, f32), outs[1]), cn});
  func::CallOp::create(b, fn, args);
  return rnn::replaceWithBuffers(op, outs);
}

} // namespace

llvm::ArrayRef<llvm::StringRef> lstm_opt::cudnn::algoNames() {
  static const llvm::StringRef names[] = {"standard", "persist-static",
                                          "persist-small-h", "auto"};
  return names;
}

llvm::ArrayRef<llvm::StringRef> lstm_opt::cudnn::dataTypeNames() {
  static const llvm::StringRef names[] = {"f32", "f16"};
  return names;
}

std::optional<bool> lstm_opt::cudnn::fasterThanGeneratedKernels(
    llvm::StringRef chip, int64_t b, int64_t h, std::string &why) {
  if (chip != "sm_90")
    return std::nullopt;
  // Measured on an H100 (f32, all of a call's kernels per step; LSTM and
  // GRU alike; docs/GPUKernels.md): cuDNN's persistent kernels are faster at
  // H <= 128 (0.5 us against 0.5-1.2 for the recurrence alone) and, end to
  // end, at batch 1 up to H = 512 (1.0-1.4 us against 1.2-1.4: the
  // generated recurrence is as fast or faster there, its input projection
  // slower than cuDNN's GEMM); the generated persistent kernel at batch 2-4
  // from H = 256 (1.8-3.5 us in all against 3.1-17) and at batch 1 from
  // H = 1024 (1.7-1.9 against 2.6-5.6); past batch 4 the generated kernels
  // launch once per step and cuDNN wins.
  bool cudnn = b > 4 || h <= 128 || (b == 1 && h <= 512);
  why = (Twine(cudnn ? "cuDNN" : "the generated persistent kernel") +
         " is the faster on " + chip + " at batch " + Twine(b) +
         ", hidden size " + Twine(h) + " (the table measured on an H100, "
         "docs/GPUKernels.md)")
            .str();
  return cudnn;
}

namespace {

struct ConvertRNNToCUDNNPass
    : public lstm_opt::impl::ConvertRNNToCUDNNPassBase<ConvertRNNToCUDNNPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto types = cudnn::dataTypeNames();
    int64_t dt = llvm::find(types, StringRef(dataType)) - types.begin();
    if (dt == int64_t(types.size())) {
      module.emitError() << "convert-rnn-to-cudnn: data-type is f32 or f16, not '"
                         << dataType << "'";
      return signalPassFailure();
    }
    auto algos = cudnn::algoNames();
    int64_t al = llvm::find(algos, StringRef(algo)) - algos.begin();
    if (al == int64_t(algos.size())) {
      module.emitError() << "convert-rnn-to-cudnn: algo is auto, standard, "
                            "persist-static or persist-small-h, not '"
                         << algo << "'";
      return signalPassFailure();
    }
    if (!onlyFasterOn.empty()) {
      std::string why;
      if (!cudnn::fasterThanGeneratedKernels(onlyFasterOn, 1, 1, why)) {
        module.emitError() << "convert-rnn-to-cudnn: no measured table for '"
                           << onlyFasterOn << "' (only-faster-on takes sm_90)";
        return signalPassFailure();
      }
    }
    Lowering lowering(module, dt, al);
    SmallVector<Operation *> layers;
    module.walk([&](Operation *op) {
      if (isa<rnn::SequenceOp, rnn::StackOp>(op))
        layers.push_back(op);
    });
    for (Operation *op : layers) {
      LogicalResult res = success();
      if (auto seq = dyn_cast<rnn::SequenceOp>(op)) {
        std::string why = rnn::whyUnsupported(seq, kCUDNN);
        if (!why.empty()) {
          rnn::remarkLayerLeftForCPU(seq, "convert-rnn-to-cudnn", why);
          continue;
        }
        if (!onlyFasterOn.empty()) {
          auto xt = dyn_cast<RankedTensorType>(seq.getX().getType());
          int64_t batch = xt && xt.getRank() == 3 ? xt.getDimSize(1) : ShapedType::kDynamic;
          std::string measured;
          if (ShapedType::isDynamic(batch) ||
              !*cudnn::fasterThanGeneratedKernels(onlyFasterOn, batch,
                                                  seq.getHiddenSize(), measured)) {
            seq.emitRemark() << "convert-rnn-to-cudnn: layer left for the "
                                "generated GPU kernels: "
                             << (measured.empty() ? "its batch is not static"
                                                  : measured);
            continue;
          }
          seq.emitRemark() << "convert-rnn-to-cudnn: layer runs on cuDNN: "
                           << measured;
        }
        res = lowering.lower(seq, seq.getCell(), seq.getActivations(),
                             seq.getDirection() == rnn::Direction::Bidirectional,
                             1, seq.getHiddenSize(), seq.getX(),
                             {seq.getW(), Value(), seq.getR(), seq.getBw(), seq.getBr()},
                             seq.getH0(), seq.getC0(), seq.getSequenceLens());
      } else {
        auto st = cast<rnn::StackOp>(op);
        std::string why = rnn::whyUnsupported(st, kCUDNN);
        if (!why.empty()) {
          // Its levels go to the CPU kernels one by one.
          st.emitRemark() << "convert-rnn-to-cudnn: stack left for the CPU "
                             "kernels, level by level: " << why;
          if (failed(unstackLayers(st)))
            return signalPassFailure();
          continue;
        }
        res = lowering.lower(st, st.getCell(), st.getActivations(),
                             st.getDirection() == rnn::Direction::Bidirectional,
                             st.getNumLayers(), st.getHiddenSize(), st.getX(),
                             {st.getW0(), st.getWn(), st.getR(), st.getBw(), st.getBr()},
                             st.getH0(), st.getC0(), st.getSequenceLens());
      }
      if (failed(res))
        return signalPassFailure();
    }
  }
};

} // namespace
