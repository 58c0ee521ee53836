#include "cli/input/input.hpp"

#include "cli/input/budget.hpp"
#include "cli/input/input_files.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "cli/input/printable.hpp"
#include "cli/input/utf8.hpp"
#include "cli/input/yaml_shape.hpp"
#include "models/units.hpp"

namespace stepsim::cli {

// "a.b.c" -> a, b, c; an empty part stays (a trailing dot gives a last empty part, "job.steps."
// was read as job.steps), for the caller to refuse.
std::vector<std::string> split_dots(const std::string& key) {
  std::vector<std::string> parts;
  std::size_t from = 0;
  for (;;) {
    const std::size_t dot = key.find('.', from);
    parts.push_back(key.substr(from, dot == std::string::npos ? std::string::npos : dot - from));
    if (dot == std::string::npos) return parts;
    from = dot + 1;
  }
}

YAML::Node laid_over(const YAML::Node& base, const YAML::Node& over, YAML::Node* arena,
                     const std::vector<std::string>& skip) {
  if (!base.IsMap() || !over.IsMap() || over["file"]) return over;
  YAML::Node out(YAML::NodeType::Map);
  if (arena) arena->push_back(out);  // made in the arena's memory: nothing below merges the document again
  const auto skipped = [&](const std::string& k) { return std::find(skip.begin(), skip.end(), k) != skip.end(); };
  // A preset over a hardware file replaces the file (each names the whole card), keeping gpus.
  const bool preset_over_file = over["preset"] && base["file"];
  for (const auto& kv : base)
    if (!skipped(kv.first.Scalar()) && !(preset_over_file && kv.first.Scalar() == "file"))
      out[kv.first.Scalar()] = kv.second;
  for (const auto& kv : over) {
    const std::string& k = kv.first.Scalar();
    const YAML::Node under = base[k];
    out[k] = under && !skipped(k) ? laid_over(under, kv.second, arena) : kv.second;
  }
  return out;
}

InputError::InputError(std::string file, int line, std::string key, const std::string& message)
    : std::runtime_error(printable(fmt::format("{}{}: {}{}", file, line > 0 ? fmt::format(":{}", line) : std::string(),
                                               key.empty() ? std::string() : key + ": ", message))),
      file_(std::move(file)),
      line_(line),
      key_(std::move(key)),
      message_(message) {}

namespace {
// The value of key `k` in `map`, or an undefined node, without yaml-cpp's lookup: that names a
// missing key through a std::stringstream (a locale, and its shared count, per call).
YAML::Node value_of(const YAML::Node& map, const std::string& k) {
  for (const auto& kv : map)
    if (kv.first.IsScalar() && kv.first.Scalar() == k) return kv.second;
  return YAML::Node(YAML::NodeType::Undefined);
}

int line_of(const YAML::Node& n) {
  const auto mark = n.Mark();
  return mark.line >= 0 ? mark.line + 1 : 0;
}

// Sets root[a][b][c] = value, creating maps on the way.
void set_path(YAML::Node root, const std::vector<std::string>& parts, const YAML::Node& value) {
  YAML::Node cur = root;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node next = cur[parts[i]];
    if (!next.IsMap()) {
      next = YAML::Node(YAML::NodeType::Map);
      cur[parts[i]] = next;
    }
    cur.reset(next);
  }
  cur[parts.back()] = value;
}
}  // namespace

std::shared_ptr<Source> Source::parse(const std::string& text, const std::string& name,
                                      const std::vector<std::string>& overrides) {
  auto src = std::make_shared<Source>();
  src->file = name;
  check_yaml_shape(text, name);  // before loading: its size bounds the loader's memory
  try {
    src->root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InputError(name, e.mark.line + 1, "", fmt::format("not valid YAML: {}", e.msg));
  }
  if (src->root.IsNull()) src->root = YAML::Node(YAML::NodeType::Map);
  if (!src->root.IsMap()) throw InputError(name, line_of(src->root), "", "a scenario is a YAML map of keys");
  apply_overrides(*src, overrides);
  return src;
}

namespace {
// This thread's own copy of `root`, made once. yaml-cpp does not promise that concurrent reads
// of one node are safe, so each thread copies from its own: one lock around every copy kept a
// suite's variants from being read on more than one core.
const YAML::Node& thread_copy(const YAML::Node& root) {
  struct Copy {
    YAML::Node of, copy;  // `of` keeps the original alive, so its identity is not reused
  };
  thread_local std::optional<Copy> own;
  if (!own || !own->of.is(root)) {
    static std::mutex clone_lock;
    std::lock_guard lock(clone_lock);
    own.emplace();
    own->of.reset(root);
    own->copy.reset(YAML::Clone(root));
  }
  return own->copy;
}
}  // namespace

