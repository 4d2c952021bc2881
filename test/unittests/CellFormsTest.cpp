//===- CellFormsTest.cpp - the cell form table and its pattern language ---===//

#include "lstm-opt/Dialect/RNN/Utils/CellForms.h"

#include "llvm/ADT/StringSet.h"

#include <gtest/gtest.h>

using namespace lstm_opt::rnn;

namespace {

using Kind = CellPattern::Kind;

// Every row of the table parses, has a unique name, and binds what its
// family's builder reads.
TEST(CellForms, TableIsWellFormed) {
  llvm::StringSet<> names;
  ASSERT_FALSE(cellForms().empty());
  for (const CellForm &form : cellForms()) {
    SCOPED_TRACE(form.name);
    EXPECT_TRUE(names.insert(form.name).second) << "duplicate name";
    EXPECT_NE(std::string(form.equation), "");
    std::string error;
    auto p = parseCellPattern(form.pattern, error);
    ASSERT_TRUE(p) << error;
    // The names the pattern binds and labels.
    llvm::StringSet<> bound, labels;
    std::vector<const CellPattern *> work = {&*p};
    while (!work.empty()) {
      const CellPattern *q = work.back();
      work.pop_back();
      if (q->isNode() && !q->name.empty())
        labels.insert(q->name);
      else if (!q->isNode() && q->kind != Kind::Same && q->kind != Kind::One)
        bound.insert(q->name);
      for (const CellPattern &o : q->operands)
        work.push_back(&o);
    }
    if (form.family == CellFamily::LSTM) {
      EXPECT_TRUE(labels.contains("ig"));
      // A full form binds f, or is coupled (f = 1 - i) and binds i; a
      // folded first step has no f.
      EXPECT_TRUE(bound.contains("f") || bound.contains("i"));
      if (form.foldedState) {
        EXPECT_FALSE(bound.contains("f"));
      }
      EXPECT_EQ(bound.contains("c"), !form.foldedState);
    } else {
      EXPECT_TRUE(bound.contains("z"));
      EXPECT_TRUE(bound.contains("n"));
      EXPECT_EQ(bound.contains("h"), !form.foldedState);
    }
  }
}

TEST(CellForms, ParsesNestedPatterns) {
  std::string error;
  auto p = parseCellPattern(" Add( Mul@ig(gate:i, act:g) ,Sub(one, =i))", error);
  ASSERT_TRUE(p) << error;
  EXPECT_EQ(p->kind, Kind::Add);
  ASSERT_EQ(p->operands.size(), 2u);
  const CellPattern &mul = p->operands[0];
  EXPECT_EQ(mul.kind, Kind::Mul);
  EXPECT_EQ(mul.name, "ig");
  EXPECT_EQ(mul.operands[0].kind, Kind::Gate);
  EXPECT_EQ(mul.operands[0].name, "i");
  EXPECT_EQ(mul.operands[1].kind, Kind::Act);
  const CellPattern &sub = p->operands[1];
  EXPECT_EQ(sub.kind, Kind::Sub);
  EXPECT_EQ(sub.operands[0].kind, Kind::One);
  EXPECT_EQ(sub.operands[1].kind, Kind::Same);
  EXPECT_EQ(sub.operands[1].name, "i");
}

TEST(CellForms, RejectsMalformedPatterns) {
  struct Case {
    const char *text, *why;
  } cases[] = {
      {"", "unexpected end of pattern"},
      {"gate:f", "the root of a pattern must be Add, Mul or Sub"},
      {"Add(gate:f)", "'Add' needs two operands"},
      {"Add(gate:f, act:g", "'Add' needs ')'"},
      {"Add(gate:f, act:g))", "unexpected ')'"},
      {"Div(gate:f, act:g)", "unknown word 'Div'"},
      {"Mul(gate, act:g)", "'gate' needs ':NAME'"},
      {"Mul(gate:, act:g)", "'gate:' without a name"},
      {"Mul(=, act:g)", "'=' without a name"},
      {"Mul@(act:f, act:g)", "'@' without a label"},
      {"Mul act:f", "'Mul' needs '('"},
  };
  for (const Case &c : cases) {
    std::string error;
    EXPECT_FALSE(parseCellPattern(c.text, error)) << c.text;
    EXPECT_EQ(error, c.why) << c.text;
  }
  // Depth is bounded.
  std::string deep;
  for (int i = 0; i < 40; ++i)
    deep += "Add(one, ";
  deep += "one";
  for (int i = 0; i < 40; ++i)
    deep += ")";
  std::string error;
  EXPECT_FALSE(parseCellPattern(deep, error));
  EXPECT_EQ(error, "pattern nested deeper than 16");
}

} // namespace
