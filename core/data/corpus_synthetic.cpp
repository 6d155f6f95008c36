// A seeded synthetic corpus with structure a small language model picks up within a few dozen
// steps.
//
// Generator (a pure function of bytes and seed, through SplitMix64 of the seed):
//  - a fixed lexicon of 48 short lowercase English words;
//  - a first-order Markov chain over words: each word gets three distinct strong successors
//    drawn from the seed, followed with probability 50%, 25% and 15%; the remaining 10% goes to
//    a uniformly drawn word;
//  - sentences start at a uniformly drawn word with its first letter capitalized, hold 3 to 12
//    words (after the third word a sentence ends with probability 1/5) separated by single
//    spaces, and end in ".";
//  - a line holds 2 to 4 sentences joined by " " and ends in "\n"; a document holds 8 to 15
//    lines (about 1 to 2 kB);
//  - documents are generated until the streams (text plus one end-of-document byte per
//    document) hold `bytes` bytes; the last document is cut to fit exactly.
// So the text is printable ASCII and "\n" only; within a word the next byte is determined,
// and word transitions are strongly predictable, which a model learns fast.
#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <utility>

#include "core/common/error.hpp"
#include "core/data/corpus.hpp"
#include "core/data/document_split.hpp"
#include "core/data/seeded_random.hpp"

namespace asteria::data {

namespace {

constexpr std::array<std::string_view, 48> kLexicon = {
    "the",  "a",    "cat",  "dog",  "sat",  "on",   "mat",  "ran",  "to",   "park", "big",  "red",
    "ball", "is",   "was",  "and",  "she",  "he",   "saw",  "bird", "tree", "in",   "old",  "man",
    "ate",  "fish", "fast", "blue", "sky",  "hat",  "with", "sun",  "day",  "we",   "go",   "home",
    "box",  "fox",  "jump", "over", "lazy", "sea",  "boat", "map",  "cup",  "tea",  "hot",  "cold"};
constexpr std::size_t kWords = kLexicon.size();

class SyntheticText {
 public:
  explicit SyntheticText(std::uint64_t seed) : random_(detail::stream_seed(seed, detail::kSyntheticTag)) {
    for (std::size_t word = 0; word < kWords; ++word) {
      auto& successors = strong_successors_[word];
      for (std::size_t k = 0; k < successors.size(); ++k) {
        std::size_t candidate = 0;
        do {
          candidate = draw(kWords);
        } while (candidate == word || std::find(successors.begin(), successors.begin() + k, candidate) !=
                                          successors.begin() + k);
        successors[k] = candidate;
      }
    }
  }

  std::string document() {
    std::string text;
    const std::size_t lines = 8 + draw(8);
    for (std::size_t line = 0; line < lines; ++line) {
      const std::size_t sentences = 2 + draw(3);
      for (std::size_t s = 0; s < sentences; ++s) {
        if (s > 0) text += ' ';
        append_sentence(text);
      }
      text += '\n';
    }
    return text;
  }

 private:
  std::size_t draw(std::size_t bound) { return static_cast<std::size_t>(random_.below(bound)); }

  std::size_t successor(std::size_t word) {
    const std::size_t roll = draw(100);
    if (roll < 50) return strong_successors_[word][0];
    if (roll < 75) return strong_successors_[word][1];
    if (roll < 90) return strong_successors_[word][2];
    return draw(kWords);
  }

  void append_sentence(std::string& text) {
    std::size_t word = draw(kWords);
    const std::size_t first = text.size();
    text += kLexicon[word];
    text[first] = static_cast<char>(text[first] - 'a' + 'A');  // the lexicon is lowercase
    for (int count = 1; count < 12; ++count) {
      if (count >= 3 && draw(5) == 0) break;
      word = successor(word);
      text += ' ';
      text += kLexicon[word];
    }
    text += '.';
  }

  detail::SplitMix64 random_;
  std::array<std::array<std::size_t, 3>, kWords> strong_successors_{};
};

}  // namespace

Corpus Corpus::synthetic(std::size_t bytes, std::uint64_t seed, const CorpusOptions& options) {
  const std::string source = "synthetic corpus";
  detail::check_validation_fraction(options.validation_fraction, source);
  if (bytes < 2) {
    throw InputError(source, "bytes", "expected at least 2 (one text byte and its end-of-document byte), found " +
                                          std::to_string(bytes));
  }
  SyntheticText generator(seed);
  std::vector<std::string> documents;
  std::size_t used = 0;
  while (bytes - used >= 2) {
    std::string document = generator.document();
    if (document.size() + 1 > bytes - used) document.resize(bytes - used - 1);
    used += document.size() + 1;
    documents.push_back(std::move(document));
  }
  detail::seeded_shuffle(documents, detail::stream_seed(options.seed, detail::kShuffleTag));

  Corpus corpus;
  corpus.documents_ = documents.size();
  auto streams = detail::split_documents(std::move(documents), options.validation_fraction);
  corpus.train_ = std::move(streams.train);
  corpus.validation_ = std::move(streams.validation);
  corpus.description_ = "synthetic corpus of " + std::to_string(corpus.documents_) +
                        (corpus.documents_ == 1 ? " document (" : " documents (") + detail::format_bytes(bytes) +
                        ", seed " + std::to_string(seed) + ")";
  return corpus;
}

}  // namespace asteria::data