std::shared_ptr<Source> Source::from_root(const YAML::Node& root, const std::string& name,
                                          const std::vector<std::string>& overrides) {
  auto src = std::make_shared<Source>();
  src->file = name;
  src->root = YAML::Clone(thread_copy(root));
  if (src->root.IsNull()) src->root = YAML::Node(YAML::NodeType::Map);
  if (!src->root.IsMap()) throw InputError(name, line_of(src->root), "", "a scenario is a YAML map of keys");
  apply_overrides(*src, overrides);
  return src;
}

bool is_plain_word(std::string_view text) {
  if (text.empty() || text.size() > 64) return false;
  const auto alnum = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  // A sign or a dot only before a digit ("-1", ".5"): "-" alone, "---", "..." and ".inf" are
  // YAML's own, and go through the parser.
  if (!alnum(text[0]) &&
      !(text.size() > 1 && (text[0] == '-' || text[0] == '+' || text[0] == '.') && text[1] >= '0' && text[1] <= '9'))
    return false;
  for (const char c : text)
    if (!alnum(c) && c != '.' && c != '_' && c != '-' && c != '+') return false;
  return text != "null" && text != "Null" && text != "NULL";
}

void Source::apply_overrides(Source& source, const std::vector<std::string>& overrides) {
  Source* src = &source;
  for (const auto& ov : overrides) {
    const auto eq = ov.find('=');
    if (eq == std::string::npos || eq == 0) throw InputError("--set", 0, ov, "expected key.path=value");
    const std::string key = ov.substr(0, eq);
    if (const std::size_t at = invalid_utf8_at(ov); at != std::string_view::npos)
      throw InputError("--set", 0, at < eq ? "" : key,
                       fmt::format("not UTF-8 (byte 0x{:02X})", static_cast<unsigned char>(ov[at])));
    YAML::Node value;
    const std::string text = ov.substr(eq + 1);
    if (is_plain_word(text)) {
      value = YAML::Node(text);
    } else {
      try {
        value = YAML::Load(text);
      } catch (const YAML::Exception& e) {
        throw InputError("--set", 0, key, fmt::format("value is not valid YAML: {}", e.msg));
      }
      check_yaml_shape(text, "--set", key);
    }
    auto parts = split_dots(key);
    if (std::any_of(parts.begin(), parts.end(), [](const std::string& p) { return p.empty(); }))
      throw InputError("--set", 0, key, "empty part in key path");
    set_path(src->root, parts, value);
    src->overridden.insert(key);
  }
}

namespace {
// The system's message for `error`, starting lower-case to read inside ours.
std::string reason_of(int error) {
  std::string text = std::system_category().message(error);
  if (!text.empty() && text[0] >= 'A' && text[0] <= 'Z' && !(text.size() > 1 && text[1] >= 'A' && text[1] <= 'Z'))
    text[0] = static_cast<char>(text[0] - 'A' + 'a');
  return text;
}
}  // namespace

std::string input_file_problem(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec) return reason_of(ec.value() ? ec.value() : ENOENT);
  if (std::filesystem::is_directory(status)) return "is a directory";
  // A device or a pipe could be endless or never end (/dev/zero, a FIFO with no writer).
  if (!std::filesystem::is_regular_file(status)) return "is not a regular file (a device or a pipe)";
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return reason_of(errno ? errno : EACCES);
  return "";
}

void require_input_file(const std::string& path) {
  const std::string why = input_file_problem(path);
  if (why == "is a directory") throw InputError(path, 0, "", "is a directory, not a file");
  if (why.rfind("is ", 0) == 0) throw InputError(path, 0, "", why);  // a device or a pipe
  if (!why.empty()) throw InputError(path, 0, "", fmt::format("cannot open the file ({})", why));
}

std::string Source::overflow_key(const std::string& section) const {
  std::vector<std::string> in_section;
  for (const auto& k : overridden)
    if (k.starts_with(section + ".")) in_section.push_back(k);
  if (in_section.size() == 1) return in_section.front();
  if (in_section.empty() && overridden.size() == 1) return *overridden.begin();
  return section;
}

