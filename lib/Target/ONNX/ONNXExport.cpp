//===- ONNXExport.cpp - onnx dialect -> ONNX model ------------------------===//
//
// The inverse of ONNXImport.cpp. Names are kept where the IR has them
// (onnx.name on graph inputs/outputs, initializer names, onnx.names on ops,
// NameLocs for nodes) and made unique where passes created new values; a
// graph output that is not a fresh node result gets an Identity node.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Target/ONNX/ONNXExport.h"

#include "ProtoUtils.h"
#include "lstm-opt/Dialect/ONNX/IR/ONNXOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace lstm_opt;
namespace pb = ::onnx;
namespace od = lstm_opt::onnx;

namespace {

constexpr int64_t kDefaultIrVersion = 8;
constexpr int64_t kDefaultOpset = 17;

class ModelExporter {
public:
  explicit ModelExporter(const ONNXExportOptions &options) : options(options) {}
  LogicalResult exportModule(ModuleOp module, pb::ModelProto &model);

private:
  LogicalResult exportGraph(Block &block, ArrayRef<StringRef> inputNames,
                            ArrayRef<DictionaryAttr> argAttrs,
                            ArrayRef<StringRef> outputNames,
                            ArrayRef<DictionaryAttr> resAttrs,
                            ValueRange outputs, pb::GraphProto &graph,
                            ArrayRef<Type> declaredOutTypes = {});
  LogicalResult exportOp(Operation *op, pb::GraphProto &graph);
  LogicalResult exportAttribute(Operation *op, StringRef name, Attribute attr,
                                pb::AttributeProto &out);
  LogicalResult exportTensor(Location loc, ElementsAttr attr,
                             pb::TensorProto &out);
  LogicalResult exportType(Location loc, Type type, DictionaryAttr ioAttrs,
                           pb::TypeProto &out, bool &known);
  std::string uniqueName(StringRef base);
  std::string uniqueNodeName(StringRef base);
  std::string nameOf(Value v);

  const ONNXExportOptions &options;
  llvm::StringSet<> usedNames;
  llvm::StringSet<> usedNodeNames;
  DenseMap<Value, std::string> valueNames;
};

} // namespace

std::string ModelExporter::uniqueName(StringRef base) {
  std::string name = base.empty() ? "v" : base.str();
  if (usedNames.insert(name).second)
    return name;
  for (unsigned i = 1;; ++i) {
    std::string candidate = name + "__" + std::to_string(i);
    if (usedNames.insert(candidate).second)
      return candidate;
  }
}

std::string ModelExporter::uniqueNodeName(StringRef base) {
  if (usedNodeNames.insert(base).second)
    return base.str();
  for (unsigned i = 1;; ++i) {
    std::string candidate = base.str() + "__" + std::to_string(i);
    if (usedNodeNames.insert(candidate).second)
      return candidate;
  }
}

std::string ModelExporter::nameOf(Value v) {
  if (isa<NoneType>(v.getType()))
    return "";
  auto it = valueNames.find(v);
  if (it != valueNames.end())
    return it->second;
  // Values are named when defined; reaching here means a use before def.
  return valueNames[v] = uniqueName("undefined");
}

/// The node name a location carries (first NameLoc found), or "".
static std::string nodeNameFromLoc(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations()) {
      std::string n = nodeNameFromLoc(l);
      if (!n.empty())
        return n + (fused.getLocations().size() > 1 ? "_fused" : "");
    }
  if (auto call = dyn_cast<CallSiteLoc>(loc))
    return nodeNameFromLoc(call.getCallee());
  return "";
}

