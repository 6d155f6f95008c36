#include "apps/asteria/rank_agreement.hpp"

#include <algorithm>
#include <boost/any.hpp>
#include <cstring>
#include <map>

#include "core/common/error.hpp"
#include "core/common/number_text.hpp"

namespace asteria::cli {
namespace {

namespace po = boost::program_options;

// Option values travel as fp32 words, bit for bit (an all-gather copies): 4 bytes per word.
constexpr std::size_t kValueWords = 32;  // the first 128 bytes of a value, enough to tell them apart

std::string value_text(const po::variable_value& v) {
  const boost::any& any = v.value();
  if (any.empty()) return "(set)";
  if (const auto* s = boost::any_cast<std::string>(&any)) return *s;
  if (const auto* i = boost::any_cast<int>(&any)) return std::to_string(*i);
  if (const auto* d = boost::any_cast<double>(&any)) return exact_number(*d);
  if (const auto* b = boost::any_cast<bool>(&any)) return *b ? "true" : "false";
  if (const auto* list = boost::any_cast<std::vector<std::string>>(&any)) {
    std::string text;
    for (const std::string& s : *list) text += (text.empty() ? "" : " ") + s;
    return text;
  }
  return "(set)";  // a switch
}

float word_of(std::uint32_t bits) {
  float w = 0.0f;
  std::memcpy(&w, &bits, 4);
  return w;
}

std::uint32_t bits_of(float w) {
  std::uint32_t bits = 0;
  std::memcpy(&bits, &w, 4);
  return bits;
}

std::uint32_t digest32(const std::string& text) {
  const std::uint64_t d = fnv1a(std::as_bytes(std::span(text.data(), text.size())));
  return static_cast<std::uint32_t>(d ^ (d >> 32));
}

std::vector<float> all_gather(const RankPlace& place, std::vector<float> mine, const std::string& why) {
  std::vector<float> all(mine.size() * static_cast<std::size_t>(place.ranks));
  const Status s = place.comm->world()
                       .all_gather(platform::CommBuffer::of(mine), platform::CommBuffer::of(all), {{}, why, {}})
                       .status();
  if (!s.ok()) throw NumericalError("data-parallel " + why + " failed: " + s.message());
  return all;
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) text += (i == 0 ? "" : ", ") + std::to_string(ranks[i]);
  return text;
}

// "rank 0 has 'a', ranks 1, 2 have 'b'", values in order of their first rank.
std::string holders_text(const std::vector<std::string>& by_rank) {
  std::vector<std::pair<std::string, std::vector<int>>> groups;
  for (int r = 0; r < static_cast<int>(by_rank.size()); ++r) {
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == by_rank[r]; });
    if (it == groups.end()) groups.push_back({by_rank[r], {r}});
    else it->second.push_back(r);
  }
  std::string text;
  for (const auto& [value, ranks] : groups)
    text += (text.empty() ? "" : ", ") + ranks_text(ranks) + (ranks.size() == 1 ? " has '" : " have '") + value + "'";
  return text;
}

}  // namespace

std::vector<SettingValue> effective_settings(const po::variables_map& values, const po::options_description& options,
                                             std::span<const std::string_view> per_rank) {
  std::vector<SettingValue> out;
  for (const auto& option : options.options()) {
    const std::string& name = option->long_name();
    if (std::find(per_rank.begin(), per_rank.end(), name) != per_rank.end()) continue;
    const auto it = values.find(name);
    out.push_back({name, it == values.end() ? std::string("(unset)") : value_text(it->second)});
  }
  return out;
}

void require_same_settings(const RankPlace& place, std::span<const SettingValue> settings) {
  if (place.comm == nullptr || place.ranks == 1) return;
  // Ranks of different builds may know different options: the names' digest and count first.
  std::string names;
  for (const SettingValue& s : settings) names += s.option + '\n';
  const std::vector<float> shape =
      all_gather(place, {word_of(digest32(names)), word_of(static_cast<std::uint32_t>(settings.size()))},
                 "agreement on the options");
  for (int r = 1; r < place.ranks; ++r)
    if (bits_of(shape[2 * r]) != bits_of(shape[0]) || bits_of(shape[2 * r + 1]) != bits_of(shape[1]))
      throw InputError("command line", "asteria",
                       "the same asteria build on every data-parallel rank: rank " + std::to_string(r) +
                           " knows other options than rank 0");
  std::vector<float> mine;
  for (const SettingValue& s : settings) mine.push_back(word_of(digest32(s.value)));
  const std::vector<float> all = all_gather(place, mine, "agreement on the settings");
  // The first option that differs, seen alike by every rank.
  for (std::size_t k = 0; k < settings.size(); ++k) {
    bool same = true;
    for (int r = 1; r < place.ranks && same; ++r)
      same = bits_of(all[static_cast<std::size_t>(r) * settings.size() + k]) == bits_of(all[k]);
    if (same) continue;
    // Its values, so the message can show them.
    std::vector<float> words(kValueWords, 0.0f);
    const std::string& value = settings[k].value;
    std::memcpy(words.data(), value.data(), std::min(value.size(), kValueWords * 4));
    const std::vector<float> values = all_gather(place, words, "agreement on --" + settings[k].option);
    std::vector<std::string> by_rank;
    for (int r = 0; r < place.ranks; ++r) {
      const char* bytes = reinterpret_cast<const char*>(values.data() + static_cast<std::size_t>(r) * kValueWords);
      by_rank.emplace_back(bytes, strnlen(bytes, kValueWords * 4));
    }
    throw InputError("command line", "--" + settings[k].option,
                     "the same value on every data-parallel rank, found " + holders_text(by_rank));
  }
}

void require_same_value(const RankPlace& place, std::int64_t value, const std::string& source, const std::string& field,
                        const std::string& what) {
  if (place.comm == nullptr || place.ranks == 1) return;
  const auto bits = static_cast<std::uint64_t>(value);
  const std::vector<float> all = all_gather(
      place, {word_of(static_cast<std::uint32_t>(bits)), word_of(static_cast<std::uint32_t>(bits >> 32))},
      "agreement on " + what);
  std::vector<std::string> by_rank;
  bool same = true;
  for (int r = 0; r < place.ranks; ++r) {
    const std::uint64_t v = bits_of(all[2 * static_cast<std::size_t>(r)]) |
                            (static_cast<std::uint64_t>(bits_of(all[2 * static_cast<std::size_t>(r) + 1])) << 32);
    by_rank.push_back(std::to_string(static_cast<std::int64_t>(v)));
    same = same && by_rank.back() == by_rank.front();
  }
  if (!same) throw InputError(source, field, "the same " + what + " on every data-parallel rank, found " + holders_text(by_rank));
}

}  // namespace asteria::cli
