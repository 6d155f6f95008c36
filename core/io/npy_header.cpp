#include "core/io/npy_header.hpp"

#include <cctype>
#include <limits>
#include <map>
#include <optional>

#include "core/common/error.hpp"
#include "core/io/npy.hpp"

namespace asteria::io {
namespace {

constexpr std::string_view kExample = "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }";

// A short, printable excerpt of header text for messages.
std::string excerpt(std::string_view text) {
  constexpr std::size_t kMax = 60;
  std::string out;
  for (char c : text.substr(0, kMax)) out += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
  if (text.size() > kMax) out += "...";
  return out;
}

struct Literal {
  enum class Kind { string, other };
  Kind kind = Kind::other;
  std::string text;  // the string's content, or the raw source text of any other literal
};

class DictParser {
 public:
  DictParser(std::string_view text, const std::string& source) : text_(text), source_(source) {}

  std::map<std::string, Literal> parse() {
    skip_space();
    if (!consume('{'))
      fail("header", "expected a Python dict literal such as " + std::string(kExample) + ", found '" +
                         excerpt(text_.substr(pos_)) + "'");
    std::map<std::string, Literal> entries;
    for (;;) {
      skip_space();
      if (consume('}')) break;
      const Literal key = literal();
      if (key.kind != Literal::Kind::string)
        fail("header", "expected a quoted key in the header dict, found '" + excerpt(key.text) + "'");
      skip_space();
      if (!consume(':')) fail("header", "expected ':' after key '" + key.text + "'");
      skip_space();
      Literal value = literal();
      if (value.text.empty() && value.kind == Literal::Kind::other)
        fail("header", "expected a value for key '" + key.text + "'");
      if (!entries.emplace(key.text, std::move(value)).second)
        fail("header", "key '" + key.text + "' appears more than once");
      skip_space();
      if (consume(',')) continue;
      if (consume('}')) break;
      fail("header", "expected ',' or '}' after the value of '" + key.text + "', found '" +
                         excerpt(text_.substr(pos_)) + "'");
    }
    skip_space();
    if (pos_ != text_.size())
      fail("header", "expected only padding after the dict, found '" + excerpt(text_.substr(pos_)) + "'");
    return entries;
  }

 private:
  [[noreturn]] void fail(const std::string& field, const std::string& expectation) const {
    throw InputError(source_, field, expectation);
  }
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool consume(char c) {
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  Literal literal() {
    if (pos_ < text_.size() && (text_[pos_] == '\'' || text_[pos_] == '"')) return {Literal::Kind::string, quoted()};
    // Anything else: capture its raw text up to the next ',' or '}' outside brackets/quotes.
    const std::size_t start = pos_;
    int depth = 0;
    while (pos_ < text_.size()) {
      const char c = text_[pos_];
      if (c == '\'' || c == '"') {
        quoted();
        continue;
      }
      if (c == '(' || c == '[' || c == '{') ++depth;
      if (c == ')' || c == ']' || c == '}') {
        if (depth == 0) break;
        --depth;
      }
      if (c == ',' && depth == 0) break;
      ++pos_;
    }
    if (depth != 0) fail("header", "unbalanced brackets in '" + excerpt(text_.substr(start)) + "'");
    std::string_view raw = text_.substr(start, pos_ - start);
    while (!raw.empty() && std::isspace(static_cast<unsigned char>(raw.back()))) raw.remove_suffix(1);
    return {Literal::Kind::other, std::string(raw)};
  }

  std::string quoted() {
    const char quote = text_[pos_++];
    std::string content;
    while (pos_ < text_.size() && text_[pos_] != quote) {
      if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
      content += text_[pos_++];
    }
    if (pos_ == text_.size()) fail("header", "unterminated string literal");
    ++pos_;
    return content;
  }

  std::string_view text_;
  const std::string& source_;
  std::size_t pos_ = 0;
};

// "(3, 4)", "(3,)", "()", also Python 2's "(3L, 4L)". A parenthesised single value without a
// comma is an int in Python, not a tuple, and is rejected as NumPy does.
std::optional<std::vector<linalg::index>> parse_shape_tuple(std::string_view raw) {
  if (raw.size() < 2 || raw.front() != '(' || raw.back() != ')') return std::nullopt;
  raw = raw.substr(1, raw.size() - 2);
  std::vector<linalg::index> dims;
  bool trailing_comma = false;
  std::size_t pos = 0;
  auto skip = [&] {
    while (pos < raw.size() && std::isspace(static_cast<unsigned char>(raw[pos]))) ++pos;
  };
  skip();
  while (pos < raw.size()) {
    if (!std::isdigit(static_cast<unsigned char>(raw[pos]))) return std::nullopt;
    linalg::index value = 0;
    while (pos < raw.size() && std::isdigit(static_cast<unsigned char>(raw[pos]))) {
      const int digit = raw[pos++] - '0';
      if (value > (std::numeric_limits<linalg::index>::max() - digit) / 10) return std::nullopt;
      value = value * 10 + digit;
    }
    if (pos < raw.size() && raw[pos] == 'L') ++pos;
    dims.push_back(value);
    skip();
    trailing_comma = false;
    if (pos == raw.size()) break;
    if (raw[pos] != ',') return std::nullopt;
    ++pos;
    trailing_comma = true;
    skip();
  }
  if (dims.size() == 1 && !trailing_comma) return std::nullopt;
  return dims;
}

}  // namespace

NpyHeader parse_npy_header(std::string_view text, const std::string& source) {
  std::map<std::string, Literal> entries = DictParser(text, source).parse();
  for (const char* key : {"descr", "fortran_order", "shape"})
    if (!entries.contains(key))
      throw InputError(source, key, "missing from the header dict (expected the keys descr, fortran_order, shape)");
  if (entries.size() != 3)
    for (const auto& [key, value] : entries)
      if (key != "descr" && key != "fortran_order" && key != "shape")
        throw InputError(source, "header",
                         "unexpected key '" + key + "' (expected exactly the keys descr, fortran_order, shape)");

  NpyHeader header;
  const Literal& descr = entries["descr"];
  if (descr.kind != Literal::Kind::string)
    throw InputError(source, "descr",
                     "unsupported dtype " + excerpt(descr.text) + " (expected '<f4' float32 or '<f8' float64)");
  header.descr = descr.text;

  const Literal& order = entries["fortran_order"];
  if (order.kind != Literal::Kind::other || (order.text != "True" && order.text != "False"))
    throw InputError(source, "fortran_order", "expected True or False, found " + excerpt(order.text));
  header.fortran_order = order.text == "True";

  const Literal& shape = entries["shape"];
  std::optional<std::vector<linalg::index>> dims;
  if (shape.kind == Literal::Kind::other) dims = parse_shape_tuple(shape.text);
  if (!dims)
    throw InputError(source, "shape",
                     "expected a tuple of non-negative integers such as (), (3,) or (2, 3), found " +
                         excerpt(shape.text));
  header.shape = std::move(*dims);
  return header;
}

std::string format_npy_header(std::string_view descr, const std::vector<linalg::index>& shape) {
  return "{'descr': '" + std::string(descr) + "', 'fortran_order': False, 'shape': " + format_shape(shape) + ", }";
}

}  // namespace asteria::io
