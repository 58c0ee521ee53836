#include "cli/bench/bench_results.hpp"
#include "cli/reports/quantities.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/input/input.hpp"
#include "cli/reports/table.hpp"
#include "models/units.hpp"

namespace stepsim::cli {

namespace {

constexpr const char* kFormat = "stepsim-bench/1";

// Exact decimal milliseconds from integer ns (no float on the way).
std::string ms_text(Time ns) {
  const char* sign = ns < 0 ? "-" : "";
  const Time a = ns < 0 ? -ns : ns;
  return fmt::format("{}{}.{:06}", sign, a / kMillisecond, a % kMillisecond);
}
std::string mib3(Bytes b) { return fmt::format("{:.3f}", mib(b)); }

std::string percent_change(double base, double cur) {
  if (base == 0) return cur == 0 ? "0%" : "new";
  return fmt::format("{:+.2f}%", 100.0 * (cur - base) / std::fabs(base));
}

OrderedJson settings_json(const Settings& s) {
  OrderedJson j = OrderedJson::object();
  for (const auto& [k, v] : s) j[k] = v;
  return j;
}

OrderedJson result_json(const VariantResult& r) {
  OrderedJson j;
  j["index"] = r.index;
  j["settings"] = settings_json(r.settings);
  j["status"] = status_name(r.status);
  if (r.status != VariantStatus::Ok) {
    j["reason"] = r.reason;
    return j;
  }
  j["step_time_ns"] = r.step_time;
  j["step_time_ms"] = to_ms(r.step_time);
  j["bubble_fraction"] = r.bubble_fraction;
  j["peak_memory_bytes"] = r.peak_memory;
  j["peak_resident"] = r.peak_resident;
  j["messages"] = {{"forward", r.forward_messages}, {"backward", r.backward_messages}};
  return j;
}

OrderedJson identity_json(const SuiteIdentity& id) {
  OrderedJson j;
  j["name"] = id.name;
  j["scenario"] = id.scenario;
  j["variants"] = id.variants;
  OrderedJson axes = OrderedJson::object();
  for (const auto& [name, labels] : id.axes) axes[name] = labels;
  j["axes"] = axes;
  j["tolerance"] = {{"step_time", id.tolerance.step_time.text},
                    {"bubble_fraction", id.tolerance.bubble_fraction.text},
                    {"peak_memory", id.tolerance.peak_memory.text},
                    {"messages", id.tolerance.messages.text}};
  return j;
}

OrderedJson win_json(const Win& w) {
  OrderedJson j;
  j["setting"] = settings_json(w.setting);
  j["fastest"] = w.fastest;
  j["step_time_ns"] = w.fastest_step;
  if (!w.runner_up.empty()) {
    j["runner_up"] = w.runner_up;
    j["runner_up_step_time_ns"] = w.runner_up_step;
  }
  j["lowest_memory"] = w.lowest_memory;
  j["lowest_peak_memory_bytes"] = w.lowest_peak;
  return j;
}

// Reading a results file: every missing or mistyped field is an InputError naming it.
class JsonReader {
 public:
  explicit JsonReader(std::string file) : file_(std::move(file)) {}
  const OrderedJson& at(const OrderedJson& j, const std::string& k, const std::string& path) const {
    if (!j.is_object() || !j.contains(k)) fail(path + k, "missing");
    return j.at(k);
  }
  std::string str(const OrderedJson& j, const std::string& k, const std::string& path) const {
    const auto& v = at(j, k, path);
    if (!v.is_string()) fail(path + k, "expected a string");
    return v.get<std::string>();
  }
  // A count or a time from `min` to `max`: an edited file's -5 ns step or 10^30 messages is
  // refused here, not compared as if measured (nor wrapped by a narrowing cast).
  std::int64_t integer(const OrderedJson& j, const std::string& k, const std::string& path, std::int64_t min = 0,
                       std::int64_t max = std::numeric_limits<std::int64_t>::max()) const {
    return whole(at(j, k, path), path + k, min, max);
  }
  std::int64_t whole(const OrderedJson& v, const std::string& key, std::int64_t min, std::int64_t max) const {
    const bool too_big = v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(max);
    if (!v.is_number_integer() || too_big || v.get<std::int64_t>() < min || v.get<std::int64_t>() > max)
      fail(key, fmt::format("expected a whole number from {} to {}", min, max));
    return v.get<std::int64_t>();
  }
  // A share in [0, 1] (a bubble fraction).
  double share(const OrderedJson& j, const std::string& k, const std::string& path) const {
    const auto& v = at(j, k, path);
    if (!v.is_number() || !(v.get<double>() >= 0 && v.get<double>() <= 1))
      fail(path + k, "expected a share from 0 to 1");
    return v.get<double>();
  }
  Settings settings(const OrderedJson& j, const std::string& k, const std::string& path) const {
    const auto& v = at(j, k, path);
    if (!v.is_object()) fail(path + k, "expected an object");
    Settings s;
    for (auto it = v.begin(); it != v.end(); ++it) {
      if (!it.value().is_string()) fail(path + k + "." + it.key(), "expected a string");
      s.emplace_back(it.key(), it.value().get<std::string>());
    }
    return s;
  }
  [[noreturn]] void fail(const std::string& key, const std::string& msg) const { throw InputError(file_, 0, key, msg); }

