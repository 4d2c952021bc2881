//===- ProtoUtils.cpp - libonnx calls that need C++ exceptions ------------===//
//
// Built with -fexceptions (see CMakeLists.txt): every libonnx call that may
// throw is wrapped here and turned into a string error.
//
//===----------------------------------------------------------------------===//

#include "ProtoUtils.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/printer.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

#include <algorithm>
#include <climits>
#include <sstream>

using namespace lstm_opt;

bool proto::parseModelText(const std::string &text, ::onnx::ModelProto &model,
                           std::string &error) {
  try {
    ::onnx::OnnxParser parser(text.c_str());
    auto status = parser.Parse(model);
    if (!status.IsOK()) {
      error = status.ErrorMessage();
      return false;
    }
    if (!parser.EndOfInput()) {
      error = "unexpected text after the graph";
      return false;
    }
    return true;
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
}

bool proto::inferShapes(::onnx::ModelProto &model, std::string &error,
                        bool dataPropagation) {
  try {
    ::onnx::ShapeInferenceOptions options(/*check_type=*/false,
                                          /*error_mode=*/0, dataPropagation);
    ::onnx::shape_inference::InferShapes(
        model, ::onnx::OpSchemaRegistry::Instance(), options);
    return true;
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
}

bool proto::checkModel(const ::onnx::ModelProto &model,
                       std::string &error) {
  try {
    ::onnx::checker::check_model(model);
    return true;
  } catch (const std::exception &e) {
    error = e.what();
    return false;
  }
}

int proto::maxKnownOpset(const std::string &domain) {
  const auto &map =
      ::onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  std::string d = domain == "ai.onnx" ? "" : domain;
  auto it = map.find(d);
  return it == map.end() ? 0 : it->second.second;
}

int64_t proto::maxKnownIrVersion() { return ::onnx::Version::IR_VERSION; }

std::vector<proto::OperatorSchema>
proto::listOperators(const std::string &domain) {
  std::vector<OperatorSchema> out;
  try {
    for (const ::onnx::OpSchema &s : ::onnx::OpSchemaRegistry::get_all_schemas())
      if (s.domain() == domain)
        out.push_back({s.Name(), s.SinceVersion(), s.Deprecated()});
  } catch (const std::exception &) {
    out.clear();
  }
  std::sort(out.begin(), out.end(),
            [](const OperatorSchema &a, const OperatorSchema &b) {
              return a.name < b.name;
            });
  return out;
}

proto::InputRules proto::getInputRules(const std::string &opType,
                                       const std::string &domain, int opset) {
  InputRules rules;
  try {
    std::string d = domain == "ai.onnx" ? "" : domain;
    const ::onnx::OpSchema *schema =
        ::onnx::OpSchemaRegistry::Schema(opType, opset, d);
    if (!schema)
      return rules;
    rules.known = true;
    rules.minInputs = schema->min_input();
    rules.maxInputs = schema->max_input();
    rules.maxOutputs = schema->max_output();
    for (const auto &formal : schema->inputs())
      rules.formals.emplace_back(
          formal.GetName(),
          formal.GetOption() == ::onnx::OpSchema::FormalParameterOption::Single);
  } catch (const std::exception &) {
    rules.known = false;
  }
  return rules;
}

std::string proto::printModelText(const ::onnx::ModelProto &model) {
  std::ostringstream os;
  os << "<\n  ir_version: " << model.ir_version() << ",\n  opset_import: [";
  for (int i = 0; i < model.opset_import_size(); ++i) {
    const auto &o = model.opset_import(i);
    os << (i ? ", " : "") << "\"" << o.domain() << "\" : " << o.version();
  }
  os << "]";
  if (!model.producer_name().empty())
    os << ",\n  producer_name: \"" << model.producer_name() << "\"";
  if (!model.producer_version().empty())
    os << ",\n  producer_version: \"" << model.producer_version() << "\"";
  os << "\n>\n" << model.graph() << "\n";
  return os.str();
}
