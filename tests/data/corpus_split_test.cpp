// The split of documents into training and validation streams (Corpus::from_documents), checked
// against the rule in corpus.hpp with hand-computed sizes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/data/corpus.hpp"
#include "tests/data/data_test_support.hpp"

namespace asteria::data {
namespace {

using testing::documents_of;
using testing::sorted;

CorpusOptions with(double validation_fraction, std::uint64_t seed = 1) {
  CorpusOptions options;
  options.validation_fraction = validation_fraction;
  options.seed = seed;
  return options;
}

// Ten documents of 100 bytes each: "aaa...", "bbb...", ...
std::vector<std::string> ten_equal_documents() {
  std::vector<std::string> documents;
  for (int i = 0; i < 10; ++i) documents.emplace_back(100, static_cast<char>('a' + i));
  return documents;
}

std::size_t content_bytes(const std::vector<std::string>& documents) {
  std::size_t bytes = 0;
  for (const auto& document : documents) bytes += document.size();
  return bytes;
}

TEST(CorpusSplit, WholeDocumentsUntilTheFractionIsReached) {
  const Corpus corpus = Corpus::from_documents(ten_equal_documents(), with(0.25));
  // 250 of 1000 bytes wanted: two documents hold 200 (< 250), three hold 300.
  EXPECT_EQ(corpus.documents(), 10u);
  EXPECT_EQ(corpus.validation().size(), 3u * 101u);
  EXPECT_EQ(corpus.train().size(), 7u * 101u);
  EXPECT_EQ(corpus.validation().back(), kEndOfDocument);
  EXPECT_EQ(corpus.train().back(), kEndOfDocument);
  // Every document lands whole in exactly one stream, followed by an end-of-document byte.
  std::vector<std::string> all = documents_of(corpus.validation());
  for (const auto& document : documents_of(corpus.train())) all.push_back(document);
  EXPECT_EQ(sorted(all), ten_equal_documents());
}

TEST(CorpusSplit, ValidationIsTheShortestPrefixReachingTheFraction) {
  std::vector<std::string> documents;
  for (int i = 1; i <= 10; ++i) documents.emplace_back(static_cast<std::size_t>(10 * i), static_cast<char>('a' + i));
  const double fraction = 0.2;
  const double wanted = fraction * 550.0;  // 10 + 20 + ... + 100 = 550 bytes
  for (std::uint64_t seed = 1; seed <= 6; ++seed) {
    const Corpus corpus = Corpus::from_documents(documents, with(fraction, seed));
    const std::vector<std::string> validation = documents_of(corpus.validation());
    ASSERT_FALSE(validation.empty());
    const std::size_t held = content_bytes(validation);
    EXPECT_GE(static_cast<double>(held), wanted) << "seed " << seed;
    EXPECT_LT(static_cast<double>(held - validation.back().size()), wanted) << "seed " << seed;
    EXPECT_EQ(held + content_bytes(documents_of(corpus.train())), 550u);
  }
}

TEST(CorpusSplit, TheSeedChoosesTheSplit) {
  const Corpus first = Corpus::from_documents(ten_equal_documents(), with(0.3, 5));
  const Corpus again = Corpus::from_documents(ten_equal_documents(), with(0.3, 5));
  EXPECT_EQ(first.validation(), again.validation());
  EXPECT_EQ(first.train(), again.train());
  // Ten documents, three to validation: 720 ordered choices; eight seeds cannot plausibly agree.
  int different = 0;
  for (std::uint64_t seed = 6; seed < 14; ++seed) {
    if (Corpus::from_documents(ten_equal_documents(), with(0.3, seed)).validation() != first.validation()) ++different;
  }
  EXPECT_GE(different, 1);
}

TEST(CorpusSplit, SingleDocumentIsCutAtTheFraction) {
  std::string document;
  for (int i = 0; i < 1000; ++i) document.push_back(static_cast<char>(1 + i % 200));
  const Corpus corpus = Corpus::from_documents({document}, with(0.1));
  EXPECT_EQ(corpus.documents(), 1u);
  // First ceil(0.1 * 1000) = 100 bytes to validation, the other 900 to training.
  std::vector<std::uint8_t> validation(document.begin(), document.begin() + 100);
  validation.push_back(kEndOfDocument);
  std::vector<std::uint8_t> train(document.begin() + 100, document.end());
  train.push_back(kEndOfDocument);
  EXPECT_EQ(corpus.validation(), validation);
  EXPECT_EQ(corpus.train(), train);
}

TEST(CorpusSplit, ZeroFractionLeavesValidationEmpty) {
  const Corpus many = Corpus::from_documents(ten_equal_documents(), with(0.0));
  EXPECT_TRUE(many.validation().empty());
  EXPECT_EQ(many.train().size(), 1010u);
  const Corpus one = Corpus::from_documents({"hello"}, with(0.0));
  EXPECT_TRUE(one.validation().empty());
  EXPECT_EQ(one.train(), (std::vector<std::uint8_t>{'h', 'e', 'l', 'l', 'o', 0}));
}

TEST(CorpusSplit, TrainingKeepsAtLeastOneDocument) {
  // Validation takes the first document in seeded order; whichever it is, the other stays.
  const std::vector<std::string> documents = {std::string(1000, 'x'), std::string(10, 'y')};
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const Corpus corpus = Corpus::from_documents(documents, with(0.9, seed));
    EXPECT_EQ(documents_of(corpus.validation()).size(), 1u) << "seed " << seed;
    EXPECT_EQ(documents_of(corpus.train()).size(), 1u) << "seed " << seed;
  }
}

TEST(CorpusSplit, EmptyDocumentsAreIgnored) {
  const Corpus corpus = Corpus::from_documents({"abc", "", "de"}, with(0.0));
  EXPECT_EQ(corpus.documents(), 2u);
  EXPECT_EQ(corpus.train().size(), 3u + 1u + 2u + 1u);
  EXPECT_THROW(Corpus::from_documents({"", ""}, with(0.1)), InputError);
  EXPECT_THROW(Corpus::from_documents({}, with(0.1)), InputError);
}

TEST(CorpusSplit, RejectsFractionsOutsideZeroToOne) {
  for (const double fraction : {1.0, -0.1, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    try {
      Corpus::from_documents(ten_equal_documents(), with(fraction));
      FAIL() << "validation_fraction " << fraction << " was accepted";
    } catch (const InputError& error) {
      EXPECT_EQ(error.field(), "validation_fraction");
    }
  }
}

}  // namespace
}  // namespace asteria::data