 private:
  std::string file_;
};

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

template <class T>
std::string joined(const std::vector<T>& v) {
  std::string out;
  for (const auto& x : v) fmt::format_to(std::back_inserter(out), "{}{}", out.empty() ? "" : " ", x);
  return out;
}

// How two suites' identities differ, the first field that does ("" when they are the same suite).
std::string identity_difference(const SuiteIdentity& a, const SuiteIdentity& b) {
  if (a.name != b.name) return fmt::format("suite '{}' vs '{}'", a.name, b.name);
  if (a.scenario != b.scenario) return fmt::format("base scenario {} vs {}", a.scenario, b.scenario);
  if (a.variants != b.variants) return fmt::format("{} variants vs {}", a.variants, b.variants);
  for (std::size_t i = 0; i < std::max(a.axes.size(), b.axes.size()); ++i) {
    const auto axis = [](const SuiteIdentity& s, std::size_t k) {
      return k < s.axes.size() ? fmt::format("{}: [{}]", s.axes[k].first, fmt::join(s.axes[k].second, ", "))
                               : std::string("none");
    };
    if (axis(a, i) != axis(b, i)) return fmt::format("axis {} {} vs {}", i + 1, axis(a, i), axis(b, i));
  }
  return "";
}

}  // namespace

std::string settings_key(const Settings& settings) {
  std::string out;
  for (const auto& [k, v] : settings) out += (out.empty() ? "" : " ") + k + "=" + v;
  return out;
}

const char* status_name(VariantStatus s) {
  switch (s) {
    case VariantStatus::Ok: return "ok";
    case VariantStatus::Skipped: return "skipped";
    case VariantStatus::Failed: return "failed";
  }
  return "?";
}

Bytes VariantResult::max_peak_memory() const {
  Bytes m = 0;
  for (Bytes b : peak_memory) m = std::max(m, b);
  return m;
}

double Tolerance::allowed(double baseline) const { return absolute + relative * std::fabs(baseline); }

std::optional<Tolerance> parse_tolerance(Metric metric, const std::string& text, std::string* error) {
  Tolerance t;
  t.text = text;
  const auto fail = [&](const std::string& why) -> std::optional<Tolerance> {
    if (error) *error = why;
    return std::nullopt;
  };
  const auto plain_number = [](std::string_view s, double& out) {
    const auto res = std::from_chars(s.data(), s.data() + s.size(), out);
    return !s.empty() && res.ec == std::errc() && res.ptr == s.data() + s.size();
  };
  if (!text.empty() && text.back() == '%') {
    double pct = 0;
    if (!plain_number(std::string_view(text).substr(0, text.size() - 1), pct) || pct < 0)
      return fail(fmt::format("'{}' is not a non-negative percentage like 2%", text));
    t.relative = pct / 100.0;
    return t;
  }
  double plain = 0;
  if (plain_number(text, plain) && plain == 0) return t;  // "0": exact
  std::string err;
  switch (metric) {
    case Metric::StepTime: {
      auto v = parse_duration(text, &err);
      if (!v || *v < 0)
        return fail(fmt::format("'{}' is not a duration like 1us or a percentage like 1%{}", text,
                                err.empty() ? "" : " (" + err + ")"));
      t.absolute = static_cast<double>(*v);
      return t;
    }
    case Metric::PeakMemory: {
      auto v = parse_bytes(text, &err);
      if (!v || *v < 0)
        return fail(fmt::format("'{}' is not a size like 1MiB or a percentage like 1%{}", text,
                                err.empty() ? "" : " (" + err + ")"));
      t.absolute = static_cast<double>(*v);
      return t;
    }
    case Metric::BubbleFraction:
    case Metric::Messages:
      if (!plain_number(text, plain) || plain < 0)
        return fail(fmt::format("'{}' is not a non-negative number or a percentage like 1%", text));
      t.absolute = plain;
      return t;
  }
  return fail("unknown metric");
}

ResultRows result_rows(const VariantResult& r) {
  ResultRows rows;
  rows.json = result_json(r).dump();
  rows.csv = std::to_string(r.index);
  for (const auto& [k, v] : r.settings) {
    rows.csv += ',';
    rows.csv += csv_cell(v);
  }
  rows.csv += fmt::format(",{},{}", status_name(r.status), csv_cell(r.reason));
  if (r.status == VariantStatus::Ok)
    rows.csv += fmt::format(",{},{},{},{},{},{},{},{}\n", r.step_time, ms_text(r.step_time), r.bubble_fraction,
                            r.max_peak_memory(), joined(r.peak_memory), joined(r.peak_resident), r.forward_messages,
                            r.backward_messages);
  else
    rows.csv += ",,,,,,,,\n";
  return rows;
}

std::string results_json_text(const BenchResults& results, std::span<const ResultRows> rows,
                              const std::vector<Win>& wins) {
  std::string out = "{\n";
  out += fmt::format("  \"format\": {},\n", OrderedJson(kFormat).dump());
  out += fmt::format("  \"suite\": {},\n", identity_json(results.suite).dump());
  out += fmt::format("  \"shard\": {},\n", OrderedJson(results.shard).dump());
  out += "  \"results\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    out += i ? ",\n    " : "\n    ";
    out += rows[i].json;
  }
  out += rows.empty() ? "],\n" : "\n  ],\n";
  out += "  \"wins\": [";
  for (std::size_t i = 0; i < wins.size(); ++i) out += (i ? ",\n    " : "\n    ") + win_json(wins[i]).dump();
  out += wins.empty() ? "]\n" : "\n  ]\n";
  return out + "}\n";
}

