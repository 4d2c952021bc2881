//===- TensorRoundTripTest.cpp - tensors through import and export --------===//
//
// Every ONNX data type, stored as raw_data and in the typed repeated fields,
// must come back from import + export with identical values; malformed
// tensors must be refused with a message naming them.
//
//===----------------------------------------------------------------------===//

#include "lstm-opt/Target/ONNX/ONNXExport.h"
#include "lstm-opt/Target/ONNX/ONNXImport.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

using namespace mlir;
using namespace lstm_opt;

namespace {

/// A one-node-per-tensor model: each initializer is passed through Identity.
::onnx::ModelProto makeModel(const std::vector<::onnx::TensorProto> &tensors) {
  ::onnx::ModelProto model;
  model.set_ir_version(8);
  auto *opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  auto *graph = model.mutable_graph();
  graph->set_name("g");
  for (const auto &t : tensors) {
    *graph->add_initializer() = t;
    auto *node = graph->add_node();
    node->set_op_type("Identity");
    node->set_name("id_" + t.name());
    node->add_input(t.name());
    node->add_output("out_" + t.name());
    auto *out = graph->add_output();
    out->set_name("out_" + t.name());
    auto *tt = out->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(t.data_type());
    auto *shape = tt->mutable_shape();
    for (int64_t d : t.dims())
      shape->add_dim()->set_dim_value(d);
  }
  return model;
}

struct Result {
  bool ok = false;
  std::string errors;
  ::onnx::ModelProto model;
};

Result roundTrip(const ::onnx::ModelProto &in, StringRef baseDir = "") {
  MLIRContext ctx;
  Result r;
  ScopedDiagnosticHandler handler(&ctx, [&](Diagnostic &d) {
    r.errors += d.str() + "\n";
    return success();
  });
  std::string bytes;
  in.SerializeToString(&bytes);
  auto module = importONNXBuffer(bytes, ONNXFileFormat::Binary, "test.onnx",
                                 baseDir, &ctx);
  if (!module)
    return r;
  std::string out;
  llvm::raw_string_ostream os(out);
  if (failed(exportONNX(*module, os, ONNXFileFormat::Binary)))
    return r;
  r.ok = r.model.ParseFromString(out);
  return r;
}

const ::onnx::TensorProto *findInit(const ::onnx::ModelProto &m,
                                    const std::string &name) {
  for (const auto &t : m.graph().initializer())
    if (t.name() == name)
      return &t;
  return nullptr;
}

::onnx::TensorProto rawTensor(const std::string &name, int dt,
                              std::vector<int64_t> dims, std::string bytes) {
  ::onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(dt);
  for (int64_t d : dims)
    t.add_dims(d);
  t.set_raw_data(std::move(bytes));
  return t;
}

template <typename T>
std::string bytesOf(std::initializer_list<T> values) {
  std::string s(values.size() * sizeof(T), '\0');
  std::memcpy(s.data(), values.begin(), s.size());
  return s;
}

} // namespace

TEST(TensorRoundTrip, RawDataOfEveryFixedWidthType) {
  std::vector<::onnx::TensorProto> ts = {
      rawTensor("f32", 1, {2, 2}, bytesOf<float>({1.5f, -2.f, 3.25f, 0.f})),
      rawTensor("u8", 2, {3}, bytesOf<uint8_t>({0, 128, 255})),
      rawTensor("i8", 3, {3}, bytesOf<int8_t>({-128, 0, 127})),
      rawTensor("u16", 4, {2}, bytesOf<uint16_t>({1, 65535})),
      rawTensor("i16", 5, {2}, bytesOf<int16_t>({-3, 300})),
      rawTensor("i32", 6, {2}, bytesOf<int32_t>({-70000, 5})),
      rawTensor("i64", 7, {2}, bytesOf<int64_t>({-1, 1LL << 40})),
      rawTensor("bool", 9, {4}, bytesOf<uint8_t>({1, 0, 0, 1})),
      rawTensor("f16", 10, {2}, bytesOf<uint16_t>({0x3C00, 0xC000})),
      rawTensor("f64", 11, {2}, bytesOf<double>({0.1, -1e300})),
      rawTensor("u32", 12, {1}, bytesOf<uint32_t>({4000000000u})),
      rawTensor("u64", 13, {1}, bytesOf<uint64_t>({~0ull})),
      rawTensor("c64", 14, {1}, bytesOf<float>({1.f, -1.f})),
      rawTensor("bf16", 16, {2}, bytesOf<uint16_t>({0x3F80, 0x4000})),
      rawTensor("f8", 17, {2}, bytesOf<uint8_t>({0x38, 0x40})),
      rawTensor("scalar", 1, {}, bytesOf<float>({42.f})),
      rawTensor("empty", 1, {0, 3}, ""),
  };
  Result r = roundTrip(makeModel(ts));
  ASSERT_TRUE(r.ok) << r.errors;
  for (const auto &t : ts) {
    const auto *back = findInit(r.model, t.name());
    ASSERT_NE(back, nullptr) << t.name();
    EXPECT_EQ(back->data_type(), t.data_type()) << t.name();
    EXPECT_EQ(back->raw_data(), t.raw_data()) << t.name();
    ASSERT_EQ(back->dims_size(), t.dims_size()) << t.name();
    for (int i = 0; i < t.dims_size(); ++i)
      EXPECT_EQ(back->dims(i), t.dims(i)) << t.name();
  }
}

