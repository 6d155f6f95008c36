// Corpus from documents held in memory.
#include <string>
#include <utility>

#include "core/common/error.hpp"
#include "core/data/corpus.hpp"
#include "core/data/document_split.hpp"
#include "core/data/seeded_random.hpp"

namespace asteria::data {

Corpus Corpus::from_documents(std::vector<std::string> documents, const CorpusOptions& options) {
  const std::string source = "documents";
  detail::check_validation_fraction(options.validation_fraction, source);
  std::erase_if(documents, [](const std::string& document) { return document.empty(); });
  if (documents.empty()) throw InputError(source, "corpus", "expected at least one non-empty document");

  std::size_t bytes = 0;
  for (const std::string& document : documents) bytes += document.size();
  detail::seeded_shuffle(documents, detail::stream_seed(options.seed, detail::kShuffleTag));

  Corpus corpus;
  corpus.documents_ = documents.size();
  auto streams = detail::split_documents(std::move(documents), options.validation_fraction);
  corpus.train_ = std::move(streams.train);
  corpus.validation_ = std::move(streams.validation);
  corpus.description_ = std::to_string(corpus.documents_) +
                        (corpus.documents_ == 1 ? " document" : " documents") + " in memory (" +
                        detail::format_bytes(bytes) + ")";
  return corpus;
}

}  // namespace asteria::data