std::vector<ResultRows> result_rows(const BenchResults& results) {
  std::vector<ResultRows> rows;
  rows.reserve(results.results.size());
  for (const auto& r : results.results) rows.push_back(result_rows(r));
  return rows;
}

std::string results_json_text(const BenchResults& results) {
  return results_json_text(results, result_rows(results), schedule_wins(results));
}

BenchResults results_from_json(const std::string& text, const std::string& file) {
  OrderedJson j;
  try {
    j = OrderedJson::parse(text);
  } catch (const OrderedJson::exception& e) {  // also out_of_range: a number such as 1e400
    throw InputError(file, 0, "", fmt::format("not valid JSON: {}", e.what()));
  }
  const JsonReader rd(file);
  if (!j.is_object()) rd.fail("", "expected a JSON object (a stepsim bench result file)");
  const std::string format = rd.str(j, "format", "");
  if (format != kFormat)
    rd.fail("format", fmt::format("'{}' is not a stepsim bench result file ({})", format, kFormat));
  BenchResults out;
  const auto& s = rd.at(j, "suite", "");
  out.suite.name = rd.str(s, "name", "suite.");
  out.suite.scenario = rd.str(s, "scenario", "suite.");
  out.suite.variants = static_cast<std::size_t>(rd.integer(s, "variants", "suite."));
  const auto& axes = rd.at(s, "axes", "suite.");
  if (!axes.is_object()) rd.fail("suite.axes", "expected an object");
  for (auto it = axes.begin(); it != axes.end(); ++it) {
    if (!it.value().is_array()) rd.fail("suite.axes." + it.key(), "expected a list of labels");
    std::vector<std::string> labels;
    for (const auto& l : it.value()) {
      if (!l.is_string()) rd.fail("suite.axes." + it.key(), "expected a list of labels");
      labels.push_back(l.get<std::string>());
    }
    out.suite.axes.emplace_back(it.key(), std::move(labels));
  }
  const auto& tol = rd.at(s, "tolerance", "suite.");
  const std::pair<const char*, std::pair<Metric, Tolerance*>> metrics[] = {
      {"step_time", {Metric::StepTime, &out.suite.tolerance.step_time}},
      {"bubble_fraction", {Metric::BubbleFraction, &out.suite.tolerance.bubble_fraction}},
      {"peak_memory", {Metric::PeakMemory, &out.suite.tolerance.peak_memory}},
      {"messages", {Metric::Messages, &out.suite.tolerance.messages}},
  };
  for (const auto& [k, target] : metrics) {
    std::string err;
    auto t = parse_tolerance(target.first, rd.str(tol, k, "suite.tolerance."), &err);
    if (!t) rd.fail(std::string("suite.tolerance.") + k, err);
    *target.second = *t;
  }
  out.shard = rd.str(j, "shard", "");
  const auto& list = rd.at(j, "results", "");
  if (!list.is_array()) rd.fail("results", "expected a list");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto& x = list[i];
    const std::string p = fmt::format("results[{}].", i);
    VariantResult r;
    r.index = static_cast<std::size_t>(rd.integer(x, "index", p));
    r.settings = rd.settings(x, "settings", p);
    const std::string status = rd.str(x, "status", p);
    if (status == "ok") {
      r.status = VariantStatus::Ok;
      r.step_time = rd.integer(x, "step_time_ns", p);
      r.bubble_fraction = rd.share(x, "bubble_fraction", p);
      const auto& pm = rd.at(x, "peak_memory_bytes", p);
      const auto& pr = rd.at(x, "peak_resident", p);
      if (!pm.is_array() || !pr.is_array()) rd.fail(p + "peak_memory_bytes", "expected per-device lists");
      constexpr std::int64_t kInt = std::numeric_limits<int>::max();
      for (const auto& b : pm)
        r.peak_memory.push_back(rd.whole(b, p + "peak_memory_bytes", 0, std::numeric_limits<std::int64_t>::max()));
      for (const auto& b : pr) r.peak_resident.push_back(static_cast<int>(rd.whole(b, p + "peak_resident", 0, kInt)));
      const auto& msg = rd.at(x, "messages", p);
      r.forward_messages = static_cast<int>(rd.integer(msg, "forward", p + "messages.", 0, kInt));
      r.backward_messages = static_cast<int>(rd.integer(msg, "backward", p + "messages.", 0, kInt));
    } else if (status == "skipped" || status == "failed") {
      r.status = status == "skipped" ? VariantStatus::Skipped : VariantStatus::Failed;
      r.reason = rd.str(x, "reason", p);
    } else {
      rd.fail(p + "status", fmt::format("'{}' is not ok, skipped or failed", status));
    }
    out.results.push_back(std::move(r));
  }
  return out;
}