TEST(TensorRoundTrip, TypedFieldsBecomeEqualRawData) {
  ::onnx::TensorProto f;
  f.set_name("f");
  f.set_data_type(1);
  f.add_dims(3);
  for (float v : {1.f, 2.f, -3.f})
    f.add_float_data(v);
  ::onnx::TensorProto i8;
  i8.set_name("i8");
  i8.set_data_type(3);
  i8.add_dims(2);
  i8.add_int32_data(-5);
  i8.add_int32_data(7);
  ::onnx::TensorProto i64;
  i64.set_name("i64");
  i64.set_data_type(7);
  i64.add_dims(2);
  i64.add_int64_data(-9);
  i64.add_int64_data(1LL << 50);
  ::onnx::TensorProto d;
  d.set_name("d");
  d.set_data_type(11);
  d.add_dims(1);
  d.add_double_data(2.5);
  ::onnx::TensorProto u32;
  u32.set_name("u32");
  u32.set_data_type(12);
  u32.add_dims(1);
  u32.add_uint64_data(3000000000u);
  ::onnx::TensorProto h;
  h.set_name("h");
  h.set_data_type(10);
  h.add_dims(1);
  h.add_int32_data(0x3C00);

  Result r = roundTrip(makeModel({f, i8, i64, d, u32, h}));
  ASSERT_TRUE(r.ok) << r.errors;
  EXPECT_EQ(findInit(r.model, "f")->raw_data(), bytesOf<float>({1.f, 2.f, -3.f}));
  EXPECT_EQ(findInit(r.model, "i8")->raw_data(), bytesOf<int8_t>({-5, 7}));
  EXPECT_EQ(findInit(r.model, "i64")->raw_data(),
            bytesOf<int64_t>({-9, 1LL << 50}));
  EXPECT_EQ(findInit(r.model, "d")->raw_data(), bytesOf<double>({2.5}));
  EXPECT_EQ(findInit(r.model, "u32")->raw_data(),
            bytesOf<uint32_t>({3000000000u}));
  EXPECT_EQ(findInit(r.model, "h")->raw_data(), bytesOf<uint16_t>({0x3C00}));
}

TEST(TensorRoundTrip, FourBitTypesStayPacked) {
  // 5 int4 values -2, 7, -8, 0, 1 packed low nibble first: 3 bytes.
  std::string packed = {(char)0x7E, (char)0x08, (char)0x01};
  auto t = rawTensor("q", 22, {5}, packed);
  auto u = rawTensor("uq", 21, {3}, std::string{(char)0x21, (char)0x0F});
  Result r = roundTrip(makeModel({t, u}));
  ASSERT_TRUE(r.ok) << r.errors;
  EXPECT_EQ(findInit(r.model, "q")->raw_data(), packed);
  EXPECT_EQ(findInit(r.model, "uq")->raw_data(), u.raw_data());
}

TEST(TensorRoundTrip, Strings) {
  ::onnx::TensorProto s;
  s.set_name("s");
  s.set_data_type(8);
  s.add_dims(2);
  s.add_string_data("hello");
  s.add_string_data(std::string("a\0b", 3));
  Result r = roundTrip(makeModel({s}));
  ASSERT_TRUE(r.ok) << r.errors;
  const auto *back = findInit(r.model, "s");
  ASSERT_EQ(back->string_data_size(), 2);
  EXPECT_EQ(back->string_data(0), "hello");
  EXPECT_EQ(back->string_data(1), std::string("a\0b", 3));
}