std::shared_ptr<Source> Source::load(const std::string& file, const std::vector<std::string>& overrides) {
  const std::string text = read_input_file(file);
  // An empty file is not a document with no sections: say so.
  if (text.empty()) throw InputError(file, 0, "", "is empty (expected a YAML map of keys)");
  return parse(text, file, overrides);
}

std::string nearest(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  std::size_t best_d = std::max<std::size_t>(2, word.size() / 3) + 1;
  for (const auto& c : candidates) {
    std::vector<std::size_t> prev(c.size() + 1), cur(c.size() + 1);
    for (std::size_t j = 0; j <= c.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= word.size(); ++i) {
      cur[0] = i;
      for (std::size_t j = 1; j <= c.size(); ++j)
        cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (word[i - 1] == c[j - 1] ? 0 : 1)});
      std::swap(prev, cur);
    }
    if (prev[c.size()] < best_d) {
      best_d = prev[c.size()];
      best = c;
    }
  }
  return best;
}

Reader::Reader(std::shared_ptr<const Source> src, YAML::Node node, std::string path)
    : src_(std::move(src)), node_(std::move(node)), path_(std::move(path)) {
  // The map's entries, read once: every lookup walking the map made two node handles per key,
  // each a reference count changed, atomically once the process has a second thread (the bench
  // suite's workers): reading a variant cost 2-3x as much there.
  if (node_.IsMap())
    for (const auto& kv : node_)
      if (kv.first.IsScalar()) entries_.emplace_back(kv.first.Scalar(), kv.second);
}

void Reader::fail_at(const YAML::Node& at, const std::string& full_key, const std::string& message) const {
  // A key set with --set has no line in the file: say where it came from instead. So is a map
  // that --set made on the way to a deeper key (`--set a.b.c=1` where a.b was a number): it has
  // no mark in the file.
  // A key missing from such a map (`--set job.steps=10` made the whole job section) is --set's too.
  const bool made_by_set = at && at.Mark().is_null();
  const auto dot = full_key.rfind('.');
  const std::string parent = dot == std::string::npos ? std::string() : full_key.substr(0, dot + 1);
  for (const auto& ov : src_->overridden)
    if (full_key == ov || full_key.rfind(ov + ".", 0) == 0 || full_key.rfind(ov + "[", 0) == 0 ||
        (made_by_set && (ov.rfind(full_key + ".", 0) == 0 || (!parent.empty() && ov.rfind(parent, 0) == 0))))
      throw InputError("--set", 0, full_key, message);
  throw InputError(src_->file, at ? line_of(at) : line_of(node_), full_key, message);
}