LogicalResult ModelExporter::exportType(Location loc, Type type,
                                        DictionaryAttr ioAttrs,
                                        pb::TypeProto &out, bool &known) {
  known = true;
  if (isa<od::UnknownType>(type)) {
    known = false;
    return success();
  }
  if (auto seq = dyn_cast<od::SeqType>(type)) {
    bool k;
    return exportType(loc, seq.getElementType(), {},
                      *out.mutable_sequence_type()->mutable_elem_type(), k);
  }
  if (auto opt = dyn_cast<od::OptType>(type)) {
    bool k;
    return exportType(loc, opt.getElementType(), {},
                      *out.mutable_optional_type()->mutable_elem_type(), k);
  }
  if (auto map = dyn_cast<od::MapType>(type)) {
    int64_t key = od::getOnnxDataTypeForElementType(map.getKeyType());
    if (!key)
      return emitError(loc) << "map key type " << map.getKeyType()
                            << " has no ONNX equivalent";
    out.mutable_map_type()->set_key_type(key);
    bool k;
    return exportType(loc, map.getValueType(), {},
                      *out.mutable_map_type()->mutable_value_type(), k);
  }
  auto tensor = dyn_cast<TensorType>(type);
  if (!tensor)
    return emitError(loc) << "type " << type << " has no ONNX equivalent";
  int64_t dt = od::getOnnxDataTypeForElementType(tensor.getElementType());
  if (!dt)
    return emitError(loc) << "element type " << tensor.getElementType()
                          << " has no ONNX equivalent";
  auto *tt = out.mutable_tensor_type();
  tt->set_elem_type(dt);
  if (!tensor.hasRank())
    return success();
  auto *shape = tt->mutable_shape();
  ArrayAttr dimParams =
      ioAttrs ? ioAttrs.getAs<ArrayAttr>(od::attrs::kDimParams) : ArrayAttr();
  for (auto [i, d] : llvm::enumerate(tensor.getShape())) {
    auto *dim = shape->add_dim();
    if (!ShapedType::isDynamic(d)) {
      dim->set_dim_value(d);
      continue;
    }
    if (dimParams && i < dimParams.size())
      if (auto s = dyn_cast<StringAttr>(dimParams[i]); s && !s.empty())
        dim->set_dim_param(s.str());
  }
  return success();
}

LogicalResult ModelExporter::exportTensor(Location loc, ElementsAttr attr,
                                          pb::TensorProto &out) {
  auto type = cast<ShapedType>(attr.getType());
  Type elem = type.getElementType();
  int64_t dt = od::getOnnxDataTypeForElementType(elem);
  if (!dt)
    return emitError(loc) << "tensor element type " << elem
                          << " has no ONNX equivalent";
  out.set_data_type(dt);
  for (int64_t d : type.getShape())
    out.add_dims(d);
  int64_t numel = type.getNumElements();

  if (auto strs = dyn_cast<DenseStringElementsAttr>(attr)) {
    if (strs.isSplat())
      for (int64_t i = 0; i < numel; ++i)
        out.add_string_data(strs.getRawStringData()[0].str());
    else
      for (StringRef s : strs.getRawStringData())
        out.add_string_data(s.str());
    return success();
  }

  // One byte per element for 4-bit types here; packed below.
  std::string bytes;
  if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      return emitError(loc) << "dense resource '"
                            << res.getRawHandle().getKey()
                            << "' has no data";
    ArrayRef<char> data = blob->getData();
    bytes.assign(data.data(), data.size());
  } else if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (elem.isInteger(1)) {
      for (bool b : dense.getValues<bool>())
        bytes.push_back(b ? 1 : 0);
    } else {
      ArrayRef<char> raw = dense.getRawData();
      if (dense.isSplat()) {
        for (int64_t i = 0; i < numel; ++i)
          bytes.append(raw.data(), raw.size());
      } else {
        bytes.assign(raw.data(), raw.size());
      }
    }
  } else {
    return emitError(loc) << "cannot export attribute " << attr
                          << " as an ONNX tensor";
  }
  if (dt == 21 || dt == 22 || dt == 23) {
    std::string packed((numel + 1) / 2, '\0');
    for (int64_t i = 0; i < numel && i < (int64_t)bytes.size(); ++i)
      packed[i / 2] |= (char)((bytes[i] & 0xF) << ((i % 2) * 4));
    bytes = std::move(packed);
  }
  out.set_raw_data(std::move(bytes));
  return success();
}

