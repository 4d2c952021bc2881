//===- ONNXImport.cpp - ONNX model -> onnx dialect ------------------------===//
//
// Mapping rules (docs/ONNXImport.md has the full table):
//  * the main graph becomes a func.func; its inputs/outputs keep their ONNX
//    names, symbolic dims and doc strings as argument/result attributes;
//  * initializers become onnx.initializer ops holding dense resources that
//    own the bytes (raw_data is moved out of the protobuf, external data is
//    memory-mapped), so weights are not copied;
//  * nodes become typed ops where the dialect has one, onnx.node otherwise,
//    in a topological order (the file's order when it is one already);
//  * node names become NameLocs over the file's location, output names the
//    onnx.names attribute.
// Every defect of the input is reported with the file name and the node.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Target/ONNX/ONNXImport.h"

#include "ProtoUtils.h"
#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"
#include "lstm-opt/Dialect/ONNX/Utils/ONNXUtils.h"
#include "lstm-opt/Support/CheckedMath.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "google/protobuf/io/coded_stream.h"

#include <climits>
#include <queue>
#include <set>

using namespace mlir;
using namespace lstm_opt;
namespace pb = ::onnx;
namespace od = lstm_opt::onnx;

ONNXFileFormat lstm_opt::getONNXFileFormat(StringRef path) {
  StringRef ext = llvm::sys::path::extension(path);
  return ext == ".onnxtext" ? ONNXFileFormat::Text : ONNXFileFormat::Binary;
}

std::vector<std::pair<std::string, int>> lstm_opt::listONNXOperators() {
  std::vector<std::pair<std::string, int>> out;
  for (const proto::OperatorSchema &s : proto::listOperators(""))
    if (!s.deprecated)
      out.emplace_back(s.name, s.sinceVersion);
  return out;
}

bool lstm_opt::isONNXFile(StringRef path) {
  StringRef ext = llvm::sys::path::extension(path);
  return ext == ".onnx" || ext == ".onnxtext" || ext == ".pb";
}

namespace {

/// The oldest IR version this importer reads (ONNX 1.2); the newest is the
/// linked libonnx's (proto::maxKnownIrVersion(), 14 for ONNX 1.23).
constexpr int64_t kMinIrVersion = 3;

/// Facts about a typed op of the dialect, taken from its ODS definition.
struct TypedOpInfo {
  int numInputs;
  int numOutputs;
  bool variadicInputs;
  bool variadicOutputs;
};

template <typename T, typename = void>
struct HasOnnxInfo : std::false_type {};
template <typename T>
struct HasOnnxInfo<T, std::void_t<decltype(T::kNumOnnxInputs)>>
    : std::true_type {};

template <typename... OpTys>
void collectTypedOps(llvm::StringMap<TypedOpInfo> &table) {
  auto add = [&](auto tag) {
    using OpTy = typename decltype(tag)::type;
    if constexpr (HasOnnxInfo<OpTy>::value)
      table[OpTy::getOperationName().drop_front(strlen("onnx."))] = {
          OpTy::kNumOnnxInputs, OpTy::kNumOnnxOutputs,
          OpTy::kVariadicOnnxInputs, OpTy::kVariadicOnnxOutputs};
  };
  (add(llvm::type_identity<OpTys>{}), ...);
}

const llvm::StringMap<TypedOpInfo> &getTypedOps() {
  static const llvm::StringMap<TypedOpInfo> table = [] {
    llvm::StringMap<TypedOpInfo> t;
    collectTypedOps<
#define GET_OP_LIST
#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.cpp.inc"
        >(t);
    return t;
  }();
  return table;
}

/// Names defined in a graph (and its enclosing graphs, through `parent`).
struct Scope {
  Scope *parent = nullptr;
  llvm::StringMap<Value> values;

  Value lookup(StringRef name) const {
    for (const Scope *s = this; s; s = s->parent) {
      auto it = s->values.find(name);
      if (it != s->values.end())
        return it->second;
    }
    return {};
  }
};

std::string describeNode(const pb::NodeProto &node, int index) {
  std::string s = "node ";
  if (node.name().empty())
    s += "#" + std::to_string(index);
  else
    s += "'" + node.name() + "'";
  s += " (";
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    s += node.domain() + ".";
  s += node.op_type() + ")";
  return s;
}

/// Byte size of one element in ONNX raw_data; 0 for packed 4-bit types and
/// strings.
size_t rawElementBytes(int dataType) {
  switch (dataType) {
  case 1: case 6: case 12: return 4;
  case 2: case 3: case 9: case 17: case 18: case 19: case 20: case 24: return 1;
  case 4: case 5: case 10: case 16: return 2;
  case 7: case 11: case 13: case 14: return 8;
  case 15: return 16;
  default: return 0;
  }
}

bool isPacked4Bit(int dataType) {
  return dataType == 21 || dataType == 22 || dataType == 23;
}

/// An identifier usable as a resource key.
std::string sanitizeKey(StringRef name) {
  std::string key;
  for (char c : name)
    key += (llvm::isAlnum(c) || c == '_' || c == '.') ? c : '_';
  if (key.empty() || llvm::isDigit(key.front()))
    key = "t_" + key;
  return key;
}

class ModelImporter {
public:
  ModelImporter(MLIRContext *ctx, const ONNXImportOptions &options,
                StringRef sourceName, StringRef baseDir)
      : ctx(ctx), builder(ctx), options(options), sourceName(sourceName),
        baseDir(baseDir) {
    fileLoc = FileLineColLoc::get(ctx, sourceName, 0, 0);
  }

  OwningOpRef<ModuleOp> importModel(pb::ModelProto &model);

private:
  InFlightDiagnostic error(Location loc) { return emitError(loc); }
  InFlightDiagnostic error() { return emitError(fileLoc); }
  llvm::DenseSet<Value> repairDeclaredShapes(Block *body);
  /// Refuses a shape whose static dimensions multiply past what any later
  /// size computation can hold (elements of up to 16 bytes in an int64_t
  /// byte count); dynamic dimensions are skipped.
  LogicalResult checkStaticSize(ArrayRef<int64_t> shape, StringRef what) {
    SmallVector<int64_t> known(llvm::make_filter_range(
        shape, [](int64_t d) { return !ShapedType::isDynamic(d); }));
    if (checkedNumElements(known, kMaxElements))
      return success();
    auto diag = error();
    diag << what << " has a shape of more than 2^59 elements (";
    llvm::interleave(
        shape, diag,
        [&](int64_t d) {
          if (ShapedType::isDynamic(d))
            diag << "?";
          else
            diag << d;
        },
        "x");
    diag << ")";
    return failure();
  }
  static constexpr int64_t kMaxElements = int64_t(1) << 59;

  Location nodeLoc(const pb::NodeProto &node) {
    if (node.name().empty())
      return fileLoc;
    return NameLoc::get(builder.getStringAttr(node.name()), fileLoc);
  }

  FailureOr<Type> convertType(const pb::TypeProto &type, StringRef what,
                              SmallVectorImpl<std::string> *dimParams = nullptr);
  FailureOr<Type> convertElementType(int dataType, StringRef what);
  FailureOr<ElementsAttr> convertTensor(pb::TensorProto &tensor, bool resource,
                                        StringRef what);
  FailureOr<AsmResourceBlob> readExternalData(const pb::TensorProto &tensor,
                                              size_t expectedBytes,
                                              size_t align, StringRef what);
  FailureOr<Attribute> convertAttribute(pb::AttributeProto &attr,
                                        StringRef what);
  LogicalResult
  importGraph(pb::GraphProto &graph, Block *block, Scope &scope, bool isMain,
              SmallVectorImpl<Value> &outputs,
              SmallVectorImpl<DictionaryAttr> *inputAttrs = nullptr);
  LogicalResult importNode(pb::NodeProto &node, int index, Scope &scope,
                           Block *block);
  LogicalResult topologicalOrder(const pb::GraphProto &graph,
                                 const Scope &scope,
                                 SmallVectorImpl<int> &order);
  Value getNone(Block *block);
  DictionaryAttr ioAttributes(const pb::ValueInfoProto &info,
                              ArrayRef<std::string> dimParams);

  MLIRContext *ctx;
  OpBuilder builder;
  const ONNXImportOptions &options;
  std::string sourceName;
  std::string baseDir;
  Location fileLoc = UnknownLoc::get(ctx);
  llvm::StringMap<int64_t> opsets;
  llvm::DenseMap<Block *, Value> noneValues;
  std::string inferenceWarning;
  /// Types of the values of the graph being imported, by name.
  std::vector<llvm::StringMap<const pb::TypeProto *>> typeScopes;
  /// The value_info entries of the graph being imported, by name.
  llvm::StringMap<const pb::ValueInfoProto *> valueInfos;
  const pb::ValueInfoProto *valueInfoOf(StringRef name) const {
    return valueInfos.lookup(name);
  }
};

} // namespace

//===----------------------------------------------------------------------===//
// Types and tensors
//===----------------------------------------------------------------------===//