TEST(TensorRoundTrip, ByteCountMismatchIsRefused) {
  auto t = rawTensor("w", 1, {2, 3}, bytesOf<float>({1.f, 2.f}));
  Result r = roundTrip(makeModel({t}));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.errors.find("initializer 'w' has 8 bytes of raw data but its "
                          "shape needs 24"),
            std::string::npos)
      << r.errors;
}

TEST(TensorRoundTrip, TypedFieldCountMismatchIsRefused) {
  ::onnx::TensorProto f;
  f.set_name("f");
  f.set_data_type(1);
  f.add_dims(4);
  f.add_float_data(1.f);
  Result r = roundTrip(makeModel({f}));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.errors.find("initializer 'f' holds 1 values but its shape needs 4"),
            std::string::npos)
      << r.errors;
}

TEST(TensorRoundTrip, NegativeDimIsRefused) {
  auto t = rawTensor("n", 1, {-2}, "");
  Result r = roundTrip(makeModel({t}));
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.errors.find("initializer 'n' has a negative dimension (-2)"),
            std::string::npos)
      << r.errors;
}

namespace {
/// A fresh folder with a model directory and a file outside it.
struct TempTree {
  llvm::SmallString<128> root, modelDir;
  TempTree() {
    llvm::sys::fs::createUniqueDirectory("lstm-opt-ext", root);
    modelDir = root;
    llvm::sys::path::append(modelDir, "model");
    llvm::sys::fs::create_directories(modelDir);
  }
  ~TempTree() { llvm::sys::fs::remove_directories(root); }
  void write(StringRef relPath, const std::string &data) {
    llvm::SmallString<128> p(root);
    llvm::sys::path::append(p, relPath);
    std::ofstream(p.str().str(), std::ios::binary) << data;
  }
};

::onnx::TensorProto externalTensor(const std::string &location,
                                   int64_t offset = -1) {
  ::onnx::TensorProto t;
  t.set_name("ext");
  t.set_data_type(1);
  t.add_dims(2);
  t.set_data_location(::onnx::TensorProto::EXTERNAL);
  auto *kv = t.add_external_data();
  kv->set_key("location");
  kv->set_value(location);
  if (offset >= 0) {
    kv = t.add_external_data();
    kv->set_key("offset");
    kv->set_value(std::to_string(offset));
    kv = t.add_external_data();
    kv->set_key("length");
    kv->set_value("8");
  }
  return t;
}
} // namespace

TEST(ExternalData, ReadNextToTheModel) {
  TempTree tree;
  tree.write("model/weights.bin", "xxxx" + bytesOf<float>({4.f, -1.f}));
  Result r = roundTrip(makeModel({externalTensor("weights.bin", 4)}),
                       tree.modelDir);
  ASSERT_TRUE(r.ok) << r.errors;
  EXPECT_EQ(findInit(r.model, "ext")->raw_data(), bytesOf<float>({4.f, -1.f}));
}

TEST(ExternalData, PathOutsideTheModelFolderIsRefused) {
  TempTree tree;
  tree.write("secret.bin", bytesOf<float>({1.f, 2.f}));
  for (std::string loc : {std::string("../secret.bin"),
                          (tree.root + "/secret.bin").str()}) {
    Result r = roundTrip(makeModel({externalTensor(loc)}), tree.modelDir);
    EXPECT_FALSE(r.ok) << loc;
    EXPECT_NE(r.errors.find("is outside the model folder"), std::string::npos)
        << r.errors;
  }
}

TEST(ExternalData, MissingFileAndShortFileAreRefused) {
  TempTree tree;
  Result r = roundTrip(makeModel({externalTensor("nope.bin")}), tree.modelDir);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.errors.find("cannot open external data file 'nope.bin'"),
            std::string::npos)
      << r.errors;
  tree.write("model/short.bin", "abc");
  r = roundTrip(makeModel({externalTensor("short.bin")}), tree.modelDir);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.errors.find("external data holds 3 bytes but the shape needs 8"),
            std::string::npos)
      << r.errors;
}