LogicalResult ModelExporter::exportAttribute(Operation *op, StringRef name,
                                             Attribute attr,
                                             pb::AttributeProto &out) {
  out.set_name(name.str());
  Location loc = op->getLoc();
  if (auto f = dyn_cast<FloatAttr>(attr)) {
    out.set_type(pb::AttributeProto::FLOAT);
    out.set_f(f.getValueAsDouble());
  } else if (auto i = dyn_cast<IntegerAttr>(attr)) {
    out.set_type(pb::AttributeProto::INT);
    out.set_i(i.getType().isUnsignedInteger() ? (int64_t)i.getUInt()
                                              : i.getValue().getSExtValue());
  } else if (auto s = dyn_cast<StringAttr>(attr)) {
    out.set_type(pb::AttributeProto::STRING);
    out.set_s(s.str());
  } else if (auto ints = dyn_cast<DenseI64ArrayAttr>(attr)) {
    out.set_type(pb::AttributeProto::INTS);
    for (int64_t v : ints.asArrayRef())
      out.add_ints(v);
  } else if (auto floats = dyn_cast<DenseF32ArrayAttr>(attr)) {
    out.set_type(pb::AttributeProto::FLOATS);
    for (float v : floats.asArrayRef())
      out.add_floats(v);
  } else if (auto e = dyn_cast<ElementsAttr>(attr)) {
    out.set_type(pb::AttributeProto::TENSOR);
    return exportTensor(loc, e, *out.mutable_t());
  } else if (auto t = dyn_cast<TypeAttr>(attr)) {
    out.set_type(pb::AttributeProto::TYPE_PROTO);
    bool known;
    return exportType(loc, t.getValue(), {}, *out.mutable_tp(), known);
  } else if (auto arr = dyn_cast<ArrayAttr>(attr)) {
    auto all = [&](auto pred) { return llvm::all_of(arr, pred); };
    if (all([](Attribute a) { return isa<StringAttr>(a); })) {
      out.set_type(pb::AttributeProto::STRINGS);
      for (Attribute a : arr)
        out.add_strings(cast<StringAttr>(a).str());
    } else if (all([](Attribute a) { return isa<IntegerAttr>(a); })) {
      out.set_type(pb::AttributeProto::INTS);
      for (Attribute a : arr)
        out.add_ints(cast<IntegerAttr>(a).getInt());
    } else if (all([](Attribute a) { return isa<FloatAttr>(a); })) {
      out.set_type(pb::AttributeProto::FLOATS);
      for (Attribute a : arr)
        out.add_floats(cast<FloatAttr>(a).getValueAsDouble());
    } else if (all([](Attribute a) { return isa<ElementsAttr>(a); })) {
      out.set_type(pb::AttributeProto::TENSORS);
      for (Attribute a : arr)
        if (failed(exportTensor(loc, cast<ElementsAttr>(a), *out.add_tensors())))
          return failure();
    } else if (all([](Attribute a) { return isa<TypeAttr>(a); })) {
      out.set_type(pb::AttributeProto::TYPE_PROTOS);
      for (Attribute a : arr) {
        bool known;
        if (failed(exportType(loc, cast<TypeAttr>(a).getValue(), {},
                              *out.add_type_protos(), known)))
          return failure();
      }
    } else {
      return op->emitError() << "attribute '" << name
                             << "' mixes kinds and cannot be written to ONNX";
    }
  } else {
    return op->emitError() << "attribute '" << name << "' (" << attr
                           << ") has no ONNX equivalent";
  }
  return success();
}

