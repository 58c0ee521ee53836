#include "cli/bench/bench_suite.hpp"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cli/input/budget.hpp"
#include "cli/input/input_files.hpp"
#include "cli/input/scenario.hpp"
#include "cli/input/yaml_shape.hpp"
#include "sim/checked.hpp"

namespace stepsim::cli {

namespace {

constexpr std::int64_t kRatioScale = 1'000'000;

// Axis names that stand for a scenario key; any other axis name must be a dotted key itself.
// `time_ratio` is applied to the loaded spec (it derives times from each stage's forward).
struct NamedAxis {
  const char* name;
  const char* key;  // nullptr: time_ratio
};
constexpr NamedAxis kNamedAxes[] = {
    {"schedule", "pipeline.schedule"},         {"stages", "pipeline.stages"},
    {"microbatches", "pipeline.microbatches"}, {"virtual_stages", "pipeline.virtual_stages"},
    {"latency", "pipeline.link.latency"},      {"time_ratio", nullptr},
};

std::vector<std::string> named_axis_names() {
  std::vector<std::string> names;
  for (const auto& a : kNamedAxes) names.push_back(a.name);
  return names;
}

// Parses "12.5" into millionths; false on anything else.
bool parse_millionths(std::string_view s, std::int64_t& out) {
  std::int64_t whole = 0, frac = 0;
  int frac_digits = 0;
  bool any = false, dot = false;
  for (char c : s) {
    if (c >= '0' && c <= '9') {
      any = true;
      if (dot) {
        if (++frac_digits > 6) return false;
        frac = frac * 10 + (c - '0');
      } else {
        if (whole > 1'000'000'000) return false;
        whole = whole * 10 + (c - '0');
      }
    } else if (c == '.' && !dot) {
      dot = true;
    } else {
      return false;
    }
  }
  if (!any) return false;
  for (int k = frac_digits; k < 6; ++k) frac *= 10;
  out = whole * kRatioScale + frac;
  return true;
}

// A YAML value as text that Source's --set parsing reads back to the same node.
std::string yaml_text(const YAML::Node& n) {
  if (n.IsScalar()) {
    YAML::Emitter e;
    e << n;
    return e.c_str();
  }
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

// The label people see: a scalar as written, anything else in flow style.
std::string label_of(const YAML::Node& n) {
  if (n.IsScalar()) return n.Scalar();
  YAML::Emitter e;
  e << YAML::Flow << n;
  return e.c_str();
}

int line_of(const YAML::Node& n) {
  const auto mark = n.Mark();
  return mark.line >= 0 ? mark.line + 1 : 0;
}

// Adds what setting `name` (an axis name or a dotted key) to `value` means to `out`.
void add_setting(const Reader& r, const YAML::Node& at, const std::string& full_key, const std::string& name,
                 const YAML::Node& value, AxisValue& out) {
  if (name.find('.') != std::string::npos) {
    out.sets.emplace_back(name, yaml_text(value));
    return;
  }
  for (const auto& a : kNamedAxes) {
    if (name != a.name) continue;
    if (!a.key) {
      if (!value.IsScalar()) r.fail_at(value, full_key, "expected a time ratio like 1:2:1 (F:B:W)");
      std::string err;
      auto ratio = parse_time_ratio(value.Scalar(), &err);
      if (!ratio) r.fail_at(value, full_key, err);
      out.time_ratio = *ratio;
    } else {
      out.sets.emplace_back(a.key, yaml_text(value));
    }
    return;
  }
  const auto near = nearest(name, named_axis_names());
  r.fail_at(at, full_key,
            near.empty() ? fmt::format("unknown axis '{}' (known: schedule, stages, microbatches, virtual_stages, "
                                       "latency, time_ratio, or a dotted scenario key like pipeline.link.bandwidth)",
                                       name)
                         : fmt::format("unknown axis '{}'; did you mean '{}'?", name, near));
}

BenchAxis read_axis(const Reader& axes, const YAML::Node& name_node, const YAML::Node& list) {
  BenchAxis axis;
  axis.name = name_node.as<std::string>();
  axis.line = line_of(name_node);
  const std::string key = axes.key(axis.name);
  const bool named = std::any_of(std::begin(kNamedAxes), std::end(kNamedAxes),
                                 [&](const NamedAxis& a) { return axis.name == a.name; });
  // An axis whose values all bundle their own settings may have any name; plain values need
  // the name to say what they set.
  bool plain_values = !list.IsSequence();
  for (std::size_t i = 0; list.IsSequence() && i < list.size(); ++i) plain_values |= !list[i].IsMap();
  if (plain_values && !named && axis.name.find('.') == std::string::npos) {
    const auto near = nearest(axis.name, named_axis_names());
    axes.fail_at(name_node, key,
                 near.empty() ? "unknown axis (known: schedule, stages, microbatches, virtual_stages, latency, "
                                "time_ratio, or a dotted scenario key like pipeline.link.bandwidth)"
                              : fmt::format("unknown axis; did you mean '{}'?", near));
  }
  if (!list.IsSequence() || list.size() == 0)
    axes.fail_at(list ? list : name_node, key, "expected a non-empty list of values");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const YAML::Node item = list[i];
    const std::string item_key = fmt::format("{}[{}]", key, i);
    AxisValue v;
    if (item.IsMap()) {
      // A bundle: several settings under one label.
      for (const auto& kv : item) {
        const auto k = kv.first.as<std::string>();
        if (k != "label" && k != "set")
          axes.fail_at(kv.first, item_key + "." + k, "unknown key (a bundled value has 'label' and 'set')");
      }
      if (!item["label"] || !item["label"].IsScalar()) axes.fail_at(item, item_key + ".label", "missing (required)");
      if (!item["set"] || !item["set"].IsMap() || item["set"].size() == 0)
        axes.fail_at(item, item_key + ".set", "expected a map of settings, e.g. {schedule: 1f1b, virtual_stages: 2}");
      v.label = item["label"].Scalar();
      for (const auto& kv : item["set"]) {
        const auto k = kv.first.as<std::string>();
        add_setting(axes, kv.first, item_key + ".set." + k, k, kv.second, v);
      }
    } else {
      v.label = label_of(item);
      add_setting(axes, name_node, item_key, axis.name, item, v);
    }
    if (v.label.empty()) axes.fail_at(item, item_key, "empty value");
    for (const auto& other : axis.values)
      if (other.label == v.label) axes.fail_at(item, item_key, fmt::format("value '{}' appears twice", v.label));
    axis.values.push_back(std::move(v));
  }
  return axis;
}

// The variants are every combination of the axes' values: their product must be countable
// (variant_count() relies on it) and is refused, not wrapped, past int64.
void check_variant_count(const Reader& axes, const std::vector<BenchAxis>& list) {
  std::int64_t n = 1;
  std::vector<std::string> sizes;
  for (const auto& a : list) sizes.push_back(std::to_string(a.values.size()));
  for (const auto& a : list) {
    const auto next = checked_mul(n, static_cast<std::int64_t>(a.values.size()));
    if (!next)
      axes.fail_at(axes.node(), "axes",
                   fmt::format("too many variants: {} is more than {}", fmt::join(sizes, " x "), INT64_MAX));
    n = *next;
  }
}

BenchSuite read_suite(const std::shared_ptr<Source>& src, int* scenario_line = nullptr) {
  BenchSuite suite;
  suite.file = src->file;
  Reader top(src, src->root, "");
  top.only({"name", "description", "scenario", "baseline", "axes", "tolerance"});
  suite.name = top.opt_text("name").value_or(std::filesystem::path(src->file).stem().string());
  suite.description = top.opt_text("description").value_or("");
  suite.scenario = top.text("scenario");
  if (scenario_line) *scenario_line = line_of(static_cast<const YAML::Node&>(src->root)["scenario"]);
  if (top.has("baseline")) suite.baseline_path = top.text("baseline");

  const Reader axes = top.child("axes");
  for (const auto& kv : axes.node()) {
    BenchAxis axis = read_axis(axes, kv.first, kv.second);
    for (const auto& other : suite.axes)
      if (other.name == axis.name) axes.fail_at(kv.first, axes.key(axis.name), "axis appears twice");
    suite.axes.push_back(std::move(axis));
  }
  if (suite.axes.empty()) axes.fail_at(axes.node(), "axes", "expected at least one axis");
  check_variant_count(axes, suite.axes);

  if (top.has("tolerance")) {
    const Reader t = top.child("tolerance");
    t.only({"step_time", "bubble_fraction", "peak_memory", "messages"});
    const std::pair<const char*, std::pair<Metric, Tolerance*>> metrics[] = {
        {"step_time", {Metric::StepTime, &suite.tolerance.step_time}},
        {"bubble_fraction", {Metric::BubbleFraction, &suite.tolerance.bubble_fraction}},
        {"peak_memory", {Metric::PeakMemory, &suite.tolerance.peak_memory}},
        {"messages", {Metric::Messages, &suite.tolerance.messages}},
    };
    for (const auto& [k, target] : metrics) {
      if (!t.has(k)) continue;
      std::string err;
      auto tol = parse_tolerance(target.first, t.text(k), &err);
      if (!tol) t.fail(k, err);
      *target.second = *tol;
    }
  }
  return suite;
}

std::string read_text(const std::string& file, const std::string& from, int line, const std::string& key) {
  try {
    return read_input_file(file);
  } catch (const InputError& e) { throw InputError(from, line, key, fmt::format("'{}': {}", file, e.message())); }
}

}  // namespace

std::optional<TimeRatio> parse_time_ratio(std::string_view text, std::string* error) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto colon = text.find(':', start);
    parts.push_back(text.substr(start, colon == std::string_view::npos ? std::string_view::npos : colon - start));
    if (colon == std::string_view::npos) break;
    start = colon + 1;
  }
  TimeRatio r;
  std::int64_t* terms[] = {&r.f, &r.b, &r.w};
  bool ok = parts.size() == 3;
  for (std::size_t i = 0; ok && i < 3; ++i) ok = parse_millionths(parts[i], *terms[i]);
  if (!ok) {
    if (error) *error = fmt::format("'{}' is not a time ratio F:B:W like 1:2:1 (three non-negative numbers)", text);
    return std::nullopt;
  }
  if (r.f == 0) {
    if (error) *error = fmt::format("'{}': the forward term F must be positive", text);
    return std::nullopt;
  }
  return r;
}