std::string results_csv(const BenchResults& results, std::span<const ResultRows> rows) {
  std::string out = "index";
  for (const auto& [name, labels] : results.suite.axes) {
    out += ',';
    out += csv_cell(name);
  }
  out +=
      ",status,reason,step_time_ns,step_time_ms,bubble_fraction,peak_memory_max_bytes,peak_memory_bytes,"
      "peak_resident,forward_messages,backward_messages\n";
  for (const auto& row : rows) out += row.csv;
  return out;
}

std::string results_csv(const BenchResults& results) { return results_csv(results, result_rows(results)); }

BenchResults merge_results(const std::vector<BenchResults>& parts, const std::vector<std::string>& files) {
  if (parts.empty()) throw InputError("merge", 0, "", "no result files to merge");
  BenchResults out;
  out.suite = parts.front().suite;
  std::map<std::size_t, std::size_t> from;  // variant index -> part it came from
  for (std::size_t p = 0; p < parts.size(); ++p) {
    if (const std::string why = identity_difference(parts[p].suite, out.suite); !why.empty())
      throw InputError(files[p], 0, "suite",
                       fmt::format("comes from a different suite (or suite version) than {}: {}", files.front(), why));
    for (const auto& r : parts[p].results) {
      if (r.index >= out.suite.variants)
        throw InputError(files[p], 0, "results", fmt::format("variant {} is out of range", r.index));
      auto [it, fresh] = from.emplace(r.index, p);
      if (!fresh)
        throw InputError(
            files[p], 0, "results",
            fmt::format("variant {} ({}) is also in {}: shards overlap", r.index, r.key(), files[it->second]));
      out.results.push_back(r);
    }
  }
  std::sort(out.results.begin(), out.results.end(),
            [](const VariantResult& a, const VariantResult& b) { return a.index < b.index; });
  out.shard = out.results.size() == out.suite.variants ? "all" : "partial";
  return out;
}

