#include "cli/input/yaml_shape.hpp"

#include <map>
#include <sstream>
#include <vector>

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include "cli/input/input.hpp"

namespace stepsim::cli {

namespace {

class ShapeCheck : public YAML::EventHandler {
 public:
  ShapeCheck(std::string file, std::string prefix) : file_(std::move(file)), prefix_(std::move(prefix)) {}

  void OnDocumentStart(const YAML::Mark& mark) override {
    if (++documents_ > 1)
      throw InputError(file_, line(mark), prefix_.empty() ? "---" : prefix_,
                       "a second YAML document: a scenario is one document (remove the '---' and what follows)");
  }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { leaf(mark, "~"); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { leaf(mark, ""); }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t, const std::string& value) override {
    leaf(mark, value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    count(mark);
    push(false);
  }
  void OnSequenceEnd() override { stack_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    count(mark);
    push(true);
  }
  void OnMapEnd() override { stack_.pop_back(); }

 private:
  struct Frame {
    bool map = false;
    std::string path;
    bool want_key = true;
    std::string key;  // the key whose value comes next
    std::size_t index = 0;
    std::map<std::string, int> seen;  // key -> its line
  };

  void push(bool map) {
    Frame f;
    f.map = map;
    f.path = enter();  // before the push: the path comes from the enclosing frame
    stack_.push_back(std::move(f));
  }

  // A file's line; a --set value (prefix_ set) has none of its own.
  int line(const YAML::Mark& mark) const { return prefix_.empty() ? mark.line + 1 : 0; }

  static std::string join(const std::string& path, const std::string& k) { return path.empty() ? k : path + "." + k; }

  // A node begins: its dotted path. A map key that is itself a map or list gets no name.
  std::string enter() {
    if (stack_.empty()) return prefix_;
    Frame& f = stack_.back();
    if (!f.map) return fmt::format("{}[{}]", f.path, f.index++);
    if (f.want_key) {
      f.want_key = false;
      f.key.assign(1, '?');  // not = "?": GCC 12 -O3 warns falsely (-Wrestrict, PR 105329)
      return join(f.path, "?");
    }
    f.want_key = true;
    return join(f.path, f.key);
  }

  // One more node: past kMaxYamlNodes the document would cost more memory loaded (some hundreds
  // of bytes a node) than any scenario needs; refused at the list or map that holds it.
  void count(const YAML::Mark& mark) {
    if (++nodes_ <= kMaxYamlNodes) return;
    const std::string where = stack_.empty() ? prefix_ : stack_.back().path;
    throw InputError(file_, line(mark), where,
                     "more than 1,000,000 YAML values (lists and maps count too): a scenario this large is refused "
                     "(docs/limits.md)");
  }

  // A scalar, null or alias: a map key is checked against the map's earlier keys.
  void leaf(const YAML::Mark& mark, const std::string& text) {
    count(mark);
    if (stack_.empty() || !stack_.back().map || !stack_.back().want_key) {
      enter();
      return;
    }
    Frame& f = stack_.back();
    f.want_key = false;
    f.key = text;
    if (text.empty()) return;  // an alias as a key: its text is not known here
    const auto [it, fresh] = f.seen.emplace(text, mark.line + 1);
    if (!fresh)
      throw InputError(file_, line(mark), join(f.path, text),
                       prefix_.empty()
                           ? fmt::format("appears twice in one map (first on line {}); give each key once", it->second)
                           : "appears twice in one map; give each key once");
  }

  std::string file_;
  std::string prefix_;
  std::vector<Frame> stack_;
  int documents_ = 0;
  std::size_t nodes_ = 0;
};

}  // namespace

void check_yaml_shape(const std::string& text, const std::string& file, const std::string& prefix) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  ShapeCheck check(file, prefix);
  // yaml-cpp's Load reads the first document only; this pass reads them all, so a syntax error
  // past the first one (a stray `---` or `...` and what follows) surfaces here.
  try {
    while (parser.HandleNextDocument(check)) {}
  } catch (const YAML::ParserException& e) {
    throw InputError(file, e.mark.line + 1, prefix, fmt::format("not valid YAML: {}", e.msg));
  }
}

}  // namespace stepsim::cli