/// Writes a list of [key, value] string pairs (see od::attrs::kProps) into
/// metadata_props; fails on any other shape.
static LogicalResult
writeProps(Location loc, Attribute attr, StringRef what,
           google::protobuf::RepeatedPtrField<pb::StringStringEntryProto> *out) {
  if (!attr)
    return success();
  auto list = dyn_cast<ArrayAttr>(attr);
  if (!list)
    return emitError(loc) << what << " must be a list of [key, value] pairs";
  for (Attribute a : list) {
    auto kv = dyn_cast<ArrayAttr>(a);
    if (!kv || kv.size() != 2 || !isa<StringAttr>(kv[0]) ||
        !isa<StringAttr>(kv[1]))
      return emitError(loc) << what << " must hold [key, value] string pairs";
    auto *p = out->Add();
    p->set_key(cast<StringAttr>(kv[0]).str());
    p->set_value(cast<StringAttr>(kv[1]).str());
  }
  return success();
}

LogicalResult ModelExporter::exportOp(Operation *op, pb::GraphProto &graph) {
  StringRef opType = od::getOnnxOpType(op);
  if (opType.empty())
    return op->emitError() << "'" << op->getName()
                           << "' cannot be written to ONNX; lower it to the "
                              "onnx dialect first";
  pb::NodeProto &node = *graph.add_node();
  node.set_op_type(opType.str());
  // Every node gets a unique name (runtimes such as ONNX Runtime name fused
  // nodes after their sources and reject duplicates): the one its location
  // carries, else `<OpType>_<n>`.
  std::string nodeName = nodeNameFromLoc(op->getLoc());
  if (nodeName.empty())
    nodeName = opType.str() + "_" + std::to_string(graph.node_size() - 1);
  nodeName = uniqueNodeName(nodeName);
  node.set_name(nodeName);
  if (auto doc = op->getAttrOfType<StringAttr>(od::attrs::kDocString))
    node.set_doc_string(doc.str());
  if (failed(writeProps(op->getLoc(), op->getAttr(od::attrs::kProps),
                        od::attrs::kProps, node.mutable_metadata_props())))
    return failure();

  // Inputs, without trailing omitted ones.
  SmallVector<std::string> inputs;
  for (Value v : op->getOperands())
    inputs.push_back(nameOf(v));
  while (!inputs.empty() && inputs.back().empty())
    inputs.pop_back();
  for (auto &s : inputs)
    node.add_input(s);

  // Outputs: the recorded name where it is still free.
  auto names = op->getAttrOfType<ArrayAttr>(od::attrs::kOutputNames);
  SmallVector<std::string> outputs;
  for (auto [i, res] : llvm::enumerate(op->getResults())) {
    if (isa<NoneType>(res.getType())) {
      outputs.push_back("");
      continue;
    }
    auto it = valueNames.find(res);
    if (it == valueNames.end()) {
      StringRef preferred;
      if (names && i < names.size())
        if (auto s = dyn_cast<StringAttr>(names[i]))
          preferred = s.getValue();
      std::string base = !preferred.empty() ? preferred.str()
                         : !nodeName.empty()
                             ? nodeName + "_out" + std::to_string(i)
                             : opType.str() + "_out" + std::to_string(i);
      it = valueNames.try_emplace(res, uniqueName(base)).first;
    }
    outputs.push_back(it->second);
  }
  while (!outputs.empty() && outputs.back().empty())
    outputs.pop_back();
  for (auto &s : outputs)
    node.add_output(s);

  // Attributes.
  auto nodeOp = dyn_cast<od::NodeOp>(op);
  if (nodeOp) {
    node.set_domain(nodeOp.getDomain().str());
    if (auto attrs = nodeOp.getAttrsAttr())
      for (NamedAttribute na : attrs)
        if (failed(exportAttribute(op, na.getName(), na.getValue(),
                                   *node.add_attribute())))
          return failure();
    if (auto graphNames = nodeOp.getGraphAttrsAttr()) {
      for (auto [nameAttr, region] :
           llvm::zip(graphNames, nodeOp.getGraphs())) {
        auto *a = node.add_attribute();
        a->set_name(cast<StringAttr>(nameAttr).str());
        a->set_type(pb::AttributeProto::GRAPH);
        Block &body = region.front();
        auto yield = cast<od::YieldOp>(body.getTerminator());
        SmallVector<StringRef> inNames, outNames;
        for (Attribute s : yield.getInputNames())
          inNames.push_back(cast<StringAttr>(s).getValue());
        for (Attribute s : yield.getOutputNames())
          outNames.push_back(cast<StringAttr>(s).getValue());
        pb::GraphProto &sub = *a->mutable_g();
        sub.set_name(yield.getName().str());
        if (auto doc = yield->getAttrOfType<StringAttr>(od::attrs::kDocString))
          sub.set_doc_string(doc.str());
        SmallVector<Type> declared;
        SmallVector<DictionaryAttr> outAttrs;
        auto types = yield->getAttrOfType<ArrayAttr>(od::attrs::kOutputTypes);
        auto dims = yield->getAttrOfType<ArrayAttr>(od::attrs::kOutputDimParams);
        if (types && dims && types.size() == yield.getValues().size() &&
            dims.size() == types.size()) {
          for (auto [t, d] : llvm::zip(types, dims)) {
            auto ta = dyn_cast<TypeAttr>(t);
            declared.push_back(ta ? ta.getValue() : Type());
            outAttrs.push_back(DictionaryAttr::get(
                op->getContext(),
                {NamedAttribute(StringAttr::get(op->getContext(),
                                                od::attrs::kDimParams),
                                d)}));
          }
        }
        SmallVector<DictionaryAttr> inAttrs;
        if (auto given =
                yield->getAttrOfType<ArrayAttr>(od::attrs::kInputAttrs))
          for (Attribute d : given)
            inAttrs.push_back(dyn_cast<DictionaryAttr>(d));
        if (failed(exportGraph(body, inNames, inAttrs, outNames, outAttrs,
                               yield.getValues(), sub, declared)))
          return failure();
      }
    }
  } else {
    for (NamedAttribute na : op->getAttrDictionary()) {
      StringRef name = na.getName().getValue();
      if (name.starts_with("onnx.") || name == "operandSegmentSizes" ||
          name == "resultSegmentSizes")
        continue;
      // `<name>_attr` holds an ONNX attribute named like an input.
      if (op->getInherentAttr(name) && name.ends_with("_attr"))
        name = name.drop_back(strlen("_attr"));
      if (failed(exportAttribute(op, name, na.getValue(), *node.add_attribute())))
        return failure();
    }
  }

  // value_info for intermediate results with a known type.
  if (options.writeValueInfo)
    for (OpResult res : op->getResults()) {
      if (isa<NoneType, od::UnknownType>(res.getType()))
        continue;
      pb::ValueInfoProto vi;
      vi.set_name(valueNames[res]);
      bool known;
      if (failed(exportType(op->getLoc(), res.getType(), {}, *vi.mutable_type(),
                            known)))
        return failure();
      if (!known)
        continue;
      if (auto info = op->getAttrOfType<DictionaryAttr>(od::attrs::kValueInfo))
        if (auto props = info.get(vi.name()))
          if (failed(writeProps(op->getLoc(), props, od::attrs::kValueInfo,
                                vi.mutable_metadata_props())))
            return failure();
      *graph.add_value_info() = std::move(vi);
    }
  return success();
}