FailureOr<Type> ModelImporter::convertElementType(int dataType,
                                                  StringRef what) {
  if (dataType == 0)
    return Type(od::UnknownType::get(ctx));
  Type t = od::getElementTypeForOnnxDataType(ctx, dataType);
  if (!t) {
    error() << what << " has unsupported ONNX data type " << dataType;
    return failure();
  }
  return t;
}

FailureOr<Type> ModelImporter::convertType(const pb::TypeProto &type,
                                           StringRef what,
                                           SmallVectorImpl<std::string> *dims) {
  switch (type.value_case()) {
  case pb::TypeProto::kTensorType: {
    const auto &tt = type.tensor_type();
    if (tt.elem_type() == 0)
      return Type(od::UnknownType::get(ctx));
    FailureOr<Type> elem = convertElementType(tt.elem_type(), what);
    if (failed(elem))
      return failure();
    if (!tt.has_shape())
      return Type(UnrankedTensorType::get(*elem));
    SmallVector<int64_t> shape;
    for (const auto &d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() < 0) {
          error() << what << " has a negative dimension (" << d.dim_value()
                  << ")";
          return failure();
        }
        shape.push_back(d.dim_value());
        if (dims)
          dims->push_back("");
      } else {
        shape.push_back(ShapedType::kDynamic);
        if (dims)
          dims->push_back(d.has_dim_param() ? d.dim_param() : "");
      }
    }
    // Every later element count of this type (MLIR's getNumElements, the
    // backends' byte sizes) multiplies its dimensions unchecked.
    if (failed(checkStaticSize(shape, what)))
      return failure();
    return Type(RankedTensorType::get(shape, *elem));
  }
  case pb::TypeProto::kSequenceType: {
    FailureOr<Type> elem = convertType(type.sequence_type().elem_type(), what);
    if (failed(elem))
      return failure();
    return Type(od::SeqType::get(ctx, *elem));
  }
  case pb::TypeProto::kOptionalType: {
    FailureOr<Type> elem = convertType(type.optional_type().elem_type(), what);
    if (failed(elem))
      return failure();
    return Type(od::OptType::get(ctx, *elem));
  }
  case pb::TypeProto::kMapType: {
    FailureOr<Type> key = convertElementType(type.map_type().key_type(), what);
    FailureOr<Type> value = convertType(type.map_type().value_type(), what);
    if (failed(key) || failed(value))
      return failure();
    return Type(od::MapType::get(ctx, *key, *value));
  }
  case pb::TypeProto::kSparseTensorType:
    error() << what << " is a sparse tensor, which lstm-opt does not support";
    return failure();
  default:
    return Type(od::UnknownType::get(ctx));
  }
}

/// Subgraphs (If/Loop/Scan bodies) nested deeper than this are refused
/// before anything recurses over them: ONNX shape inference, the importer,
/// the exporter and the printer all recurse once per level. Real models nest
/// a few levels (silero-vad: 3).
constexpr int kMaxSubgraphDepth = 64;

/// The first node, in a walk without recursion, whose subgraphs nest deeper
/// than kMaxSubgraphDepth; null if none.
static const pb::NodeProto *tooDeeplyNested(const pb::GraphProto &root) {
  std::vector<std::pair<const pb::GraphProto *, int>> work = {{&root, 0}};
  while (!work.empty()) {
    auto [g, depth] = work.back();
    work.pop_back();
    for (const auto &node : g->node())
      for (const auto &a : node.attribute()) {
        if (!a.has_g() && a.graphs_size() == 0)
          continue;
        if (depth + 1 > kMaxSubgraphDepth)
          return &node;
        if (a.has_g())
          work.push_back({&a.g(), depth + 1});
        for (const auto &sg : a.graphs())
          work.push_back({&sg, depth + 1});
      }
  }
  return nullptr;
}

/// Every subgraph under `root` (not `root` itself), in a walk without
/// recursion (the nesting is bounded before this runs).
static std::vector<pb::GraphProto *> subgraphsOf(pb::GraphProto &root) {
  std::vector<pb::GraphProto *> all, work = {&root};
  while (!work.empty()) {
    pb::GraphProto *g = work.back();
    work.pop_back();
    for (auto &node : *g->mutable_node())
      for (auto &a : *node.mutable_attribute()) {
        if (a.has_g()) {
          all.push_back(a.mutable_g());
          work.push_back(a.mutable_g());
        }
        for (auto &sg : *a.mutable_graphs()) {
          all.push_back(&sg);
          work.push_back(&sg);
        }
      }
  }
  return all;
}

/// Whether two declared tensor types can describe the same value: the same
/// element type, and, where both have a shape of the same rank, no two known
/// dimensions that differ.
/// The first node whose attributes size something the node itself
/// contradicts, with the reason; checked before the ONNX library sees the
/// graph (its shape inference sizes vectors by them: a Split saying
/// num_outputs 2^31 with four outputs grew one to 17 GB).
static std::optional<std::pair<const pb::NodeProto *, std::string>>
badSizingAttribute(pb::GraphProto &root) {
  std::vector<pb::GraphProto *> graphs = subgraphsOf(root);
  graphs.push_back(&root);
  for (pb::GraphProto *g : graphs)
    for (const auto &node : g->node()) {
      bool onnxDomain = node.domain().empty() || node.domain() == "ai.onnx";
      for (const auto &a : node.attribute()) {
        if (!onnxDomain)
          continue;
        bool sizing = (node.op_type() == "Split" && a.name() == "num_outputs") ||
                      (node.op_type() == "Scan" && a.name() == "num_scan_inputs");
        // The library reads the integer field whatever the kind says.
        if (sizing && a.type() != pb::AttributeProto::INT)
          return std::pair{&node, node.op_type() + "'s " + a.name() +
                                      " is not an integer"};
        if (node.op_type() == "Split" && a.name() == "num_outputs" &&
            a.i() != node.output_size())
          return std::pair{&node, "Split's num_outputs is " +
                                      std::to_string(a.i()) + ", it has " +
                                      std::to_string(node.output_size()) +
                                      " outputs"};
        if (node.op_type() == "Scan" && a.name() == "num_scan_inputs" &&
            (a.i() < 1 || a.i() > node.input_size()))
          return std::pair{&node, "Scan's num_scan_inputs is " +
                                      std::to_string(a.i()) + ", it has " +
                                      std::to_string(node.input_size()) +
                                      " inputs"};
      }
    }
  return std::nullopt;
}

/// Clears the negative dim_values of every declared type in \p root and its
/// subgraphs (graph inputs, outputs, value_info): exporters write -1 for a
/// dynamic dimension and ONNX Runtime reads it so. Returns, per value, a
/// warning to give.
static std::vector<std::string> clearNegativeDims(pb::GraphProto &root) {
  std::vector<std::string> warnings;
  std::vector<pb::GraphProto *> graphs = subgraphsOf(root);
  graphs.insert(graphs.begin(), &root);
  auto visit = [&](pb::ValueInfoProto &v, const char *kind) {
    if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape())
      return;
    auto *shape = v.mutable_type()->mutable_tensor_type()->mutable_shape();
    std::string dims;
    for (int k = 0; k < shape->dim_size(); ++k) {
      auto *d = shape->mutable_dim(k);
      if (!d->has_dim_value() || d->dim_value() >= 0)
        continue;
      dims += (dims.empty() ? "" : ", ") + std::to_string(d->dim_value()) +
              " in dimension " + std::to_string(k);
      d->clear_dim_value();
    }
    if (!dims.empty())
      warnings.push_back(std::string(kind) + " '" + v.name() + "' has " +
                         dims +
                         ": read as a dynamic dimension, as ONNX Runtime "
                         "does");
  };
  for (pb::GraphProto *g : graphs) {
    for (auto &v : *g->mutable_input())
      visit(v, "graph input");
    for (auto &v : *g->mutable_output())
      visit(v, "graph output");
    for (auto &v : *g->mutable_value_info())
      visit(v, "value");
  }
  return warnings;
}

static bool compatibleTypes(const pb::TypeProto &a, const pb::TypeProto &b,
                            int depth = 0) {
  // Sequences (a scripted loop's list) compare their element types.
  if (a.has_sequence_type() && b.has_sequence_type() && depth < 8)
    return compatibleTypes(a.sequence_type().elem_type(),
                           b.sequence_type().elem_type(), depth + 1);
  if (!a.has_tensor_type() || !b.has_tensor_type())
    return a.SerializeAsString() == b.SerializeAsString();
  const auto &ta = a.tensor_type(), &tb = b.tensor_type();
  if (ta.elem_type() != tb.elem_type())
    return false;
  if (!ta.has_shape() || !tb.has_shape())
    return true;
  if (ta.shape().dim_size() != tb.shape().dim_size())
    return false;
  for (int i = 0; i < ta.shape().dim_size(); ++i) {
    const auto &x = ta.shape().dim(i), &y = tb.shape().dim(i);
    if (x.has_dim_value() && y.has_dim_value() && x.dim_value() != y.dim_value())
      return false;
  }
  return true;
}