void Reader::fail_dotted(const std::string& dotted_key, const std::string& message) const {
  YAML::Node node = node_, deepest = node_;
  std::size_t start = 0;
  while (start <= dotted_key.size()) {
    const auto dot = dotted_key.find('.', start);
    const std::string part = dotted_key.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    if (!node.IsMap()) break;
    YAML::Node next = value_of(node, part);
    if (!next.IsDefined()) break;
    node.reset(next);
    deepest.reset(next);
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  fail_at(deepest, key(dotted_key), message);
}

void Reader::fail(const std::string& k, const std::string& message) const {
  const YAML::Node n = get(k);
  // A key with nothing after it (`model:`): yaml-cpp marks its null at the next token, a line on;
  // the key's own mark is where it stands.
  if (n && n.IsNull() && node_.IsMap())
    for (const auto& kv : node_)
      if (kv.first.IsScalar() && kv.first.Scalar() == k) fail_at(kv.first, key(k), message);
  fail_at(n ? n : node_, key(k), message);
}

YAML::Node Reader::get(const std::string& k) const {
  if (!node_.IsMap()) return YAML::Node();
  for (const auto& [name, value] : entries_)
    if (name == k) return value;
  return YAML::Node(YAML::NodeType::Undefined);
}

bool Reader::has(const std::string& k) const {
  const YAML::Node n = get(k);
  return n.IsDefined() && !n.IsNull();
}

std::string Reader::key_name(const YAML::Node& k) const {
  if (!k.IsScalar()) fail_at(k, key("?"), "a key must be a name, not a map or a list");
  return k.Scalar();
}

std::vector<std::string> Reader::keys() const {
  std::vector<std::string> out;
  if (node_.IsMap())
    for (const auto& kv : node_) out.push_back(key_name(kv.first));
  return out;
}

Reader Reader::child(const std::string& k) const {
  const YAML::Node n = get(k);
  if (!n.IsDefined() || n.IsNull()) fail_at(node_, key(k), "missing section");
  if (!n.IsMap()) fail_at(n, key(k), "expected a map of keys");
  return Reader(src_, n, key(k));
}

void Reader::only(const std::vector<std::string>& allowed, const std::vector<Synonym>& synonyms) const {
  if (!node_.IsMap()) return;
  for (const auto& kv : node_) {
    const auto k = key_name(kv.first);
    if (std::find(allowed.begin(), allowed.end(), k) != allowed.end()) continue;
    for (const auto& [word, here] : synonyms)
      if (k == word) fail_at(kv.first, key(k), fmt::format("unknown key; this section calls it '{}'", here));
    const auto near = nearest(k, allowed);
    fail_at(kv.first, key(k),
            near.empty() ? fmt::format("unknown key (known here: {})", fmt::join(allowed, ", "))
                         : fmt::format("unknown key; did you mean '{}'?", near));
  }
}

std::string Reader::scalar(const YAML::Node& n, const std::string& full_key, const char* what) const {
  if (!n.IsScalar()) fail_at(n, full_key, fmt::format("expected {}", what));
  return n.Scalar();
}

std::string Reader::text(const std::string& k) const {
  auto v = opt_text(k);
  if (!v) fail_at(node_, key(k), "missing (required)");
  return *v;
}

std::optional<std::string> Reader::opt_text(const std::string& k) const {
  if (!has(k)) return std::nullopt;
  return scalar(get(k), key(k), "a string");
}

std::optional<std::int64_t> whole_number(std::string_view text, std::int64_t min, std::int64_t max,
                                         std::string& error) {
  using Problem = ParsedWhole::Problem;
  const ParsedWhole w = parse_whole(text);
  if (w.problem == Problem::Both)
    error = fmt::format("'{}' is not a whole number (an exponent or a suffix K, M, B, T, not both)", text);
  else if (w.problem == Problem::NotWhole)
    error = fmt::format("'{}' is not a whole number", text);
  else if (w.problem == Problem::Suffix)
    error = fmt::format("'{}' is not a whole number (a count's suffixes are K, M, B and T, in capitals)", text);
  else if (w.problem == Problem::OutOfRange || w.value > max)
    error = fmt::format("'{}' is too large (at most {})", text, max);
  else if (w.value < min)
    error = fmt::format("must be at least {} (got {})", min, w.value);
  else
    return w.value;
  return std::nullopt;
}

std::optional<std::int64_t> Reader::opt_integer(const std::string& k, std::int64_t min, std::int64_t max) const {
  if (!has(k)) return std::nullopt;
  const YAML::Node n = get(k);
  std::string error;
  const auto v = whole_number(scalar(n, key(k), "a whole number"), min, max, error);
  if (!v) fail_at(n, key(k), error);
  return v;
}

std::int64_t Reader::integer(const std::string& k, std::int64_t min, std::int64_t max) const {
  auto v = opt_integer(k, min, max);
  if (!v) fail_at(node_, key(k), "missing (required)");
  return *v;
}

std::optional<int> Reader::opt_count(const std::string& k, int min) const {
  const auto v = opt_integer(k, min, kMaxCount);
  if (!v) return std::nullopt;
  return static_cast<int>(*v);
}

int Reader::count(const std::string& k, int min) const { return static_cast<int>(integer(k, min, kMaxCount)); }

std::optional<double> Reader::opt_number(const std::string& k) const {
  if (!has(k)) return std::nullopt;
  const YAML::Node n = get(k);
  const std::string s = scalar(n, key(k), "a number");
  std::size_t used = 0;
  double v = 0;
  bool out_of_range = false;
  try {
    v = std::stod(s, &used);
  } catch (const std::out_of_range&) { out_of_range = true; } catch (...) {
    used = 0;
  }
  // 1e400 overflows; 1e-400 underflows (stod calls both out of range): neither is a usable input.
  if (out_of_range) fail_at(n, key(k), fmt::format("'{}' is out of range for a number", s));
  if (used > 0 && used + 1 == s.size() && s.back() == '%') {  // a percentage: "40%"
    v /= 100.0;
  } else if (used == 0 || used != s.size()) {
    fail_at(n, key(k), fmt::format("'{}' is not a number", s));
  }
  if (!std::isfinite(v)) fail_at(n, key(k), fmt::format("'{}' is not a finite number", s));
  return v;
}

double Reader::number(const std::string& k) const {
  auto v = opt_number(k);
  if (!v) fail_at(node_, key(k), "missing (required)");
  return *v;
}

bool Reader::flag(const std::string& k, bool fallback) const {
  if (!has(k)) return fallback;
  const YAML::Node n = get(k);
  const std::string s = scalar(n, key(k), "true or false");
  if (s == "true" || s == "yes" || s == "on") return true;
  if (s == "false" || s == "no" || s == "off") return false;
  fail_at(n, key(k), fmt::format("'{}' is not true or false", s));
}

Time Reader::duration_of(const YAML::Node& n, const std::string& full_key) const {
  const std::string s = scalar(n, full_key, "a duration like 10ms");
  std::string err;
  auto v = parse_duration(s, &err);
  if (!v) fail_at(n, full_key, err);
  if (*v < 0) fail_at(n, full_key, fmt::format("'{}' is negative", s));
  // A positive amount under half a nanosecond would read as 0 and be refused as not positive.
  if (*v == 0 && std::strtod(s.c_str(), nullptr) > 0)
    fail_at(n, full_key, fmt::format("'{}' is under a nanosecond, the simulated time's step", s));
  return *v;
}

Bytes Reader::bytes_of(const YAML::Node& n, const std::string& full_key) const {
  const std::string s = scalar(n, full_key, "a size like 230MiB");
  std::string err;
  auto v = parse_bytes(s, &err);
  if (!v) fail_at(n, full_key, err);
  if (*v < 0) fail_at(n, full_key, fmt::format("'{}' is negative", s));
  return *v;
}

std::optional<Time> Reader::opt_duration(const std::string& k) const {
  if (!has(k)) return std::nullopt;
  return duration_of(get(k), key(k));
}

Time Reader::duration(const std::string& k) const {
  auto v = opt_duration(k);
  if (!v) fail_at(node_, key(k), "missing (required)");
  return *v;
}

std::optional<Bytes> Reader::opt_bytes(const std::string& k) const {
  if (!has(k)) return std::nullopt;
  return bytes_of(get(k), key(k));
}

Bytes Reader::bytes(const std::string& k) const {
  auto v = opt_bytes(k);
  if (!v) fail_at(node_, key(k), "missing (required)");
  return *v;
}

std::optional<std::int64_t> Reader::opt_bandwidth(const std::string& k) const {
  if (!has(k)) return std::nullopt;
  const YAML::Node n = get(k);
  const std::string s = scalar(n, key(k), "a bandwidth like 32GB/s");
  std::string err;
  auto v = parse_bandwidth(s, &err);
  if (!v) fail_at(n, key(k), err);
  if (*v <= 0) fail_at(n, key(k), fmt::format("'{}' must be positive", s));
  return *v;
}

std::int64_t Reader::bandwidth(const std::string& k) const {
  auto v = opt_bandwidth(k);
  if (!v) fail_at(node_, key(k), "missing (required)");
  return *v;
}

std::vector<Time> Reader::durations(const std::string& k, int n) const {
  if (!has(k)) return {};
  const YAML::Node node = get(k);
  if (node.IsSequence()) {
    if (static_cast<int>(node.size()) != n)
      fail_at(node, key(k), fmt::format("per-stage list has {} values, expected {} (one per stage)", node.size(), n));
    std::vector<Time> out;
    for (std::size_t i = 0; i < node.size(); ++i) out.push_back(duration_of(node[i], fmt::format("{}[{}]", key(k), i)));
    return out;
  }
  return std::vector<Time>(n, duration_of(node, key(k)));
}

std::vector<Bytes> Reader::sizes(const std::string& k, int n) const {
  if (!has(k)) return {};
  const YAML::Node node = get(k);
  if (node.IsSequence()) {
    if (static_cast<int>(node.size()) != n)
      fail_at(node, key(k), fmt::format("per-stage list has {} values, expected {} (one per stage)", node.size(), n));
    std::vector<Bytes> out;
    for (std::size_t i = 0; i < node.size(); ++i) out.push_back(bytes_of(node[i], fmt::format("{}[{}]", key(k), i)));
    return out;
  }
  return std::vector<Bytes>(n, bytes_of(node, key(k)));
}

std::vector<std::string> Reader::texts(const std::string& k) const {
  if (!has(k)) return {};
  const YAML::Node node = get(k);
  std::vector<std::string> out;
  if (node.IsSequence()) {
    for (std::size_t i = 0; i < node.size(); ++i)
      out.push_back(scalar(node[i], fmt::format("{}[{}]", key(k), i), "a string"));
  } else {
    out.push_back(scalar(node, key(k), "a string or a list of strings"));
  }
  return out;
}

}  // namespace stepsim::cli