namespace {
// Peak memory per device; a list stays readable by naming the three devices that moved most.
void compare_peak_memory(const VariantResult& b, const VariantResult& cur, const Tolerance& tol,
                         std::vector<std::string>& worse, std::vector<std::string>& better) {
  if (b.peak_memory.size() != cur.peak_memory.size()) {
    worse.push_back(fmt::format("devices {} -> {}", b.peak_memory.size(), cur.peak_memory.size()));
  } else {
    std::vector<std::pair<double, std::string>> up, down;
    for (std::size_t d = 0; d < b.peak_memory.size(); ++d) {
      const double bv = static_cast<double>(b.peak_memory[d]), cv = static_cast<double>(cur.peak_memory[d]);
      const std::string what = fmt::format("d{} {} -> {} MiB ({})", d, mib3(b.peak_memory[d]), mib3(cur.peak_memory[d]),
                                           percent_change(bv, cv));
      const double allowed = tol.allowed(bv);
      if (cv - bv > allowed)
        up.emplace_back(cv - bv, what);
      else if (bv - cv > allowed)
        down.emplace_back(bv - cv, what);
    }
    const auto summarize = [&](std::vector<std::pair<double, std::string>>& list, std::vector<std::string>& into) {
      if (list.empty()) return;
      std::stable_sort(list.begin(), list.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
      std::string text = "peak memory ";
      for (std::size_t i = 0; i < list.size() && i < 3; ++i) text += (i ? ", " : "") + list[i].second;
      if (list.size() > 3) text += fmt::format(" and {} more devices", list.size() - 3);
      into.push_back(text);
    };
    summarize(up, worse);
    summarize(down, better);
  }
}
}  // namespace

Comparison compare_results(const BenchResults& baseline, const BenchResults& current, const Tolerances& tol) {
  Comparison c;
  std::map<std::string, const VariantResult*> base;
  for (const auto& r : baseline.results) base[r.key()] = &r;
  std::set<std::string> seen;
  for (const auto& cur : current.results) {
    const std::string key = cur.key();
    seen.insert(key);
    auto it = base.find(key);
    if (it == base.end()) {
      c.notes.push_back(fmt::format("{}: not in the baseline", key));
      continue;
    }
    const VariantResult& b = *it->second;
    if (b.status == VariantStatus::Ok && cur.status != VariantStatus::Ok) {
      c.regressions.push_back(
          fmt::format("{}: ran in the baseline, now {}: {}", key, status_name(cur.status), cur.reason));
      continue;
    }
    if (b.status != VariantStatus::Ok) {
      if (cur.status == VariantStatus::Ok)
        c.notes.push_back(fmt::format("{}: now runs (baseline: {}: {})", key, status_name(b.status), b.reason));
      else if (cur.status != b.status)
        c.notes.push_back(
            fmt::format("{}: {} -> {}: {}", key, status_name(b.status), status_name(cur.status), cur.reason));
      continue;
    }
    ++c.compared;
    std::vector<std::string> worse, better;
    const auto check = [&](const Tolerance& t, double bv, double cv, const std::string& what) {
      const double allowed = t.allowed(bv);
      if (cv - bv > allowed)
        worse.push_back(what);
      else if (bv - cv > allowed)
        better.push_back(what);
    };
    check(tol.step_time, static_cast<double>(b.step_time), static_cast<double>(cur.step_time),
          fmt::format("step time {} -> {} ms ({})", ms3(b.step_time), ms3(cur.step_time),
                      percent_change(static_cast<double>(b.step_time), static_cast<double>(cur.step_time))));
    check(tol.bubble_fraction, b.bubble_fraction, cur.bubble_fraction,
          fmt::format("bubble {:.4f} -> {:.4f} ({:+.4f})", b.bubble_fraction, cur.bubble_fraction,
                      cur.bubble_fraction - b.bubble_fraction));
    compare_peak_memory(b, cur, tol.peak_memory, worse, better);
    check(tol.messages, b.forward_messages, cur.forward_messages,
          fmt::format("forward messages {} -> {}", b.forward_messages, cur.forward_messages));
    check(tol.messages, b.backward_messages, cur.backward_messages,
          fmt::format("backward messages {} -> {}", b.backward_messages, cur.backward_messages));
    const auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : "; ") + x;
      return s;
    };
    if (!worse.empty()) c.regressions.push_back(fmt::format("{}: {}", key, join(worse)));
    if (!better.empty()) c.improvements.push_back(fmt::format("{}: {}", key, join(better)));
  }
  if (current.shard == "all")
    for (const auto& r : baseline.results)
      if (!seen.count(r.key())) c.notes.push_back(fmt::format("{}: in the baseline, not in this run", r.key()));
  return c;
}