/// The declared outputs and value_info of every subgraph, as the file has
/// them. Shape inference merges what it infers into them (`float[?,?]`
/// becomes `float[2,?]`); restoring them afterwards keeps a round trip
/// lossless, as the main graph's declared outputs are kept. A declared
/// value_info entry that contradicts what inference found stays replaced:
/// the values' types must be right for the passes.
struct SubgraphDeclarations {
  struct Entry {
    pb::GraphProto *graph;
    google::protobuf::RepeatedPtrField<pb::ValueInfoProto> outputs, infos,
        inputs;
  };
  std::vector<Entry> entries;

  explicit SubgraphDeclarations(pb::GraphProto &root) {
    for (pb::GraphProto *g : subgraphsOf(root))
      entries.push_back({g, g->output(), g->value_info(), g->input()});
  }

  /// Inference may give a subgraph input's unknown dimensions names of its
  /// own (unk__N): its inferred shape stays (the recogniser reads ranks and
  /// sizes), the names go back to the declared ones.
  void restoreInputDimNames() {
    for (Entry &e : entries) {
      pb::GraphProto &g = *e.graph;
      if (g.input_size() != e.inputs.size())
        continue;
      for (int i = 0; i < g.input_size(); ++i) {
        const pb::ValueInfoProto &d = e.inputs[i];
        pb::ValueInfoProto &in = *g.mutable_input(i);
        if (in.name() != d.name() || !in.type().has_tensor_type() ||
            !in.type().tensor_type().has_shape())
          continue;
        auto *dims = in.mutable_type()->mutable_tensor_type()->mutable_shape();
        const pb::TensorShapeProto *declared =
            d.type().has_tensor_type() && d.type().tensor_type().has_shape()
                ? &d.type().tensor_type().shape()
                : nullptr;
        for (int k = 0; k < dims->dim_size(); ++k) {
          pb::TensorShapeProto::Dimension &dim = *dims->mutable_dim(k);
          if (!dim.has_dim_param())
            continue;
          if (declared && declared->dim_size() == dims->dim_size() &&
              declared->dim(k).has_dim_param())
            dim.set_dim_param(declared->dim(k).dim_param());
          else
            dim.clear_dim_param();
        }
      }
    }
  }

  void restore() {
    for (Entry &e : entries) {
      pb::GraphProto &g = *e.graph;
      if (g.output_size() == e.outputs.size()) {
        bool ok = true;
        for (int i = 0; i < g.output_size() && ok; ++i)
          ok = g.output(i).name() == e.outputs[i].name() &&
               compatibleTypes(g.output(i).type(), e.outputs[i].type());
        if (ok)
          *g.mutable_output() = e.outputs;
      }
      llvm::StringMap<const pb::ValueInfoProto *> declared;
      for (const auto &vi : e.infos)
        declared[vi.name()] = &vi;
      for (auto &vi : *g.mutable_value_info())
        if (const pb::ValueInfoProto *d = declared.lookup(vi.name());
            d && compatibleTypes(vi.type(), d->type()))
          *vi.mutable_type() = d->type();
    }
  }
};

/// True if `file` lies strictly inside folder `dir`, compared component by
/// component (a string prefix would let "/m2/x" count as inside "/m").
static bool isInsideFolder(StringRef dir, StringRef file) {
  auto d = llvm::sys::path::begin(dir), de = llvm::sys::path::end(dir);
  auto f = llvm::sys::path::begin(file), fe = llvm::sys::path::end(file);
  for (; d != de; ++d, ++f) {
    if (*d == "/" && d == llvm::sys::path::begin(dir) && f != fe && *f == "/")
      continue;
    if (f == fe || *d != *f)
      return false;
  }
  return f != fe;
}

FailureOr<AsmResourceBlob>
ModelImporter::readExternalData(const pb::TensorProto &tensor,
                                size_t expectedBytes, size_t align,
                                StringRef what) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const auto &kv : tensor.external_data()) {
    if (kv.key() == "location")
      location = kv.value();
    else if (kv.key() == "offset" || kv.key() == "length") {
      uint64_t v;
      if (!llvm::to_integer(kv.value(), v, 10)) {
        error() << what << ": external data " << kv.key() << " '"
                << kv.value() << "' is not a number";
        return failure();
      }
      (kv.key() == "offset" ? offset : length.emplace()) = v;
    }
  }
  if (location.empty()) {
    error() << what << ": external data without a location";
    return failure();
  }
  if (baseDir.empty()) {
    error() << what << ": external data '" << location
            << "' cannot be resolved for a model read from memory";
    return failure();
  }
  // The data file must stay inside the model's folder.
  SmallString<256> dirReal, fileReal;
  SmallString<256> candidate(baseDir);
  llvm::sys::path::append(candidate, location);
  if (llvm::sys::path::is_absolute(location) ||
      llvm::sys::fs::real_path(baseDir, dirReal)) {
    error() << what << ": external data path '" << location
            << "' is outside the model folder";
    return failure();
  }
  if (std::error_code ec = llvm::sys::fs::real_path(candidate, fileReal)) {
    // A path that does not exist may still try to escape: say which.
    SmallString<256> normalized(candidate);
    llvm::sys::path::remove_dots(normalized, /*remove_dot_dot=*/true);
    if (!isInsideFolder(baseDir, normalized))
      error() << what << ": external data path '" << location
              << "' is outside the model folder";
    else
      error() << what << ": cannot open external data file '" << location
              << "': " << ec.message();
    return failure();
  }
  if (!isInsideFolder(dirReal, fileReal)) {
    error() << what << ": external data path '" << location
            << "' is outside the model folder";
    return failure();
  }
  // Only a regular file: a FIFO or a device would block or never end.
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(fileReal, status) ||
      status.type() != llvm::sys::fs::file_type::regular_file) {
    error() << what << ": external data '" << location
            << "' is not a regular file";
    return failure();
  }
  uint64_t fileSize = status.getSize();
  uint64_t size = length.value_or(fileSize > offset ? fileSize - offset : 0);
  if (size != expectedBytes) {
    error() << what << ": external data holds " << size
            << " bytes but the shape needs " << expectedBytes;
    return failure();
  }
  if (offset > fileSize || size > fileSize - offset) {
    error() << what << ": external data of " << size << " bytes at offset "
            << offset << " is past the end of '" << location << "' ("
            << fileSize << " bytes)";
    return failure();
  }
  auto buffer = llvm::MemoryBuffer::getFileSlice(fileReal, size, offset,
                                                 /*IsVolatile=*/false);
  if (!buffer) {
    error() << what << ": cannot read external data file '" << location
            << "': " << buffer.getError().message();
    return failure();
  }
  std::unique_ptr<llvm::MemoryBuffer> mb = std::move(*buffer);
  ArrayRef<char> data(mb->getBufferStart(), mb->getBufferSize());
  if (!llvm::isAddrAligned(llvm::Align(align), data.data()))
    return HeapAsmResourceBlob::allocateAndCopyWithAlign(data, align);
  llvm::MemoryBuffer *raw = mb.release();
  return AsmResourceBlob(
      data, align, [raw](void *, size_t, size_t) { delete raw; },
      /*dataIsMutable=*/false);
}

