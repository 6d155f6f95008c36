// Corpus::synthetic: seeded, the requested size, plain text, and the word-level structure
// (small lexicon, strongly predictable transitions) that makes it quick to learn.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/common/error.hpp"
#include "core/data/corpus.hpp"

namespace asteria::data {
namespace {

std::string text_of(const std::vector<std::uint8_t>& stream) { return std::string(stream.begin(), stream.end()); }

TEST(SyntheticCorpus, IsAPureFunctionOfSizeAndSeed) {
  const Corpus a = Corpus::synthetic(50'000, 7);
  const Corpus b = Corpus::synthetic(50'000, 7);
  EXPECT_EQ(a.train(), b.train());
  EXPECT_EQ(a.validation(), b.validation());
  const Corpus c = Corpus::synthetic(50'000, 8);
  EXPECT_NE(a.train(), c.train());
}

TEST(SyntheticCorpus, HasTheRequestedSize) {
  for (const std::size_t bytes : {2'000UL, 100'000UL, 1'000'003UL}) {
    const Corpus corpus = Corpus::synthetic(bytes, 1);
    const std::size_t size = corpus.train().size() + corpus.validation().size();
    EXPECT_GE(static_cast<double>(size), 0.95 * static_cast<double>(bytes));
    EXPECT_LE(static_cast<double>(size), 1.05 * static_cast<double>(bytes));
  }
  EXPECT_THROW(Corpus::synthetic(1, 1), InputError);
}

TEST(SyntheticCorpus, IsPrintableAsciiWithNewlinesAndDocumentEnds) {
  const Corpus corpus = Corpus::synthetic(100'000, 3);
  for (const auto* stream : {&corpus.train(), &corpus.validation()}) {
    for (const std::uint8_t byte : *stream) {
      const bool printable = byte >= 0x20 && byte <= 0x7E;
      ASSERT_TRUE(printable || byte == '\n' || byte == kEndOfDocument) << "byte " << int(byte);
    }
  }
  EXPECT_GT(corpus.documents(), 10u);
  // Default options: about a tenth of the documents' bytes for validation.
  EXPECT_GE(static_cast<double>(corpus.validation().size()), 0.1 * 100'000 * 0.99);
}

TEST(SyntheticCorpus, WordsComeFromASmallLexiconWithPredictableSuccessors) {
  CorpusOptions all_training;
  all_training.validation_fraction = 0.0;
  const std::string text = text_of(Corpus::synthetic(200'000, 11, all_training).train());
  // Count word bigrams inside sentences (a sentence ends at '.', words are split by spaces).
  std::map<std::string, std::map<std::string, int>> successors;
  std::map<std::string, int> words;
  std::string word;
  std::string previous;
  int capitalized_sentence_starts = 0;
  int sentences = 0;
  for (const char c : text) {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      word.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
      if (previous.empty() && word.size() == 1) {
        ++sentences;
        if (std::isupper(static_cast<unsigned char>(c))) ++capitalized_sentence_starts;
      }
      continue;
    }
    if (!word.empty()) {
      ++words[word];
      if (!previous.empty()) ++successors[previous][word];
      previous = word;
      word.clear();
    }
    if (c == '.' || c == '\0') previous.clear();
  }
  EXPECT_GE(words.size(), 20u);
  EXPECT_LE(words.size(), 64u);
  EXPECT_GT(capitalized_sentence_starts, sentences * 9 / 10);
  // A uniform choice among ~50 words would give each word's favourite successor about a 2-5%
  // share; the chain's strongest transition has half the mass.
  double share_sum = 0.0;
  int counted = 0;
  for (const auto& [from, to] : successors) {
    int total = 0;
    int best = 0;
    for (const auto& [next, count] : to) {
      total += count;
      best = std::max(best, count);
    }
    if (total < 100) continue;
    share_sum += static_cast<double>(best) / total;
    ++counted;
  }
  ASSERT_GE(counted, 20);
  EXPECT_GT(share_sum / counted, 0.4);
}

}  // namespace
}  // namespace asteria::data