std::string comparison_text(const Comparison& c, const std::string& baseline_file) {
  std::string out = fmt::format("baseline {}: {} variants compared, {} regressions, {} improvements\n", baseline_file,
                                c.compared, c.regressions.size(), c.improvements.size());
  if (!c.regressions.empty()) {
    out += fmt::format("regressions past tolerance ({}):\n", c.regressions.size());
    for (const auto& r : c.regressions) out += "  " + r + "\n";
  }
  if (!c.improvements.empty()) {
    out += fmt::format("improvements past tolerance ({}; accept them with --write-baseline):\n", c.improvements.size());
    for (const auto& r : c.improvements) out += "  " + r + "\n";
  }
  if (!c.notes.empty()) {
    // Notes are about the suite's shape (variants added or removed), often many alike: a sample.
    constexpr std::size_t kShown = 10;
    out += fmt::format("notes ({}):\n", c.notes.size());
    for (std::size_t i = 0; i < c.notes.size() && i < kShown; ++i) out += "  " + c.notes[i] + "\n";
    if (c.notes.size() > kShown) out += fmt::format("  ... and {} more\n", c.notes.size() - kShown);
  }
  return out;
}

std::vector<Win> schedule_wins(const BenchResults& results, const std::string& schedule_axis) {
  const auto& axes = results.suite.axes;
  const auto sched = std::find_if(axes.begin(), axes.end(), [&](const auto& a) { return a.first == schedule_axis; });
  if (sched == axes.end()) return {};
  const auto sched_pos = static_cast<std::size_t>(sched - axes.begin());
  // Groups in order of first appearance, candidates in result (= axis) order.
  std::vector<std::pair<Settings, std::vector<const VariantResult*>>> groups;
  std::map<std::string, std::size_t> group_of;
  for (const auto& r : results.results) {
    if (r.status != VariantStatus::Ok || r.settings.size() != axes.size()) continue;
    Settings others = r.settings;
    others.erase(others.begin() + static_cast<std::ptrdiff_t>(sched_pos));
    auto [it, fresh] = group_of.emplace(settings_key(others), groups.size());
    if (fresh) groups.push_back({others, {}});
    groups[it->second].second.push_back(&r);
  }
  std::vector<Win> wins;
  for (auto& [setting, runs] : groups) {
    Win w;
    w.setting = setting;
    std::vector<const VariantResult*> by_step = runs, by_memory = runs;
    std::stable_sort(by_step.begin(), by_step.end(), [](const VariantResult* a, const VariantResult* b) {
      if (a->step_time != b->step_time) return a->step_time < b->step_time;
      return a->max_peak_memory() < b->max_peak_memory();
    });
    std::stable_sort(by_memory.begin(), by_memory.end(), [](const VariantResult* a, const VariantResult* b) {
      if (a->max_peak_memory() != b->max_peak_memory()) return a->max_peak_memory() < b->max_peak_memory();
      return a->step_time < b->step_time;
    });
    w.fastest = by_step[0]->settings[sched_pos].second;
    w.fastest_step = by_step[0]->step_time;
    if (by_step.size() > 1) {
      w.runner_up = by_step[1]->settings[sched_pos].second;
      w.runner_up_step = by_step[1]->step_time;
    }
    w.lowest_memory = by_memory[0]->settings[sched_pos].second;
    w.lowest_peak = by_memory[0]->max_peak_memory();
    wins.push_back(std::move(w));
  }
  return wins;
}