FailureOr<ElementsAttr> ModelImporter::convertTensor(pb::TensorProto &t,
                                                     bool resource,
                                                     StringRef what) {
  FailureOr<Type> elemOr = convertElementType(t.data_type(), what);
  if (failed(elemOr))
    return failure();
  Type elem = *elemOr;
  if (isa<od::UnknownType>(elem)) {
    error() << what << " has no data type";
    return failure();
  }
  SmallVector<int64_t> shape;
  for (int64_t d : t.dims()) {
    if (d < 0) {
      error() << what << " has a negative dimension (" << d << ")";
      return failure();
    }
    shape.push_back(d);
  }
  if (failed(checkStaticSize(shape, what)))
    return failure();
  int64_t numel = *checkedNumElements(shape);
  auto type = RankedTensorType::get(shape, elem);
  int dt = t.data_type();

  if (t.has_segment()) {
    error() << what << " is segmented, which lstm-opt does not support";
    return failure();
  }

  // Strings: plain dense string attribute.
  if (dt == 8) {
    if (t.data_location() == pb::TensorProto::EXTERNAL) {
      error() << what << ": external string tensors are not supported";
      return failure();
    }
    if (t.string_data_size() != numel) {
      error() << what << " holds " << t.string_data_size()
              << " strings but the shape needs " << numel;
      return failure();
    }
    SmallVector<StringRef> strs(t.string_data().begin(), t.string_data().end());
    return ElementsAttr(DenseStringElementsAttr::get(type, strs));
  }

  bool packed = isPacked4Bit(dt);
  size_t elemBytes = packed ? 1 : rawElementBytes(dt);
  // checkStaticSize bounded numel so that 16 bytes an element fit.
  size_t fileBytes = packed ? (numel + 1) / 2 : numel * elemBytes;
  size_t align = std::max<size_t>(1, std::min<size_t>(elemBytes, 8));

  // Gather the bytes: moved out of raw_data, mapped from external data, or
  // converted from the typed repeated fields.
  std::optional<AsmResourceBlob> blob;
  std::vector<char> bytes;
  bool hasTyped = t.float_data_size() || t.int32_data_size() ||
                  t.int64_data_size() || t.double_data_size() ||
                  t.uint64_data_size();
  if (t.data_location() == pb::TensorProto::EXTERNAL) {
    FailureOr<AsmResourceBlob> b =
        readExternalData(t, fileBytes, align, what);
    if (failed(b))
      return failure();
    blob.emplace(std::move(*b));
  } else if (t.has_raw_data()) {
    if (t.raw_data().size() != fileBytes) {
      error() << what << " has " << t.raw_data().size()
              << " bytes of raw data but its shape "
              << "needs " << fileBytes;
      return failure();
    }
    if (!packed) {
      std::string *owned = t.release_raw_data();
      ArrayRef<char> data(owned->data(), owned->size());
      if (llvm::isAddrAligned(llvm::Align(align), data.data())) {
        blob.emplace(
            data, align, [owned](void *, size_t, size_t) { delete owned; },
            /*dataIsMutable=*/false);
      } else {
        blob.emplace(HeapAsmResourceBlob::allocateAndCopyWithAlign(data, align));
        delete owned;
      }
    } else {
      bytes.assign(t.raw_data().begin(), t.raw_data().end());
    }
  } else if (hasTyped || numel == 0) {
    auto expectCount = [&](int64_t have, int64_t want) {
      if (have == want)
        return true;
      error() << what << " holds " << have << " values but its shape needs "
              << want;
      return false;
    };
    auto append = [&](const void *p, size_t n) {
      const char *c = static_cast<const char *>(p);
      bytes.insert(bytes.end(), c, c + n);
    };
    switch (dt) {
    case 1: case 14:
      if (!expectCount(t.float_data_size(), dt == 14 ? 2 * numel : numel))
        return failure();
      for (float f : t.float_data())
        append(&f, 4);
      break;
    case 11: case 15:
      if (!expectCount(t.double_data_size(), dt == 15 ? 2 * numel : numel))
        return failure();
      for (double d : t.double_data())
        append(&d, 8);
      break;
    case 7:
      if (!expectCount(t.int64_data_size(), numel))
        return failure();
      for (int64_t v : t.int64_data())
        append(&v, 8);
      break;
    case 12: case 13:
      if (!expectCount(t.uint64_data_size(), numel))
        return failure();
      for (uint64_t v : t.uint64_data())
        append(&v, elemBytes);
      break;
    case 21: case 22: case 23:
      error() << what << ": 4-bit tensors must use raw_data";
      return failure();
    default:
      if (!expectCount(t.int32_data_size(), numel))
        return failure();
      for (int32_t v : t.int32_data())
        append(&v, elemBytes); // little-endian: the low bytes
      break;
    }
  } else {
    error() << what << " has no data";
    return failure();
  }

  if (packed) {
    // MLIR stores one 4-bit element per byte; ONNX packs two (low nibble
    // first).
    std::vector<char> unpacked(numel);
    for (int64_t i = 0; i < numel; ++i) {
      uint8_t byte = bytes[i / 2];
      uint8_t nib = (i % 2) ? (byte >> 4) : (byte & 0xF);
      if (dt == 22 && (nib & 0x8))
        nib |= 0xF0; // sign-extend int4
      unpacked[i] = (char)nib;
    }
    bytes = std::move(unpacked);
  }

  if (!resource && !blob && bytes.size() <= options.maxInlineTensorBytes) {
    if (elem.isInteger(1)) {
      SmallVector<bool> bools;
      for (char c : bytes)
        bools.push_back(c != 0);
      return ElementsAttr(DenseElementsAttr::get(type, bools));
    }
    return ElementsAttr(DenseElementsAttr::getFromRawBuffer(type, bytes));
  }
  if (!resource && blob && blob->getData().size() <= options.maxInlineTensorBytes &&
      !elem.isInteger(1))
    return ElementsAttr(
        DenseElementsAttr::getFromRawBuffer(type, blob->getData()));
  if (!blob && bytes.empty()) {
    // No elements: nothing to hold in a blob (and copying from an empty
    // buffer's null pointer is undefined behaviour).
    if (elem.isInteger(1))
      return ElementsAttr(DenseElementsAttr::get(type, ArrayRef<bool>()));
    return ElementsAttr(DenseElementsAttr::getFromRawBuffer(type, {}));
  }
  if (!blob)
    blob.emplace(HeapAsmResourceBlob::allocateAndCopyWithAlign(
        ArrayRef<char>(bytes.data(), bytes.size()), align));
  std::string key = sanitizeKey(t.name().empty() ? "tensor" : t.name());
  return ElementsAttr(
      DenseResourceElementsAttr::get(type, key, std::move(*blob)));
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

FailureOr<Attribute> ModelImporter::convertAttribute(pb::AttributeProto &a,
                                                     StringRef what) {
  auto type = a.type();
  if (!a.ref_attr_name().empty()) {
    error() << what << ": attribute '" << a.name()
            << "' refers to a function attribute, which only functions may do";
    return failure();
  }
  // Old models may leave `type` unset: infer it from the field that is set.
  if (type == pb::AttributeProto::UNDEFINED) {
    if (a.has_f()) type = pb::AttributeProto::FLOAT;
    else if (a.has_i()) type = pb::AttributeProto::INT;
    else if (a.has_s()) type = pb::AttributeProto::STRING;
    else if (a.has_t()) type = pb::AttributeProto::TENSOR;
    else if (a.has_g()) type = pb::AttributeProto::GRAPH;
    else if (a.floats_size()) type = pb::AttributeProto::FLOATS;
    else if (a.ints_size()) type = pb::AttributeProto::INTS;
    else if (a.strings_size()) type = pb::AttributeProto::STRINGS;
    else {
      error() << what << ": attribute '" << a.name() << "' has no type";
      return failure();
    }
  }
  std::string tensorWhat = (what + ": attribute '" + a.name() + "'").str();
  switch (type) {
  case pb::AttributeProto::FLOAT:
    return Attribute(builder.getF32FloatAttr(a.f()));
  case pb::AttributeProto::INT:
    return Attribute(builder.getI64IntegerAttr(a.i()));
  case pb::AttributeProto::STRING:
    return Attribute(builder.getStringAttr(a.s()));
  case pb::AttributeProto::FLOATS:
    return Attribute(builder.getDenseF32ArrayAttr(
        SmallVector<float>(a.floats().begin(), a.floats().end())));
  case pb::AttributeProto::INTS:
    return Attribute(builder.getDenseI64ArrayAttr(
        SmallVector<int64_t>(a.ints().begin(), a.ints().end())));
  case pb::AttributeProto::STRINGS: {
    SmallVector<Attribute> strs;
    for (const auto &s : a.strings())
      strs.push_back(builder.getStringAttr(s));
    return Attribute(builder.getArrayAttr(strs));
  }
  case pb::AttributeProto::TENSOR: {
    FailureOr<ElementsAttr> t =
        convertTensor(*a.mutable_t(), /*resource=*/false, tensorWhat);
    if (failed(t))
      return failure();
    return Attribute(*t);
  }
  case pb::AttributeProto::TENSORS: {
    SmallVector<Attribute> ts;
    for (auto &t : *a.mutable_tensors()) {
      FailureOr<ElementsAttr> e = convertTensor(t, false, tensorWhat);
      if (failed(e))
        return failure();
      ts.push_back(*e);
    }
    return Attribute(builder.getArrayAttr(ts));
  }
  case pb::AttributeProto::TYPE_PROTO: {
    FailureOr<Type> t = convertType(a.tp(), tensorWhat);
    if (failed(t))
      return failure();
    return Attribute(TypeAttr::get(*t));
  }
  case pb::AttributeProto::TYPE_PROTOS: {
    SmallVector<Attribute> ts;
    for (const auto &tp : a.type_protos()) {
      FailureOr<Type> t = convertType(tp, tensorWhat);
      if (failed(t))
        return failure();
      ts.push_back(TypeAttr::get(*t));
    }
    return Attribute(builder.getArrayAttr(ts));
  }
  default:
    error() << what << ": attribute '" << a.name() << "' has kind "
            << pb::AttributeProto::AttributeType_Name(type)
            << ", which lstm-opt does not support";
    return failure();
  }
}

//===----------------------------------------------------------------------===//
// Graphs and nodes
//===----------------------------------------------------------------------===//

Value ModelImporter::getNone(Block *block) {
  Value &v = noneValues[block];
  if (!v) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(block);
    v = od::NoneOp::create(builder, fileLoc);
  }
  return v;
}

/// Names a subgraph reads from enclosing graphs.
static void collectFreeNames(const pb::GraphProto &g, llvm::StringSet<> &free) {
  llvm::StringSet<> defined;
  for (const auto &i : g.input())
    defined.insert(i.name());
  for (const auto &i : g.initializer())
    defined.insert(i.name());
  for (const auto &n : g.node()) {
    for (const auto &in : n.input())
      if (!in.empty() && !defined.contains(in))
        free.insert(in);
    for (const auto &a : n.attribute()) {
      llvm::StringSet<> inner;
      if (a.has_g())
        collectFreeNames(a.g(), inner);
      for (const auto &sg : a.graphs())
        collectFreeNames(sg, inner);
      for (const auto &name : inner)
        if (!defined.contains(name.getKey()))
          free.insert(name.getKey());
    }
    for (const auto &out : n.output())
      if (!out.empty())
        defined.insert(out);
  }
}