LogicalResult ModelExporter::exportGraph(Block &block,
                                         ArrayRef<StringRef> inputNames,
                                         ArrayRef<DictionaryAttr> argAttrs,
                                         ArrayRef<StringRef> outputNames,
                                         ArrayRef<DictionaryAttr> resAttrs,
                                         ValueRange outputs,
                                         pb::GraphProto &graph,
                                         ArrayRef<Type> declaredOutTypes) {
  // Graph inputs.
  for (auto [i, arg] : llvm::enumerate(block.getArguments())) {
    StringRef want = i < inputNames.size() ? inputNames[i] : StringRef();
    std::string name = uniqueName(want.empty() ? "input_" + std::to_string(i)
                                               : want.str());
    valueNames[arg] = name;
    pb::ValueInfoProto &vi = *graph.add_input();
    vi.set_name(name);
    DictionaryAttr attrs = i < argAttrs.size() ? argAttrs[i] : DictionaryAttr();
    if (attrs) {
      if (auto doc = attrs.getAs<StringAttr>(od::attrs::kDocString))
        vi.set_doc_string(doc.str());
      if (failed(writeProps(arg.getLoc(), attrs.get(od::attrs::kProps),
                            od::attrs::kProps, vi.mutable_metadata_props())))
        return failure();
    }
    bool known;
    if (failed(exportType(arg.getLoc(), arg.getType(), attrs,
                          *vi.mutable_type(), known)))
      return failure();
    if (!known)
      vi.clear_type();
  }

  // Graph outputs claim their names first, so that no other value takes them.
  SmallVector<std::string> outNames;
  llvm::DenseSet<Value> claimed;
  for (auto [i, v] : llvm::enumerate(outputs)) {
    StringRef want = i < outputNames.size() ? outputNames[i] : StringRef();
    std::string base = want.empty() ? "output_" + std::to_string(i) : want.str();
    bool fresh = isa<OpResult>(v) && !valueNames.count(v) &&
                 !isa<od::InitializerOp>(v.getDefiningOp()) &&
                 !claimed.count(v);
    auto init = v.getDefiningOp<od::InitializerOp>();
    if (init && init.getName() == base && !valueNames.count(v) &&
        !usedNames.contains(base)) {
      // An initializer that is itself a graph output keeps its name.
      usedNames.insert(base);
      valueNames[v] = base;
      outNames.push_back(base);
    } else if (fresh) {
      std::string name = uniqueName(base);
      valueNames[v] = name;
      claimed.insert(v);
      outNames.push_back(name);
    } else if (auto it = valueNames.find(v);
               it != valueNames.end() && it->second == base) {
      outNames.push_back(base); // e.g. a graph input passed through
    } else {
      outNames.push_back(uniqueName(base)); // needs an Identity, below
    }
  }

  for (Operation &op : block) {
    if (isa<od::NoneOp>(op) || op.hasTrait<OpTrait::IsTerminator>())
      continue;
    if (auto init = dyn_cast<od::InitializerOp>(op)) {
      std::string name = valueNames.count(init.getResult())
                             ? valueNames[init.getResult()]
                             : uniqueName(init.getName());
      valueNames[init.getResult()] = name;
      pb::TensorProto &t = *graph.add_initializer();
      t.set_name(name);
      if (failed(exportTensor(init.getLoc(), init.getValue(), t)))
        return failure();
      if (Attribute info = init->getAttr(od::attrs::kValueInfo)) {
        // The original had a value_info entry for the initializer.
        pb::ValueInfoProto &vi = *graph.add_value_info();
        vi.set_name(name);
        bool known;
        // The declared type, unless value_info is written only to carry
        // metadata (shape inference then reads the tensor's own type).
        Type declared = init.getType();
        if (auto t = init->getAttrOfType<TypeAttr>(od::attrs::kValueInfoType);
            t && options.writeValueInfo)
          declared = t.getValue();
        if (failed(exportType(init.getLoc(), declared, {},
                              *vi.mutable_type(), known)) ||
            failed(writeProps(init.getLoc(), info, od::attrs::kValueInfo,
                              vi.mutable_metadata_props())))
          return failure();
      }
      if (init.getGraphInput()) {
        pb::ValueInfoProto &vi = *graph.add_input();
        vi.set_name(name);
        bool known;
        if (failed(exportType(init.getLoc(), init.getType(), {},
                              *vi.mutable_type(), known)))
          return failure();
      }
      continue;
    }
    if (failed(exportOp(&op, graph)))
      return failure();
  }

  // Outputs; an Identity where the value already has another name.
  for (auto [i, v] : llvm::enumerate(outputs)) {
    std::string have = nameOf(v);
    if (have != outNames[i]) {
      pb::NodeProto &id = *graph.add_node();
      id.set_op_type("Identity");
      id.set_name(uniqueNodeName(outNames[i] + "_identity"));
      id.add_input(have);
      id.add_output(outNames[i]);
    }
    pb::ValueInfoProto &vi = *graph.add_output();
    vi.set_name(outNames[i]);
    DictionaryAttr attrs = i < resAttrs.size() ? resAttrs[i] : DictionaryAttr();
    if (attrs) {
      if (auto doc = attrs.getAs<StringAttr>(od::attrs::kDocString))
        vi.set_doc_string(doc.str());
      if (failed(writeProps(v.getLoc(), attrs.get(od::attrs::kProps),
                            od::attrs::kProps, vi.mutable_metadata_props())))
        return failure();
    }
    // A subgraph output's declared type, where it still fits the value.
    Type type = v.getType();
    if (i < declaredOutTypes.size() && declaredOutTypes[i] &&
        getElementTypeOrSelf(declaredOutTypes[i]) ==
            getElementTypeOrSelf(type) &&
        succeeded(verifyCompatibleShape(declaredOutTypes[i], type)))
      type = declaredOutTypes[i];
    bool known;
    if (failed(exportType(v.getLoc(), type, attrs, *vi.mutable_type(), known)))
      return failure();
    if (!known)
      vi.clear_type();
  }
  // Graph outputs are not repeated in value_info.
  llvm::StringSet<> outSet;
  for (auto &n : outNames)
    outSet.insert(n);
  auto *vis = graph.mutable_value_info();
  vis->erase(std::remove_if(vis->begin(), vis->end(),
                            [&](const pb::ValueInfoProto &vi) {
                              return outSet.contains(vi.name());
                            }),
             vis->end());
  return success();
}

