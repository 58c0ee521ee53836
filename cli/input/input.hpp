#pragma once
// Reading scenario YAML: every value goes through a Reader, so that every error names the file,
// the line and the full key, and unknown keys get a "did you mean" suggestion.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "sim/time.hpp"

namespace stepsim::cli {

// A bad scenario: "file:line: key: message". Exit code 2.
class InputError : public std::runtime_error {
 public:
  InputError(std::string file, int line, std::string key, const std::string& message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }

 private:
  std::string file_;
  int line_;
  std::string key_;
  std::string message_;
};

// A loaded YAML document and the --set overrides applied to it.
struct Source {
  std::string file;
  YAML::Node root;
  std::set<std::string> overridden;  // dotted keys set from the command line

  // The key a figure past what time or bytes hold (OverflowError), found reading or running
  // `section`, is blamed on: the one key --set changed in the section, else the one key it changed
  // at all (a job reads its plan's task), as the file alone did not overflow; else the section.
  std::string overflow_key(const std::string& section) const;

  // Loads `file` and applies `overrides` ("a.b.c=value", the value parsed as YAML).
  static std::shared_ptr<Source> load(const std::string& file, const std::vector<std::string>& overrides);
  static std::shared_ptr<Source> parse(const std::string& text, const std::string& name,
                                       const std::vector<std::string>& overrides = {});
  // The same from an already parsed document (a copy of `root` is taken; `root` is not
  // changed): a bench suite parses its base scenario once and applies each variant's overrides
  // to a copy.
  static std::shared_ptr<Source> from_root(const YAML::Node& root, const std::string& name,
                                           const std::vector<std::string>& overrides = {});
  static void apply_overrides(Source& src, const std::vector<std::string>& overrides);
};

// A --set key's parts: "a.b.c" -> {a, b, c}; "a..b" and "a.b." have an empty part (refused).
std::vector<std::string> split_dots(const std::string& key);

// `over` laid over `base`, as a variant's keys over its section's: maps merged key by key (deeper
// maps too), anything else replaced, and a map that names a `file:` replaces the base's whole (a
// `preset:` over a hardware `file:` replaces the file, the base's other keys kept). The base's
// top-level keys in `skip` are left out (a section's own variants). The merged maps hold the
// document's own nodes, so an error in either points at its line. With an `arena` (a sequence
// holding the document), the maps are made in its memory: yaml-cpp merges a node's memory into the
// map it is assigned into, and a fresh map per variant took in the whole document each time
// (2,000 variants: a minute and more).
YAML::Node laid_over(const YAML::Node& base, const YAML::Node& over, YAML::Node* arena = nullptr,
                     const std::vector<std::string>& skip = {});

// Whether `text` is a word or number ("8", "1f1b", "1ms", "-2.5e-3") that YAML reads as the plain
// scalar of the same text: --set values of that shape become that scalar without a parser each
// (a 1,000-variant suite applies 5,000 of them).
bool is_plain_word(std::string_view text);

// Why `path` cannot be read as an input file ("no such file or directory", "file name too long",
// "is a directory": the system's reason), or "" if it can be opened.
std::string input_file_problem(const std::string& path);
// The InputError "PATH: cannot open the file (REASON)" / "PATH: is a directory, not a file" unless
// `path` can be opened.
void require_input_file(const std::string& path);

// The closest of `candidates` to `word` (edit distance), or "" if none is close.
std::string nearest(const std::string& word, const std::vector<std::string>& candidates);

// `text` as a count from `min` to `max` (parse_whole's forms: 4096, 2.2e12, 15T), else nullopt and
// `error` the refusal ("'2.5' is not a whole number"): the one reading of a count in a scenario,
// a --set value or a measured-runs cell, so that each takes the same forms with the same checks.
std::optional<std::int64_t> whole_number(std::string_view text, std::int64_t min, std::int64_t max, std::string& error);

class Reader {
 public:
  Reader(std::shared_ptr<const Source> src, YAML::Node node, std::string path);

  const std::string& path() const { return path_; }
  std::string key(const std::string& k) const { return path_.empty() ? k : path_ + "." + k; }
  bool has(const std::string& k) const;
  // Whether --set gave this key (a message then blames the key the user changed).
  bool overridden(const std::string& k) const { return src_->overridden.count(key(k)) > 0; }
  Reader child(const std::string& k) const;  // must be a map
  // A reader of another node of the same document under `path` (a variant merged over its base:
  // the nodes keep their lines).
  Reader over(YAML::Node node, std::string path) const { return Reader(src_, std::move(node), std::move(path)); }
  YAML::Node node() const { return node_; }
  std::vector<std::string> keys() const;