LogicalResult ModelImporter::topologicalOrder(const pb::GraphProto &graph,
                                              const Scope &scope,
                                              SmallVectorImpl<int> &order) {
  int n = graph.node_size();
  llvm::StringMap<int> producer;
  for (int i = 0; i < n; ++i) {
    for (const auto &out : graph.node(i).output()) {
      if (out.empty())
        continue;
      if (scope.values.count(out)) {
        error(nodeLoc(graph.node(i)))
            << describeNode(graph.node(i), i) << " redefines '" << out
            << "', which is a graph input or initializer";
        return failure();
      }
      auto [it, inserted] = producer.try_emplace(out, i);
      if (!inserted) {
        error(nodeLoc(graph.node(i)))
            << describeNode(graph.node(i), i) << " produces '" << out
            << "', which " << describeNode(graph.node(it->second), it->second)
            << " produces too";
        return failure();
      }
    }
  }
  // Inputs of each node that other nodes of this graph produce.
  std::vector<SmallVector<int, 4>> deps(n);
  bool sorted = true;
  for (int i = 0; i < n; ++i) {
    const auto &node = graph.node(i);
    llvm::StringSet<> needed;
    for (const auto &in : node.input())
      if (!in.empty())
        needed.insert(in);
    for (const auto &a : node.attribute()) {
      if (a.has_g())
        collectFreeNames(a.g(), needed);
      for (const auto &sg : a.graphs())
        collectFreeNames(sg, needed);
    }
    for (const auto &entry : needed) {
      StringRef name = entry.getKey();
      auto it = producer.find(name);
      if (it != producer.end()) {
        deps[i].push_back(it->second);
        if (it->second >= i)
          sorted = false;
        continue;
      }
      if (!scope.lookup(name)) {
        error(nodeLoc(node)) << describeNode(node, i) << " reads '" << name
                             << "', which no node, graph input or initializer "
                                "defines";
        return failure();
      }
    }
  }
  if (sorted) {
    for (int i = 0; i < n; ++i)
      order.push_back(i);
    return success();
  }
  // Kahn's algorithm, preferring the file's order.
  std::vector<int> indegree(n, 0);
  std::vector<SmallVector<int, 4>> users(n);
  for (int i = 0; i < n; ++i)
    for (int d : deps[i]) {
      ++indegree[i];
      users[d].push_back(i);
    }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (indegree[i] == 0)
      ready.push(i);
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--indegree[u] == 0)
        ready.push(u);
  }
  if ((int)order.size() != n) {
    // Some node is left: walk its unsorted producers until one repeats; that
    // node is on a cycle (the first left-over node may only sit behind one).
    int at = 0;
    while (indegree[at] == 0)
      ++at;
    std::vector<bool> seen(n, false);
    while (!seen[at]) {
      seen[at] = true;
      for (int d : deps[at])
        if (indegree[d] > 0) {
          at = d;
          break;
        }
    }
    error(nodeLoc(graph.node(at)))
        << "the graph has a cycle through " << describeNode(graph.node(at), at);
    return failure();
  }
  return success();
}

/// metadata_props as a list of [key, value] string pairs.
static ArrayAttr propsAttr(
    Builder &b,
    const google::protobuf::RepeatedPtrField<pb::StringStringEntryProto> &props) {
  SmallVector<Attribute> pairs;
  for (const auto &p : props)
    pairs.push_back(b.getStrArrayAttr({p.key(), p.value()}));
  return b.getArrayAttr(pairs);
}

DictionaryAttr ModelImporter::ioAttributes(const pb::ValueInfoProto &info,
                                           ArrayRef<std::string> dimParams) {
  SmallVector<NamedAttribute> attrs;
  attrs.push_back(builder.getNamedAttr(od::attrs::kName,
                                       builder.getStringAttr(info.name())));
  if (llvm::any_of(dimParams, [](const std::string &s) { return !s.empty(); })) {
    SmallVector<StringRef> dims(dimParams.begin(), dimParams.end());
    attrs.push_back(builder.getNamedAttr(od::attrs::kDimParams,
                                         builder.getStrArrayAttr(dims)));
  }
  if (!info.doc_string().empty())
    attrs.push_back(builder.getNamedAttr(
        od::attrs::kDocString, builder.getStringAttr(info.doc_string())));
  if (info.metadata_props_size())
    attrs.push_back(builder.getNamedAttr(
        od::attrs::kProps, propsAttr(builder, info.metadata_props())));
  return builder.getDictionaryAttr(attrs);
}