LogicalResult ModelExporter::exportModule(ModuleOp module,
                                          pb::ModelProto &model) {
  func::FuncOp main;
  for (Operation &op : *module.getBody()) {
    auto f = dyn_cast<func::FuncOp>(op);
    if (!f)
      return op.emitError() << "'" << op.getName()
                            << "' at module level cannot be written to ONNX";
    if (f.isExternal())
      continue;
    if (main)
      return f.emitError() << "the module holds more than one graph function "
                              "('"
                           << main.getSymName() << "' and '" << f.getSymName()
                           << "'); ONNX has one main graph";
    main = f;
  }
  if (!main)
    return module.emitError() << "the module has no graph function to write";

  auto getStr = [&](StringRef name) -> std::string {
    if (auto s = module->getAttrOfType<StringAttr>(name))
      return s.str();
    return "";
  };
  auto irVersion = module->getAttrOfType<IntegerAttr>(od::attrs::kIrVersion);
  model.set_ir_version(irVersion ? irVersion.getInt() : kDefaultIrVersion);
  if (auto opsets = module->getAttrOfType<ArrayAttr>(od::attrs::kOpsetImport)) {
    for (Attribute a : opsets) {
      auto opset = dyn_cast<od::OpsetAttr>(a);
      if (!opset)
        return module.emitError() << od::attrs::kOpsetImport
                                  << " must hold #onnx.opset attributes";
      auto *o = model.add_opset_import();
      o->set_domain(opset.getDomain().str());
      o->set_version(opset.getVersion());
    }
  } else {
    auto *o = model.add_opset_import();
    o->set_domain("");
    o->set_version(kDefaultOpset);
  }
  model.set_producer_name(getStr(od::attrs::kProducerName));
  model.set_producer_version(getStr(od::attrs::kProducerVersion));
  model.set_domain(getStr(od::attrs::kModelDomain));
  model.set_doc_string(getStr(od::attrs::kDocString));
  if (auto v = module->getAttrOfType<IntegerAttr>(od::attrs::kModelVersion))
    model.set_model_version(v.getInt());
  if (failed(writeProps(module.getLoc(),
                        module->getAttr(od::attrs::kMetadataProps),
                        od::attrs::kMetadataProps,
                        model.mutable_metadata_props())))
    return failure();
  if (auto opaque = module->getAttrOfType<StringAttr>(od::attrs::kOpaqueModelFields)) {
    pb::ModelProto rest;
    if (!rest.ParseFromString(opaque.str()))
      return module.emitError() << "corrupt " << od::attrs::kOpaqueModelFields;
    *model.mutable_functions() = rest.functions();
    *model.mutable_training_info() = rest.training_info();
  }

  pb::GraphProto &graph = *model.mutable_graph();
  auto graphName = main->getAttrOfType<StringAttr>(od::attrs::kGraphName);
  graph.set_name(graphName ? graphName.str() : main.getSymName().str());
  if (auto doc = main->getAttrOfType<StringAttr>(od::attrs::kDocString))
    graph.set_doc_string(doc.str());

  auto collect = [](ArrayAttr all, unsigned n, SmallVectorImpl<StringRef> &names,
                    SmallVectorImpl<DictionaryAttr> &dicts) {
    for (unsigned i = 0; i < n; ++i) {
      DictionaryAttr d =
          all && i < all.size() ? dyn_cast<DictionaryAttr>(all[i]) : nullptr;
      dicts.push_back(d);
      StringAttr s = d ? d.getAs<StringAttr>(od::attrs::kName) : nullptr;
      names.push_back(s ? s.getValue() : StringRef());
    }
  };
  SmallVector<StringRef> inNames, outNames;
  SmallVector<DictionaryAttr> argAttrs, resAttrs;
  collect(main.getAllArgAttrs(), main.getNumArguments(), inNames, argAttrs);
  collect(main.getAllResultAttrs(), main.getNumResults(), outNames, resAttrs);
  Block &body = main.front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return main.emitError() << "the graph function must end in func.return";
  // Reserve the names of graph inputs and outputs and of initializers first.
  return exportGraph(body, inNames, argAttrs, outNames, resAttrs,
                     ret.getOperands(), graph);
}