void apply_time_ratio(PipelineSpec& spec, const TimeRatio& ratio) {
  const auto share = [&](Time forward, std::int64_t term) {
    const __int128 num = static_cast<__int128>(forward) * term;
    return static_cast<Time>((num + ratio.f / 2) / ratio.f);  // nearest ns, halves up
  };
  spec.backward_input.resize(spec.forward.size());
  spec.backward_weight.resize(spec.forward.size());
  spec.backward.resize(spec.forward.size());
  for (std::size_t d = 0; d < spec.forward.size(); ++d) {
    spec.backward_input[d] = share(spec.forward[d], ratio.b);
    spec.backward_weight[d] = share(spec.forward[d], ratio.w);
    spec.backward[d] = spec.backward_input[d] + spec.backward_weight[d];
  }
}

std::size_t BenchSuite::variant_count() const {
  std::size_t n = 1;
  for (const auto& a : axes) n *= a.values.size();
  return n;
}

SuiteIdentity BenchSuite::identity() const {
  SuiteIdentity id;
  id.name = name;
  id.scenario = scenario;
  for (const auto& a : axes) {
    std::vector<std::string> labels;
    for (const auto& v : a.values) labels.push_back(v.label);
    id.axes.emplace_back(a.name, std::move(labels));
  }
  id.variants = variant_count();
  id.tolerance = tolerance;
  return id;
}