LogicalResult ModelImporter::importNode(pb::NodeProto &node, int index,
                                        Scope &scope, Block *block) {
  Location loc = nodeLoc(node);
  std::string what = describeNode(node, index);
  bool defaultDomain = node.domain().empty() || node.domain() == "ai.onnx";

  // Structural checks from the operator schema.
  if (defaultDomain) {
    int64_t opset = opsets.lookup("");
    if (opset > 0 && opset <= proto::maxKnownOpset("")) {
      proto::InputRules rules = proto::getInputRules(node.op_type(), "", opset);
      if (rules.known) {
        for (size_t i = 0; i < rules.formals.size(); ++i) {
          if (!rules.formals[i].second)
            continue;
          bool variadicTail = i + 1 == rules.formals.size() &&
                              rules.maxInputs > (int)rules.formals.size();
          if (variadicTail)
            break;
          if ((int)i >= node.input_size() || node.input(i).empty()) {
            error(loc) << what << " is missing required input #" << i << " '"
                       << rules.formals[i].first << "'";
            return failure();
          }
        }
        if (node.input_size() < rules.minInputs) {
          error(loc) << what << " has " << node.input_size()
                     << " inputs, the operator needs at least "
                     << rules.minInputs;
          return failure();
        }
        if (node.input_size() > rules.maxInputs) {
          error(loc) << what << " has " << node.input_size()
                     << " inputs, the operator takes at most "
                     << rules.maxInputs;
          return failure();
        }
        if (node.output_size() > rules.maxOutputs) {
          error(loc) << what << " has " << node.output_size()
                     << " outputs, the operator has at most "
                     << rules.maxOutputs;
          return failure();
        }
      }
    }
  }

  // Operands.
  SmallVector<Value> operands;
  for (const auto &in : node.input()) {
    if (in.empty()) {
      operands.push_back(getNone(block));
      continue;
    }
    Value v = scope.lookup(in);
    if (!v) {
      error(loc) << what << " reads '" << in << "', which is not defined";
      return failure();
    }
    operands.push_back(v);
  }

  // Result types.
  auto lookupType = [&](StringRef name) -> FailureOr<Type> {
    for (auto it = typeScopes.rbegin(); it != typeScopes.rend(); ++it) {
      auto f = it->find(name);
      if (f != it->end())
        return convertType(*f->second, what + ": output '" + name.str() + "'");
    }
    return Type(od::UnknownType::get(ctx));
  };
  SmallVector<Type> resultTypes;
  SmallVector<Attribute> outputNames;
  for (const auto &out : node.output()) {
    outputNames.push_back(builder.getStringAttr(out));
    if (out.empty()) {
      resultTypes.push_back(builder.getNoneType());
      continue;
    }
    FailureOr<Type> t = lookupType(out);
    if (failed(t))
      return failure();
    resultTypes.push_back(*t);
  }

  // Attributes (graph attributes are collected separately).
  SmallVector<NamedAttribute> onnxAttrs;
  SmallVector<pb::GraphProto *> subgraphs;
  SmallVector<StringRef> subgraphNames;
  for (auto &a : *node.mutable_attribute()) {
    if (a.type() == pb::AttributeProto::GRAPH ||
        (a.type() == pb::AttributeProto::UNDEFINED && a.has_g())) {
      subgraphs.push_back(a.mutable_g());
      subgraphNames.push_back(a.name());
      continue;
    }
    if (a.type() == pb::AttributeProto::GRAPHS || a.graphs_size()) {
      error(loc) << what << ": attribute '" << a.name()
                 << "' is a list of graphs, which lstm-opt does not support";
      return failure();
    }
    FailureOr<Attribute> attr = convertAttribute(a, what);
    if (failed(attr))
      return failure();
    onnxAttrs.push_back(builder.getNamedAttr(a.name(), *attr));
  }

  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(block);
  Operation *op = nullptr;
  const auto &typedOps = getTypedOps();
  auto typedIt = typedOps.find(node.op_type());
  if (defaultDomain && subgraphs.empty() && typedIt != typedOps.end()) {
    const TypedOpInfo &info = typedIt->second;
    if (!info.variadicInputs) {
      if ((int)operands.size() > info.numInputs) {
        error(loc) << what << " has " << operands.size()
                   << " inputs, the operator takes at most " << info.numInputs;
        return failure();
      }
      while ((int)operands.size() < info.numInputs)
        operands.push_back(getNone(block));
    }
    if (!info.variadicOutputs) {
      if ((int)resultTypes.size() > info.numOutputs) {
        error(loc) << what << " has " << resultTypes.size()
                   << " outputs, the operator has at most " << info.numOutputs;
        return failure();
      }
      while ((int)resultTypes.size() < info.numOutputs) {
        resultTypes.push_back(builder.getNoneType());
        outputNames.push_back(builder.getStringAttr(""));
      }
    }
    OperationState state(loc, ("onnx." + node.op_type()));
    state.addOperands(operands);
    state.addTypes(resultTypes);
    auto registered = state.name.getRegisteredInfo();
    ArrayRef<StringAttr> inherent = registered->getAttributeNames();
    SmallVector<std::string> onnxAttrNames;
    for (NamedAttribute &na : onnxAttrs) {
      onnxAttrNames.push_back(na.getName().str());
      // ONNX attributes named like an input are held as `<name>_attr`.
      std::string renamed = (na.getName().getValue() + "_attr").str();
      if (llvm::any_of(inherent, [&](StringAttr s) { return s == renamed; }))
        na.setName(builder.getStringAttr(renamed));
      state.addAttribute(na.getName(), na.getValue());
    }
    op = builder.create(state);
    // An attribute of the wrong kind (a FLOAT `transB`, say) is not stored
    // by the typed op: refuse the model instead of dropping it.
    for (auto [onnxName, na] : llvm::zip(onnxAttrNames, state.attributes)) {
      if (op->getAttr(na.getName()) == na.getValue())
        continue;
      error(loc) << what << ": attribute '" << onnxName
                 << "' has the wrong kind for " << node.op_type() << " ("
                 << na.getValue() << ")";
      op->erase();
      return failure();
    }
  } else {
    auto nodeOp = od::NodeOp::create(
        builder, loc, resultTypes, operands, node.op_type(), node.domain(),
        onnxAttrs.empty() ? DictionaryAttr() : builder.getDictionaryAttr(onnxAttrs),
        subgraphNames.empty() ? ArrayAttr() : builder.getStrArrayAttr(subgraphNames),
        subgraphs.size());
    op = nodeOp;
    // Subgraphs: one region each, reading enclosing values directly.
    for (auto [region, g] : llvm::zip(nodeOp.getGraphs(), subgraphs)) {
      Block *body = new Block();
      region.push_back(body);
      Scope inner;
      inner.parent = &scope;
      SmallVector<Value> outs;
      SmallVector<DictionaryAttr> inAttrs;
      if (failed(
              importGraph(*g, body, inner, /*isMain=*/false, outs, &inAttrs)))
        return failure();
      SmallVector<StringRef> inNames, outNames;
      for (const auto &i : g->input())
        inNames.push_back(i.name());
      for (const auto &o : g->output())
        outNames.push_back(o.name());
      OpBuilder::InsertionGuard g2(builder);
      builder.setInsertionPointToEnd(body);
      auto yield = od::YieldOp::create(builder, loc, outs, g->name(),
                                       builder.getStrArrayAttr(inNames),
                                       builder.getStrArrayAttr(outNames));
      // The outputs' declared types, where they may say less than the
      // values' will once shapes are inferred (unknown or symbolic
      // dimensions): the export writes them again.
      SmallVector<Attribute> declared, dimNames;
      bool differs = false;
      for (auto [o, v] : llvm::zip(g->output(), outs)) {
        SmallVector<std::string> dims;
        Type t;
        if (o.has_type()) {
          FailureOr<Type> d = convertType(
              o.type(), "subgraph output '" + o.name() + "'", &dims);
          if (failed(d))
            return failure();
          t = *d;
        }
        auto st = dyn_cast_or_null<ShapedType>(t);
        differs |= t && (t != v.getType() || (st && !st.hasStaticShape()));
        declared.push_back(t ? Attribute(TypeAttr::get(t))
                             : Attribute(builder.getUnitAttr()));
        SmallVector<StringRef> names(dims.begin(), dims.end());
        dimNames.push_back(builder.getStrArrayAttr(names));
      }
      if (differs) {
        yield->setAttr(od::attrs::kOutputTypes, builder.getArrayAttr(declared));
        yield->setAttr(od::attrs::kOutputDimParams,
                       builder.getArrayAttr(dimNames));
      }
      // The inputs' dimension names, doc strings and metadata (a name alone
      // is kept by input_names).
      if (llvm::any_of(inAttrs, [](DictionaryAttr d) { return d.size() > 1; }))
        yield->setAttr(od::attrs::kInputAttrs,
                       builder.getArrayAttr(SmallVector<Attribute>(
                           inAttrs.begin(), inAttrs.end())));
      if (!g->doc_string().empty())
        yield->setAttr(od::attrs::kDocString,
                       builder.getStringAttr(g->doc_string()));
    }
  }
  op->setAttr(od::attrs::kOutputNames, builder.getArrayAttr(outputNames));
  if (!node.doc_string().empty())
    op->setAttr(od::attrs::kDocString, builder.getStringAttr(node.doc_string()));
  if (node.metadata_props_size())
    op->setAttr(od::attrs::kProps, propsAttr(builder, node.metadata_props()));
  // value_info metadata of the outputs (their types travel as result types).
  SmallVector<NamedAttribute> outInfo;
  for (const std::string &out : node.output())
    if (const pb::ValueInfoProto *vi = valueInfoOf(out);
        vi && vi->metadata_props_size())
      outInfo.push_back(builder.getNamedAttr(
          out, propsAttr(builder, vi->metadata_props())));
  if (!outInfo.empty())
    op->setAttr(od::attrs::kValueInfo, builder.getDictionaryAttr(outInfo));

  for (auto [out, res] : llvm::zip(node.output(), op->getResults()))
    if (!out.empty())
      scope.values[out] = res;
  return success();
}

LogicalResult
ModelImporter::importGraph(pb::GraphProto &graph, Block *block, Scope &scope,
                           bool isMain, SmallVectorImpl<Value> &outputs,
                           SmallVectorImpl<DictionaryAttr> *inputAttrs) {
  if (graph.sparse_initializer_size()) {
    error() << "graph '" << graph.name()
            << "' has sparse initializers, which lstm-opt does not support";
    return failure();
  }
  // Types of every named value, graph outputs taking precedence.
  typeScopes.emplace_back();
  llvm::scope_exit popTypes([&] { typeScopes.pop_back(); });
  auto &types = typeScopes.back();
  // value_info entries: subgraphs see their own (names are scoped).
  llvm::StringMap<const pb::ValueInfoProto *> outerInfos;
  std::swap(outerInfos, valueInfos);
  llvm::scope_exit popInfos(
      [&] { valueInfos = std::move(outerInfos); });
  for (const auto &vi : graph.value_info()) {
    valueInfos[vi.name()] = &vi;
    if (vi.has_type())
      types[vi.name()] = &vi.type();
  }
  for (const auto &vi : graph.output())
    if (vi.has_type())
      types[vi.name()] = &vi.type();

  llvm::StringSet<> initializerNames;
  for (const auto &init : graph.initializer())
    initializerNames.insert(init.name());

  // Graph inputs (those that are not initializers) become block arguments.
  llvm::StringSet<> inputNames;
  SmallVector<DictionaryAttr> argAttrs;
  for (const auto &in : graph.input()) {
    if (!inputNames.insert(in.name()).second) {
      error() << "graph input '" << in.name() << "' is listed twice";
      return failure();
    }
    if (isMain && initializerNames.contains(in.name()))
      continue;
    SmallVector<std::string> dims;
    FailureOr<Type> t =
        in.has_type() ? convertType(in.type(), "graph input '" + in.name() + "'",
                                    &dims)
                      : FailureOr<Type>(Type(od::UnknownType::get(ctx)));
    if (failed(t))
      return failure();
    scope.values[in.name()] = block->addArgument(*t, fileLoc);
    argAttrs.push_back(ioAttributes(in, dims));
  }
  if (isMain) {
    // The function type takes the arguments first: setting attributes for
    // arguments the type does not have yet trips MLIR's assertions.
    auto func = cast<func::FuncOp>(block->getParentOp());
    func.setFunctionType(FunctionType::get(ctx, block->getArgumentTypes(),
                                           func.getResultTypes()));
    func.setAllArgAttrs(argAttrs);
  }
  if (inputAttrs)
    inputAttrs->assign(argAttrs.begin(), argAttrs.end());

  // Initializers.
  {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToEnd(block);
    for (auto &init : *graph.mutable_initializer()) {
      std::string what = "initializer '" + init.name() + "'";
      if (init.name().empty()) {
        error() << "an initializer of graph '" << graph.name()
                << "' has no name";
        return failure();
      }
      if (scope.values.count(init.name())) {
        error() << what << " is defined twice";
        return failure();
      }
      FailureOr<ElementsAttr> value =
          convertTensor(init, /*resource=*/true, what);
      if (failed(value))
        return failure();
      Location loc = NameLoc::get(builder.getStringAttr(init.name()), fileLoc);
      auto op = od::InitializerOp::create(builder, loc, value->getType(),
                                          init.name(), *value,
                                          inputNames.contains(init.name()));
      if (const pb::ValueInfoProto *vi = valueInfoOf(init.name())) {
        op->setAttr(od::attrs::kValueInfo,
                    propsAttr(builder, vi->metadata_props()));
        if (vi->has_type()) {
          FailureOr<Type> declared = convertType(vi->type(), init.name());
          if (failed(declared))
            return failure();
          if (*declared != op.getType())
            op->setAttr(od::attrs::kValueInfoType, TypeAttr::get(*declared));
        }
      }
      scope.values[init.name()] = op.getResult();
    }
  }

  SmallVector<int> order;
  if (failed(topologicalOrder(graph, scope, order)))
    return failure();
  for (int i : order)
    if (failed(importNode(*graph.mutable_node(i), i, scope, block)))
      return failure();

  llvm::StringSet<> outputNames;
  for (const auto &out : graph.output()) {
    // Outputs are named values: the same name twice is no valid graph
    // (ONNX Runtime refuses it) and would give one buffer two owners.
    if (!outputNames.insert(out.name()).second) {
      error() << "graph output '" << out.name() << "' is listed twice";
      return failure();
    }
    Value v = scope.lookup(out.name());
    if (!v) {
      error() << "graph output '" << out.name()
              << "' is not produced by any node, input or initializer";
      return failure();
    }
    outputs.push_back(v);
  }
  return success();
}