  // Unknown keys are errors; `allowed` lists the keys this section understands, `synonyms` the
  // words another section uses for one of them ({"interval", "every"}: a search's checkpoint
  // interval is a job's `every`), named when written here.
  struct Synonym {
    const char* word;
    const char* here;
  };
  void only(const std::vector<std::string>& allowed, const std::vector<Synonym>& synonyms = {}) const;

  std::string text(const std::string& k) const;
  std::optional<std::string> opt_text(const std::string& k) const;
  // A whole number in [min, max] (whole_number: 4096, 2.2e12, 15T), parsed as 64-bit so that
  // nothing is truncated: out of range is an error naming the key, never a wrapped value.
  std::int64_t integer(const std::string& k, std::int64_t min = 1, std::int64_t max = kMaxInteger) const;
  std::optional<std::int64_t> opt_integer(const std::string& k, std::int64_t min = 1,
                                          std::int64_t max = kMaxInteger) const;
  // A count the simulator holds in an int (stages, micro-batches, cards, ...): integer() with
  // max kMaxCount. Every int-sized key is read through these.
  int count(const std::string& k, int min = 1) const;
  std::optional<int> opt_count(const std::string& k, int min = 1) const;
  static constexpr std::int64_t kMaxInteger = INT64_MAX;
  static constexpr int kMaxCount = INT32_MAX;
  // A finite number ("40%" is 0.4); NaN, infinities and values past the double range (1e400)
  // are errors naming the key.
  double number(const std::string& k) const;
  std::optional<double> opt_number(const std::string& k) const;
  bool flag(const std::string& k, bool fallback) const;
  Time duration(const std::string& k) const;  // non-negative, with a unit
  std::optional<Time> opt_duration(const std::string& k) const;
  Bytes bytes(const std::string& k) const;
  std::optional<Bytes> opt_bytes(const std::string& k) const;
  std::int64_t bandwidth(const std::string& k) const;  // bytes per second, positive
  std::optional<std::int64_t> opt_bandwidth(const std::string& k) const;

  // A scalar (same for every stage) or a list of exactly n values.
  std::vector<Time> durations(const std::string& k, int n) const;
  std::vector<Bytes> sizes(const std::string& k, int n) const;
  std::vector<std::string> texts(const std::string& k) const;  // list (or a single scalar)

  [[noreturn]] void fail(const std::string& k, const std::string& message) const;
  [[noreturn]] void fail_at(const YAML::Node& at, const std::string& full_key, const std::string& message) const;
  // Fails at the deepest node the document has along a dotted key below this reader's node
  // ("a.b.c": its line if the file has it, else the nearest parent's).
  [[noreturn]] void fail_dotted(const std::string& dotted_key, const std::string& message) const;
  const std::string& file() const { return src_->file; }
  const Source& source() const { return *src_; }

 private:
  YAML::Node get(const std::string& k) const;
  std::string key_name(const YAML::Node& k) const;  // a map key: a scalar, else an error
  std::string scalar(const YAML::Node& n, const std::string& full_key, const char* what) const;
  Time duration_of(const YAML::Node& n, const std::string& full_key) const;
  Bytes bytes_of(const YAML::Node& n, const std::string& full_key) const;

  std::shared_ptr<const Source> src_;
  YAML::Node node_;
  std::string path_;
  std::vector<std::pair<std::string, YAML::Node>> entries_;  // a map's scalar keys and their values
};

// A scenario section that is one lowering spec plus named variants of it (the same keys, applied
// over the base) that `stepsim compare` runs side by side: data_parallel, moe.
template <class Spec>
struct SpecWithVariants {
  Spec spec;
  std::vector<std::pair<std::string, Spec>> variants;  // in file order
};

// `variants:` under `r`: a map of name -> keys that differ from the base. Each variant is the
// base with `apply(reader, spec)` run on its keys (`keys`: what a variant may set), in file order.
template <class Spec, class Apply>
std::vector<std::pair<std::string, Spec>> read_variants(const Reader& r, const Spec& base,
                                                        const std::vector<std::string>& keys, Apply apply) {
  std::vector<std::pair<std::string, Spec>> out;
  if (!r.has("variants")) return out;
  const Reader vs = r.child("variants");
  for (const auto& name : vs.keys()) {
    const Reader v = vs.child(name);
    v.only(keys);
    Spec spec = base;
    apply(v, spec);
    out.emplace_back(name, std::move(spec));
  }
  return out;
}

}  // namespace stepsim::cli