std::string wins_text(const std::vector<Win>& wins) {
  if (wins.empty()) return "";
  // Tally: how often each schedule is fastest / lowest on memory, most wins first.
  const auto tally = [&](auto field) {
    std::vector<std::pair<std::string, int>> counts;
    for (const auto& w : wins) {
      const std::string& name = w.*field;
      auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == name; });
      if (it == counts.end())
        counts.emplace_back(name, 1);
      else
        ++it->second;
    }
    std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string s;
    for (const auto& [name, n] : counts) s += (s.empty() ? "" : ", ") + fmt::format("{} in {}", name, n);
    return s;
  };
  std::string out = fmt::format("which schedule wins where ({} settings)\n", wins.size());
  out += "  fastest:       " + tally(&Win::fastest) + "\n";
  out += "  lowest memory: " + tally(&Win::lowest_memory) + "\n\n";
  std::vector<Table::Column> cols;
  for (const auto& [k, v] : wins.front().setting) cols.push_back({k});
  for (const char* h : {"fastest", "step (ms)", "runner-up", "behind", "lowest memory", "peak (MiB)"})
    cols.push_back({h, std::string(h).find('(') != std::string::npos || std::string(h) == "behind"});
  Table t(cols);
  for (const auto& w : wins) {
    std::vector<std::string> row;
    for (const auto& [k, v] : w.setting) row.push_back(v);
    row.push_back(w.fastest);
    row.push_back(ms3(w.fastest_step));
    row.push_back(w.runner_up.empty() ? "-" : w.runner_up);
    row.push_back(w.runner_up.empty()
                      ? "-"
                      : percent_change(static_cast<double>(w.fastest_step), static_cast<double>(w.runner_up_step)));
    row.push_back(w.lowest_memory);
    row.push_back(fmt::format("{:.1f}", static_cast<double>(w.lowest_peak) / (1024.0 * 1024.0)));
    t.add_row(std::move(row));
  }
  return out + t.render();
}

}  // namespace stepsim::cli