namespace {
std::shared_ptr<const YAML::Node> parse_base(const std::string& text, const std::string& file) {
  // Duplicate keys, a second document, too many nodes: refused once, for the suite, before the
  // loader's memory grows with its nodes.
  check_yaml_shape(text, file);
  try {
    return std::make_shared<const YAML::Node>(YAML::Load(text));
  } catch (const YAML::Exception&) {
    return nullptr;  // every variant reports it, with the file and line, from the text
  }
}
}  // namespace

BenchSuite load_suite(const std::string& file) {
  int scenario_line = 0;
  BenchSuite suite = read_suite(Source::parse(read_text(file, file, 0, ""), file), &scenario_line);
  const auto dir = std::filesystem::path(file).parent_path();
  suite.scenario_file = (dir / suite.scenario).lexically_normal().string();
  suite.scenario_text = read_text(suite.scenario_file, file, scenario_line, "scenario");
  suite.scenario_root = parse_base(suite.scenario_text, suite.scenario_file);
  if (suite.baseline_path) suite.baseline_path = (dir / *suite.baseline_path).lexically_normal().string();
  return suite;
}

BenchSuite parse_suite(const std::string& text, const std::string& name, const std::string& scenario_text) {
  BenchSuite suite = read_suite(Source::parse(text, name));
  suite.scenario_file = suite.scenario;
  suite.scenario_text = scenario_text;
  suite.scenario_root = parse_base(suite.scenario_text, suite.scenario_file);
  return suite;
}