/// Where a declared shape (value_info, a graph output) contradicts what the
/// operator computes by its shape rule, the rule's shape replaces it, with a
/// warning naming the node: ONNX Runtime ignores such a declaration and runs
/// the model, so refusing it would refuse a model that runs (old exporters
/// and tools wrote wrong value_info). An element type that disagrees stays an
/// error (the verifier's), as ONNX Runtime refuses it too. Ops of the graph
/// body in order, so a repaired type reaches the rules of its users; values
/// read by nested graphs' terminators are left alone. Returns the repaired
/// values.
llvm::DenseSet<Value> ModelImporter::repairDeclaredShapes(Block *body) {
  llvm::DenseSet<Value> repaired;
  // The rules (and the constant evaluation they do) assume verified ops:
  // required attributes present, operands of the right kinds. So every op of
  // the body must verify first with its result shapes set aside (ranks
  // erased, diagnostics silenced); if one does not, nothing is repaired and
  // the module's verification reports it.
  {
    ScopedDiagnosticHandler silence(ctx, [](Diagnostic &) { return success(); });
    for (Operation &op : *body) {
      SmallVector<Type> saved(op.getResultTypes());
      // Only an op with a shape rule has its declared shapes repaired; the
      // others (initializers, whose value fixes the type) verify as they are.
      if (isa<od::ShapeRuleOpInterface>(op))
        for (Value r : op.getResults())
          if (auto t = dyn_cast<TensorType>(r.getType()))
            r.setType(UnrankedTensorType::get(t.getElementType()));
      bool ok = succeeded(mlir::verify(&op, /*verifyRecursively=*/false));
      for (auto [r, t] : llvm::zip(op.getResults(), saved))
        r.setType(t);
      if (!ok)
        return repaired;
    }
  }
  for (Operation &op : *body) {
    if (!isa<od::ShapeRuleOpInterface>(op))
      continue;
    od::ShapeQuery query;
    SmallVector<ShapedTypeComponents> shapes;
    if (failed(od::inferResultShapes(&op, query, shapes)))
      continue; // the verifier reports the rule's refusal
    for (auto [result, shape] : llvm::zip(op.getResults(), shapes)) {
      auto declared = dyn_cast<TensorType>(result.getType());
      if (!declared || !shape.hasRank() || od::refineType(declared, shape))
        continue;
      if (shape.getElementType() &&
          shape.getElementType() != declared.getElementType())
        continue;
      bool safe = llvm::all_of(result.getUsers(), [&](Operation *user) {
        return user->getBlock() == body &&
               isa<od::ONNXDialect, func::FuncDialect>(user->getDialect());
      });
      if (!safe)
        continue;
      Type fixed =
          RankedTensorType::get(shape.getDims(), declared.getElementType());
      std::string name = "#" + std::to_string(result.getResultNumber());
      if (auto names = op.getAttrOfType<ArrayAttr>(od::attrs::kOutputNames))
        if (result.getResultNumber() < names.size())
          if (auto n = dyn_cast<StringAttr>(names[result.getResultNumber()]))
            name = "'" + n.str() + "'";
      op.emitWarning() << "output " << name << " is declared " << declared
                       << ", but the operator computes " << fixed
                       << "; the declaration is ignored, as ONNX Runtime "
                          "does";
      result.setType(fixed);
      repaired.insert(result);
    }
  }
  return repaired;
}

OwningOpRef<ModuleOp> ModelImporter::importModel(pb::ModelProto &model) {
  if (model.ir_version() == 0) {
    error() << "the model has no IR version (ir_version is missing or 0)";
    return nullptr;
  }
  if (model.ir_version() < kMinIrVersion ||
      model.ir_version() > proto::maxKnownIrVersion()) {
    error() << "unsupported ONNX IR version " << model.ir_version()
            << " (lstm-opt reads versions " << kMinIrVersion << " to "
            << proto::maxKnownIrVersion() << ")";
    return nullptr;
  }
  if (!model.has_graph()) {
    error() << "the model has no graph";
    return nullptr;
  }
  if (const pb::NodeProto *deep = tooDeeplyNested(model.graph())) {
    error() << "node '" << deep->name() << "' (" << deep->op_type()
            << "): subgraphs are nested deeper than " << kMaxSubgraphDepth
            << " levels";
    return nullptr;
  }
  for (const auto &o : model.opset_import()) {
    if (o.version() <= 0) {
      error() << "opset import of domain '" << o.domain()
              << "' has invalid version " << o.version();
      return nullptr;
    }
    std::string domain = o.domain() == "ai.onnx" ? "" : o.domain();
    // A domain the ONNX library defines (the default one, ai.onnx.ml, ...)
    // at a version it does not: no runtime can run it, and nothing here
    // knows its operators' meaning. Other domains (com.microsoft, custom
    // ones) are versioned by their owners.
    int64_t newest = proto::maxKnownOpset(domain);
    if (newest > 0 && o.version() > newest) {
      error() << "opset " << o.version() << " of domain '"
              << (domain.empty() ? "ai.onnx" : domain)
              << "' does not exist (the newest is " << newest << ")";
      return nullptr;
    }
    opsets[domain] = o.version();
  }
  if (!opsets.count("")) {
    error() << "the model imports no opset of the default ONNX domain";
    return nullptr;
  }

  for (const std::string &w : clearNegativeDims(*model.mutable_graph()))
    emitWarning(fileLoc) << w;

  if (!options.inputShapes.empty()) {
    std::set<std::string> seen;
    for (auto &in : *model.mutable_graph()->mutable_input()) {
      auto it = options.inputShapes.find(in.name());
      if (it == options.inputShapes.end())
        continue;
      seen.insert(in.name());
      const std::vector<int64_t> &want = it->second;
      if (!in.type().has_tensor_type()) {
        error() << "graph input '" << in.name() << "' is not a tensor";
        return nullptr;
      }
      auto *shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
      if (in.type().tensor_type().has_shape() &&
          shape->dim_size() != (int)want.size()) {
        error() << "graph input '" << in.name() << "' has rank "
                << shape->dim_size() << ", the given array has rank "
                << want.size();
        return nullptr;
      }
      if (!in.type().tensor_type().has_shape())
        for (size_t k = 0; k < want.size(); ++k)
          shape->add_dim();
      for (size_t k = 0; k < want.size(); ++k) {
        auto *dim = shape->mutable_dim(k);
        if (dim->has_dim_value() && dim->dim_value() != want[k]) {
          error() << "graph input '" << in.name() << "' has size "
                  << dim->dim_value() << " in dimension " << k
                  << ", the given array has " << want[k];
          return nullptr;
        }
        dim->set_dim_value(want[k]);
      }
    }
    for (const auto &[name, shape] : options.inputShapes)
      if (!seen.count(name)) {
        error() << "the model has no graph input named '" << name << "'";
        return nullptr;
      }
  }

  if (auto bad = badSizingAttribute(*model.mutable_graph())) {
    error() << "node '" << bad->first->name() << "' ("
            << bad->first->op_type() << "): " << bad->second;
    return nullptr;
  }

  // Where the ONNX library does not type the graph (its inference fails),
  // the dialect's shape rules fill in what they can once the graph is
  // imported.
  bool libraryInferred = false;
  if (options.shapeInference) {
    std::string err;
    if (opsets.lookup("") <= proto::maxKnownOpset("")) {
      // Inference merges what it infers into the declared graph outputs
      // (a symbolic dim may become static): keep the declared ones.
      auto declaredOutputs = model.graph().output();
      SubgraphDeclarations declaredSubgraphs(*model.mutable_graph());
      libraryInferred = proto::inferShapes(
          model, err, /*dataPropagation=*/!options.inputShapes.empty());
      declaredSubgraphs.restoreInputDimNames();
      if (!libraryInferred)
        inferenceWarning = "ONNX shape inference failed (" + err + ")";
      if (options.inputShapes.empty()) {
        *model.mutable_graph()->mutable_output() = std::move(declaredOutputs);
        declaredSubgraphs.restore();
      }
    }
  }

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc);
  Builder b(ctx);
  SmallVector<Attribute> opsetAttrs;
  for (const auto &o : model.opset_import())
    opsetAttrs.push_back(od::OpsetAttr::get(ctx, o.domain(), o.version()));
  auto setStr = [&](StringRef name, const std::string &v) {
    if (!v.empty())
      (*module)->setAttr(name, b.getStringAttr(v));
  };
  (*module)->setAttr(od::attrs::kIrVersion, b.getI64IntegerAttr(model.ir_version()));
  (*module)->setAttr(od::attrs::kOpsetImport, b.getArrayAttr(opsetAttrs));
  setStr(od::attrs::kProducerName, model.producer_name());
  setStr(od::attrs::kProducerVersion, model.producer_version());
  setStr(od::attrs::kModelDomain, model.domain());
  setStr(od::attrs::kDocString, model.doc_string());
  if (model.model_version())
    (*module)->setAttr(od::attrs::kModelVersion,
                       b.getI64IntegerAttr(model.model_version()));
  if (model.metadata_props_size())
    (*module)->setAttr(od::attrs::kMetadataProps,
                       propsAttr(b, model.metadata_props()));
  // Model-local functions and training info are kept verbatim.
  if (model.functions_size() || model.training_info_size()) {
    pb::ModelProto rest;
    *rest.mutable_functions() = model.functions();
    *rest.mutable_training_info() = model.training_info();
    std::string bytes;
    rest.SerializeToString(&bytes);
    (*module)->setAttr(od::attrs::kOpaqueModelFields, b.getStringAttr(bytes));
  }
  (*module)->setAttr(od::attrs::kSourceFile, b.getStringAttr(sourceName));

  pb::GraphProto &graph = *model.mutable_graph();
  std::string funcName = graph.name().empty() ? "main_graph" : graph.name();
  builder.setInsertionPointToEnd(module->getBody());
  auto func = func::FuncOp::create(builder, fileLoc, funcName,
                                   builder.getFunctionType({}, {}));
  if (graph.name().empty())
    func->setAttr(od::attrs::kGraphName, b.getStringAttr(""));
  if (!graph.doc_string().empty())
    func->setAttr(od::attrs::kDocString, b.getStringAttr(graph.doc_string()));
  Block *body = func.addEntryBlock();
  Scope scope;
  SmallVector<Value> outputs;
  if (failed(importGraph(graph, body, scope, /*isMain=*/true, outputs)))
    return nullptr;

  llvm::DenseSet<Value> repaired = repairDeclaredShapes(body);

  SmallVector<Type> argTypes(body->getArgumentTypes());
  SmallVector<Type> resultTypes;
  SmallVector<DictionaryAttr> resAttrs;
  for (auto [out, v] : llvm::zip(graph.output(), outputs)) {
    SmallVector<std::string> dims;
    // A repaired output's declared dim names may not fit its rank: dropped.
    if (out.has_type() && !repaired.contains(v)) {
      // Only the dim names are needed; the value carries the type.
      if (failed(convertType(out.type(), "graph output '" + out.name() + "'",
                             &dims)))
        return nullptr;
    }
    resultTypes.push_back(v.getType());
    resAttrs.push_back(ioAttributes(out, dims));
  }
  func.setFunctionType(builder.getFunctionType(argTypes, resultTypes));
  func.setAllResultAttrs(resAttrs);
  builder.setInsertionPointToEnd(body);
  func::ReturnOp::create(builder, fileLoc, outputs);

  if (failed(verify(*module)))
    return nullptr;
  int64_t refined = 0;
  if (options.shapeInference && !libraryInferred)
    refined = od::refineShapes(func);
  // Reported only for a model that imports: a defect found above is the
  // better message.
  if (!inferenceWarning.empty())
    emitWarning(fileLoc) << inferenceWarning << "; " << refined
                         << " intermediate types come from the onnx "
                            "dialect's shape rules, the others stay unknown";
  return module;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