LogicalResult lstm_opt::exportONNX(ModuleOp module, llvm::raw_ostream &os,
                                   ONNXFileFormat format,
                                   const ONNXExportOptions &options) {
  pb::ModelProto model;
  ModelExporter exporter(options);
  if (failed(exporter.exportModule(module, model)))
    return failure();
  if (options.runChecker) {
    // libonnx only checks what it knows; newer IR versions/opsets are left
    // to the runtime.
    bool knownOpsets = model.ir_version() <= proto::maxKnownIrVersion();
    for (const auto &o : model.opset_import())
      if (o.version() > proto::maxKnownOpset(o.domain()))
        knownOpsets = false;
    std::string err;
    if (knownOpsets && !proto::checkModel(model, err)) {
      auto diag = module.emitError()
                  << "the exported model fails onnx's checker: " << err;
      std::string inputErr =
          options.inputCheckerError ? options.inputCheckerError() : "";
      if (!inputErr.empty()) {
        auto &note = diag.attachNote() << "the input model fails onnx's checker";
        if (inputErr == err)
          note << " the same way";
        else
          note << " too (" << inputErr << ")";
        note << ": the exporter that wrote it made a model ONNX does not "
                "accept (ONNX Runtime does not load it either); "
                "--no-onnx-check writes lstm-opt's output anyway";
      }
      return diag;
    }
  }
  if (format == ONNXFileFormat::Text) {
    os << proto::printModelText(model);
    return success();
  }
  std::string bytes;
  if (model.ByteSizeLong() > INT32_MAX)
    return module.emitError() << "the model is larger than 2 GiB, the "
                                 "protobuf limit";
  if (!model.SerializeToString(&bytes))
    return module.emitError() << "cannot serialize the model";
  os.write(bytes.data(), bytes.size());
  return success();
}
