//===- ModelMutator.h - structure-aware mutation of ONNX models -*- C++ -*-===//
//
// A libFuzzer custom mutator for binary ONNX models. Byte flips rarely reach
// a dimension or an attribute without breaking the protobuf; this mutator
// parses the input as an onnx.ModelProto (through protobuf reflection: the
// message type comes from the descriptor pool that lstm-opt's ONNX library
// registered, so no generated ONNX code is linked here) and changes the
// model's structure, then serialises it again:
//  - an integer or enum anywhere (a dimension, an element type, an
//    attribute, a version, a hidden size, a num_outputs) becomes a boundary
//    value (0, +-1, 2^31, 2^32, 2^62, INT64_MAX, ...) or a near neighbour;
//  - a name (a node's input or output, a graph input) becomes another name
//    of the model: the wiring changes;
//  - an element of a repeated field (a node, a dim, an attribute, an input)
//    is dropped or duplicated.
// Inputs that do not parse, and one mutation in four, go to libFuzzer's own
// byte-level mutator.
//
//===----------------------------------------------------------------------===//

#ifndef LSTM_OPT_TEST_FUZZ_MODELMUTATOR_H
#define LSTM_OPT_TEST_FUZZ_MODELMUTATOR_H

#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t maxSize);

namespace lstm_opt::fuzz {

namespace pbr = google::protobuf;

/// A field of one message, and for a repeated field one of its elements
/// (-1: the field as a whole).
struct FieldSite {
  pbr::Message *msg;
  const pbr::FieldDescriptor *field;
  int index;
};

/// Every mutable site of \p m and its sub-messages, down to \p depth levels.
inline void collectSites(pbr::Message *m, int depth,
                         std::vector<FieldSite> &numbers,
                         std::vector<FieldSite> &names,
                         std::vector<FieldSite> &repeated,
                         std::vector<std::string> &pool) {
  const pbr::Reflection *r = m->GetReflection();
  std::vector<const pbr::FieldDescriptor *> fields;
  r->ListFields(*m, &fields);
  for (const pbr::FieldDescriptor *f : fields) {
    using FD = pbr::FieldDescriptor;
    bool rep = f->is_repeated();
    int n = rep ? r->FieldSize(*m, f) : 1;
    if (rep && n)
      repeated.push_back({m, f, -1});
    for (int i = 0; i < n; ++i) {
      int idx = rep ? i : -1;
      switch (f->cpp_type()) {
      case FD::CPPTYPE_INT32:
      case FD::CPPTYPE_INT64:
      case FD::CPPTYPE_UINT32:
      case FD::CPPTYPE_UINT64:
      case FD::CPPTYPE_ENUM:
        numbers.push_back({m, f, idx});
        break;
      case FD::CPPTYPE_STRING:
        if (f->type() == FD::TYPE_STRING) { // names, not raw bytes
          names.push_back({m, f, idx});
          pool.push_back(rep ? r->GetRepeatedString(*m, f, i)
                             : r->GetString(*m, f));
        }
        break;
      case FD::CPPTYPE_MESSAGE:
        if (depth > 0)
          collectSites(rep ? r->MutableRepeatedMessage(m, f, i)
                           : r->MutableMessage(m, f),
                       depth - 1, numbers, names, repeated, pool);
        break;
      default:
        break;
      }
    }
  }
}

inline int64_t interestingInt(std::mt19937_64 &rng, int64_t old) {
  static const int64_t kValues[] = {0,
                                    1,
                                    -1,
                                    2,
                                    3,
                                    4,
                                    7,
                                    16,
                                    255,
                                    256,
                                    65536,
                                    INT32_MAX,
                                    int64_t(1) << 31,
                                    int64_t(1) << 32,
                                    INT32_MIN,
                                    int64_t(1) << 40,
                                    int64_t(1) << 62,
                                    INT64_MAX,
                                    INT64_MIN,
                                    INT64_MIN + 1};
  // Wrapping arithmetic on purpose (unsigned: no overflow in the mutator).
  switch (rng() % 4) {
  case 0:
    return int64_t(uint64_t(old) + rng() % 5 - 2);
  case 1:
    return int64_t(uint64_t(old) * 2);
  default:
    return kValues[rng() % (sizeof(kValues) / sizeof(kValues[0]))];
  }
}

inline void setNumber(const FieldSite &s, int64_t v) {
  using FD = pbr::FieldDescriptor;
  const pbr::Reflection *r = s.msg->GetReflection();
  bool rep = s.index >= 0;
  switch (s.field->cpp_type()) {
  case FD::CPPTYPE_INT32:
    rep ? r->SetRepeatedInt32(s.msg, s.field, s.index, int32_t(v))
        : r->SetInt32(s.msg, s.field, int32_t(v));
    break;
  case FD::CPPTYPE_INT64:
    rep ? r->SetRepeatedInt64(s.msg, s.field, s.index, v)
        : r->SetInt64(s.msg, s.field, v);
    break;
  case FD::CPPTYPE_UINT32:
    rep ? r->SetRepeatedUInt32(s.msg, s.field, s.index, uint32_t(v))
        : r->SetUInt32(s.msg, s.field, uint32_t(v));
    break;
  case FD::CPPTYPE_UINT64:
    rep ? r->SetRepeatedUInt64(s.msg, s.field, s.index, uint64_t(v))
        : r->SetUInt64(s.msg, s.field, uint64_t(v));
    break;
  case FD::CPPTYPE_ENUM:
    // Proto3-style open enums keep unknown values; ONNX's are proto2
    // (closed), so stay within the declared ones.
    {
      const pbr::EnumDescriptor *e = s.field->enum_type();
      const pbr::EnumValueDescriptor *value =
          e->value(int(uint64_t(v) % uint64_t(e->value_count())));
      rep ? r->SetRepeatedEnum(s.msg, s.field, s.index, value)
          : r->SetEnum(s.msg, s.field, value);
    }
    break;
  default:
    break;
  }
}

inline int64_t getNumber(const FieldSite &s) {
  using FD = pbr::FieldDescriptor;
  const pbr::Reflection *r = s.msg->GetReflection();
  bool rep = s.index >= 0;
  switch (s.field->cpp_type()) {
  case FD::CPPTYPE_INT32:
    return rep ? r->GetRepeatedInt32(*s.msg, s.field, s.index)
               : r->GetInt32(*s.msg, s.field);
  case FD::CPPTYPE_INT64:
    return rep ? r->GetRepeatedInt64(*s.msg, s.field, s.index)
               : r->GetInt64(*s.msg, s.field);
  case FD::CPPTYPE_UINT32:
    return rep ? r->GetRepeatedUInt32(*s.msg, s.field, s.index)
               : r->GetUInt32(*s.msg, s.field);
  case FD::CPPTYPE_UINT64:
    return int64_t(rep ? r->GetRepeatedUInt64(*s.msg, s.field, s.index)
                       : r->GetUInt64(*s.msg, s.field));
  case FD::CPPTYPE_ENUM:
    return rep ? r->GetRepeatedEnumValue(*s.msg, s.field, s.index)
               : r->GetEnumValue(*s.msg, s.field);
  default:
    return 0;
  }
}

/// One structural mutation of \p m; false if it had nothing to change.
inline bool mutateOnce(pbr::Message &m, std::mt19937_64 &rng) {
  std::vector<FieldSite> numbers, names, repeated;
  std::vector<std::string> pool;
  collectSites(&m, /*depth=*/12, numbers, names, repeated, pool);
  for (int tries = 0; tries < 4; ++tries) {
    switch (rng() % 4) {
    case 0:
    case 1:
      if (!numbers.empty()) {
        const FieldSite &s = numbers[rng() % numbers.size()];
        setNumber(s, interestingInt(rng, getNumber(s)));
        return true;
      }
      break;
    case 2:
      if (!names.empty() && !pool.empty()) {
        const FieldSite &s = names[rng() % names.size()];
        const std::string &v = pool[rng() % pool.size()];
        const pbr::Reflection *r = s.msg->GetReflection();
        s.index >= 0 ? r->SetRepeatedString(s.msg, s.field, s.index, v)
                     : r->SetString(s.msg, s.field, v);
        return true;
      }
      break;
    default:
      if (!repeated.empty()) {
        const FieldSite &s = repeated[rng() % repeated.size()];
        const pbr::Reflection *r = s.msg->GetReflection();
        int n = r->FieldSize(*s.msg, s.field);
        int i = int(rng() % n);
        if (rng() % 2) { // drop element i
          r->SwapElements(s.msg, s.field, i, n - 1);
          r->RemoveLast(s.msg, s.field);
        } else if (s.field->cpp_type() ==
                   pbr::FieldDescriptor::CPPTYPE_MESSAGE) {
          if (n < 4096)
            r->AddMessage(s.msg, s.field)
                ->CopyFrom(r->GetRepeatedMessage(*s.msg, s.field, i));
        } else if (s.field->cpp_type() ==
                       pbr::FieldDescriptor::CPPTYPE_INT64 &&
                   n < 64) {
          r->AddInt64(s.msg, s.field,
                      r->GetRepeatedInt64(*s.msg, s.field, i));
        }
        return true;
      }
      break;
    }
  }
  return false;
}

/// libFuzzer's custom mutator for binary ONNX inputs.
inline size_t mutateModel(uint8_t *data, size_t size, size_t maxSize,
                          unsigned seed) {
  std::mt19937_64 rng(seed);
  static const pbr::Message *prototype = [] {
    const pbr::Descriptor *d =
        pbr::DescriptorPool::generated_pool()->FindMessageTypeByName(
            "onnx.ModelProto");
    return d ? pbr::MessageFactory::generated_factory()->GetPrototype(d)
             : nullptr;
  }();
  if (!prototype || rng() % 4 == 0)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::unique_ptr<pbr::Message> model(prototype->New());
  if (!model->ParseFromArray(data, int(size)))
    return LLVMFuzzerMutate(data, size, maxSize);
  int count = 1 + int(rng() % 3);
  for (int i = 0; i < count; ++i)
    mutateOnce(*model, rng);
  std::string out;
  if (!model->SerializeToString(&out) || out.size() > maxSize)
    return LLVMFuzzerMutate(data, size, maxSize);
  std::memcpy(data, out.data(), out.size());
  return out.size();
}

} // namespace lstm_opt::fuzz

#endif // LSTM_OPT_TEST_FUZZ_MODELMUTATOR_H