/// Parses a model file's bytes (binary or text) into \p model; problems are
/// reported at \p fileLoc.
static LogicalResult parseModel(StringRef bytes, ONNXFileFormat format,
                                Location fileLoc, pb::ModelProto &model) {
  if (format == ONNXFileFormat::Text) {
    // Lines starting with "//" (lit RUN lines, comments) are blanked.
    std::string text;
    text.reserve(bytes.size());
    for (StringRef rest = bytes; !rest.empty();) {
      auto [line, tail] = rest.split('\n');
      if (!line.ltrim().starts_with("//"))
        text += line;
      text += '\n';
      rest = tail;
    }
    // libonnx's parser recurses once per nested graph: bound the nesting
    // (graph bodies are the '{' blocks) before it runs.
    int depth = 0, maxDepth = 0;
    for (char c : text) {
      depth += c == '{' ? 1 : c == '}' ? -1 : 0;
      maxDepth = std::max(maxDepth, depth);
    }
    if (maxDepth > kMaxSubgraphDepth + 1)
      return emitError(fileLoc)
             << "cannot parse ONNX text: graphs are nested deeper "
             << "than " << kMaxSubgraphDepth << " levels";
    std::string err;
    if (!proto::parseModelText(text, model, err))
      return emitError(fileLoc) << "cannot parse ONNX text: " << err;
  } else {
    google::protobuf::io::CodedInputStream stream(
        reinterpret_cast<const uint8_t *>(bytes.data()), bytes.size());
    stream.SetTotalBytesLimit(INT_MAX);
    // Each level of subgraph nesting is three message levels (Node,
    // Attribute, Graph): room for kMaxSubgraphDepth, which importModel then
    // reports clearly; deeper fails here, without recursing further.
    stream.SetRecursionLimit(3 * kMaxSubgraphDepth + 16);
    if (bytes.empty() || !model.ParseFromCodedStream(&stream) ||
        !stream.ConsumedEntireMessage())
      return emitError(fileLoc)
             << "not a valid ONNX model (the protobuf cannot be "
                "parsed; is the file truncated, or its subgraphs "
                "nested too deeply?)";
  }
  return success();
}

OwningOpRef<ModuleOp> lstm_opt::importONNXBuffer(
    StringRef bytes, ONNXFileFormat format, StringRef sourceName,
    StringRef baseDir, MLIRContext *context, const ONNXImportOptions &options) {
  context->loadDialect<od::ONNXDialect, func::FuncDialect>();
  Location fileLoc = FileLineColLoc::get(context, sourceName, 0, 0);
  pb::ModelProto model;
  if (failed(parseModel(bytes, format, fileLoc, model)))
    return nullptr;
  ModelImporter importer(context, options, sourceName, baseDir);
  return importer.importModel(model);
}

FailureOr<std::vector<DeclaredInput>>
lstm_opt::readDeclaredInputs(StringRef path, MLIRContext *context) {
  Location fileLoc = FileLineColLoc::get(context, path, 0, 0);
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return emitError(fileLoc)
           << "cannot open the model: " << buffer.getError().message();
  pb::ModelProto model;
  if (failed(parseModel((*buffer)->getBuffer(), getONNXFileFormat(path),
                        fileLoc, model)))
    return failure();
  llvm::StringSet<> initializers;
  for (const auto &t : model.graph().initializer())
    initializers.insert(t.name());
  std::vector<DeclaredInput> inputs;
  for (const auto &in : model.graph().input()) {
    if (initializers.contains(in.name()))
      continue;
    DeclaredInput d;
    d.name = in.name();
    if (in.type().has_tensor_type()) {
      const auto &tt = in.type().tensor_type();
      d.elemType = tt.elem_type();
      d.ranked = tt.has_shape();
      for (const auto &dim : tt.shape().dim())
        d.dims.push_back(dim.has_dim_value() && dim.dim_value() >= 0
                             ? dim.dim_value()
                             : -1);
    }
    inputs.push_back(std::move(d));
  }
  return inputs;
}

std::string lstm_opt::checkONNXFile(StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return "";
  MLIRContext ctx;
  ScopedDiagnosticHandler quiet(&ctx, [](Diagnostic &) { return success(); });
  pb::ModelProto model;
  if (failed(parseModel((*buffer)->getBuffer(), getONNXFileFormat(path),
                        UnknownLoc::get(&ctx), model)))
    return "";
  if (model.ir_version() > proto::maxKnownIrVersion())
    return "";
  for (const auto &o : model.opset_import())
    if (o.version() > proto::maxKnownOpset(o.domain()))
      return "";
  std::string err;
  return proto::checkModel(model, err) ? "" : err;
}

OwningOpRef<ModuleOp> lstm_opt::importONNXFile(StringRef path,
                                               MLIRContext *context,
                                               const ONNXImportOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    emitError(FileLineColLoc::get(context, path, 0, 0))
        << "cannot open the model: " << buffer.getError().message();
    return nullptr;
  }
  SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  if (dir.empty())
    dir = ".";
  llvm::sys::fs::make_absolute(dir);
  llvm::sys::path::remove_dots(dir, /*remove_dot_dot=*/true);
  return importONNXBuffer((*buffer)->getBuffer(), getONNXFileFormat(path), path,
                          dir, context, options);
}