std::optional<Shard> parse_shard(std::string_view text, std::string* error) {
  const auto slash = text.find('/');
  Shard s;
  const auto num = [](std::string_view t, std::size_t& out) {
    const auto res = std::from_chars(t.data(), t.data() + t.size(), out);
    return !t.empty() && res.ec == std::errc() && res.ptr == t.data() + t.size();
  };
  if (slash == std::string_view::npos || !num(text.substr(0, slash), s.index) ||
      !num(text.substr(slash + 1), s.count) || s.count == 0 || s.index >= s.count) {
    if (error) *error = fmt::format("'{}' is not a shard I/N with 0 <= I < N (e.g. 0/4)", text);
    return std::nullopt;
  }
  return s;
}

std::vector<std::size_t> shard_indices(std::size_t total, Shard shard) {
  std::vector<std::size_t> out;
  for (std::size_t i = shard.index; i < total; i += shard.count) out.push_back(i);
  return out;
}

BenchVariant variant_at(const BenchSuite& suite, std::size_t index) {
  BenchVariant v;
  v.index = index;
  std::vector<std::size_t> pos(suite.axes.size());
  std::size_t rest = index;
  for (std::size_t a = suite.axes.size(); a-- > 0;) {  // last axis varies fastest
    pos[a] = rest % suite.axes[a].values.size();
    rest /= suite.axes[a].values.size();
  }
  for (std::size_t a = 0; a < suite.axes.size(); ++a) {
    const AxisValue& val = suite.axes[a].values[pos[a]];
    v.settings.emplace_back(suite.axes[a].name, val.label);
    for (const auto& [k, text] : val.sets) v.overrides.push_back(k + "=" + text);
    if (val.time_ratio) v.time_ratio = val.time_ratio;
  }
  return v;
}

PipelineSpec variant_spec(const BenchSuite& suite, const BenchVariant& variant,
                          const std::vector<std::string>& extra_sets) {
  PipelineSpec spec = variant_scenario(suite, variant, extra_sets);
  if (variant.time_ratio) apply_time_ratio(spec, *variant.time_ratio);
  return spec;
}

PipelineSpec variant_scenario(const BenchSuite& suite, const BenchVariant& variant,
                              const std::vector<std::string>& extra_sets) {
  std::vector<std::string> overrides = extra_sets;
  overrides.insert(overrides.end(), variant.overrides.begin(), variant.overrides.end());
  const std::string where = fmt::format("variant {} ({})", variant.index, settings_key(variant.settings));
  try {
    // From the base parsed once; should that fail, from the text again: a copied document has
    // no line numbers, and the error must point into the file.
    const auto read = [&] {
      if (suite.scenario_root) {
        try {
          return scenario_from_root(*suite.scenario_root, suite.scenario_file, overrides);
        } catch (const InputError&) {}
      }
      return parse_scenario(suite.scenario_text, suite.scenario_file, overrides);
    };
    Scenario sc = read();
    if (!sc.pipeline)
      throw InputError(suite.scenario_file, 1, "pipeline", "the base scenario has no 'pipeline' section");
    return std::move(*sc.pipeline);
  } catch (const InputError& e) {
    if (e.file() != "--set") throw InputError(e.file(), e.line(), e.key(), fmt::format("{} [{}]", e.message(), where));
    // A value from an axis: point at the axis in the suite.
    for (const auto& axis : suite.axes)
      for (const auto& val : axis.values)
        for (const auto& [k, text] : val.sets)
          if (e.key() == k || e.key().rfind(k + ".", 0) == 0 || e.key().rfind(k + "[", 0) == 0)
            for (const auto& [name, label] : variant.settings)
              if (name == axis.name && label == val.label)
                throw InputError(suite.file, axis.line, "axes." + axis.name,
                                 fmt::format("value '{}' ({}): {} [{}]", label, e.key(), e.message(), where));
    throw;  // from the command line's --set
  }
}

}  // namespace stepsim::cli
