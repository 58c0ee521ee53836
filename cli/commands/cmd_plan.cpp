// `stepsim plan`: the capacity and deadline planner (the book's design desk).
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "cli/commands/commands.hpp"
#include "cli/commands/diagnostics.hpp"
#include "cli/commands/scenario_kinds.hpp"
#include "cli/input/input.hpp"
#include "cli/input/input_files.hpp"
#include "cli/input/plan_source.hpp"
#include "cli/input/scenario.hpp"
#include "cli/reports/output.hpp"
#include "cli/reports/plan_pictures.hpp"
#include "cli/reports/plan_report.hpp"
#include "models/plan_sweep.hpp"
#include "models/units.hpp"
#include "sim/parallel_for.hpp"
#include "sim/time.hpp"

namespace stepsim::cli {

namespace {

[[noreturn]] void sweep_error(const std::string& key, const std::string& message) {
  throw InputError("--sweep", 0, key, message);
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (true) {
    const auto at = s.find(sep, start);
    out.push_back(s.substr(start, at == std::string::npos ? std::string::npos : at - start));
    if (at == std::string::npos) return out;
    start = at + 1;
  }
}

// One value of a sweep axis, exactly: counts and fractions as numbers, durations and sizes with units.
// `step`: a range's step, whose zero is "the step must be positive", not a value's.
SweepValue parse_value(const SweepKey& key, const std::string& text, bool step = false) {
  SweepValue v;
  v.label = text;
  std::string err;
  switch (key.kind) {
    case SweepKind::Count: {
      std::string error;
      const auto n = whole_number(text, INT64_MIN, INT64_MAX, error);  // as a scenario's count: 1024, 1K
      if (!n) sweep_error(key.name, error);
      if (!step && (*n < key.min || *n > key.max))
        sweep_error(key.name, fmt::format("{} is outside {} to {}", *n, key.min, key.max));
      v.integer = *n;
      break;
    }
    case SweepKind::Fraction: {
      std::size_t used = 0;
      double x = 0;
      try {
        x = std::stod(text, &used);
      } catch (...) { used = 0; }
      if (used > 0 && used + 1 == text.size() && text.back() == '%')
        x /= 100.0;
      else if (used == 0 || used != text.size())
        sweep_error(key.name, fmt::format("'{}' is not a number", text));
      if (!(x >= 0 && x <= 1)) sweep_error(key.name, fmt::format("'{}' is not a fraction from 0 to 1", text));
      if (key.name == "efficiency" && x == 0 && !step) sweep_error(key.name, "efficiency must be above 0");
      v.fraction = x;
      break;
    }
    case SweepKind::Duration: {
      const auto t = parse_duration(text, &err);
      if (!t) sweep_error(key.name, err);
      if (*t < 0) sweep_error(key.name, fmt::format("'{}' is negative", text));
      v.integer = *t;
      break;
    }
    case SweepKind::Size: {
      const auto b = parse_bytes(text, &err);
      if (!b) sweep_error(key.name, err);
      if (*b < 0) sweep_error(key.name, fmt::format("'{}' is negative", text));
      v.integer = *b;
      break;
    }
  }
  return v;
}

std::string fraction_label(double x) { return fmt::format("{:.4g}", x); }

// "key=start:stop:step" (inclusive) or "key=a,b,c".
SweepAxis parse_sweep(const std::string& arg) {
  const auto eq = arg.find('=');
  if (eq == std::string::npos || eq == 0) sweep_error(arg, "expected key=start:stop:step or key=a,b,c");
  const std::string name = arg.substr(0, eq), rest = arg.substr(eq + 1);
  const SweepKey* key = find_sweep_key(name);
  if (!key) {
    std::vector<std::string> names;
    std::string known;
    for (const auto& k : sweep_keys()) {
      names.push_back(k.name);
      known += (known.empty() ? "" : ", ") + k.name;
    }
    const auto near = nearest(name, names);
    sweep_error(name, near.empty() ? fmt::format("cannot sweep this (known: {})", known)
                                   : fmt::format("cannot sweep this; did you mean '{}'?", near));
  }
  SweepAxis axis{*key, {}};
  const auto parts = split(rest, ':');
  if (parts.size() == 1) {
    for (const auto& p : split(rest, ',')) axis.values.push_back(parse_value(*key, p));
  } else if (parts.size() == 3) {
    const SweepValue a = parse_value(*key, parts[0]), b = parse_value(*key, parts[1]);
    SweepValue step = parse_value(*key, parts[2], true);
    constexpr std::size_t kMaxValues = 100000;
    if (key->kind == SweepKind::Fraction) {
      if (step.fraction <= 0) sweep_error(name, "the step must be positive");
      if (b.fraction < a.fraction) sweep_error(name, "the range ends before it starts");
      // Values by multiplication, not accumulation; a tolerance keeps 0.30:0.50:0.05 inclusive.
      // The count is compared as a double: a tiny step's quotient is past any integer's range.
      const double count = std::floor((b.fraction - a.fraction) / step.fraction + 1e-9) + 1;
      if (!(count <= static_cast<double>(kMaxValues))) sweep_error(name, "too many values");
      const auto n = static_cast<std::size_t>(count);
      for (std::size_t i = 0; i < n; ++i) {
        SweepValue v;
        v.fraction = std::round((a.fraction + static_cast<double>(i) * step.fraction) * 1e12) / 1e12;
        v.label = fraction_label(v.fraction);
        axis.values.push_back(v);
      }
    } else {
      if (step.integer <= 0) sweep_error(name, "the step must be positive");
      if (b.integer < a.integer) sweep_error(name, "the range ends before it starts");
      if ((b.integer - a.integer) / step.integer + 1 > static_cast<std::int64_t>(kMaxValues))
        sweep_error(name, "too many values");
      // By index, not accumulation: a last step past INT64_MAX would wrap instead of ending.
      const std::int64_t n = (b.integer - a.integer) / step.integer + 1;
      for (std::int64_t i = 0; i < n; ++i) {
        const std::int64_t x = a.integer + i * step.integer;  // <= b: no overflow
        SweepValue v;
        v.integer = x;
        v.label = key->kind == SweepKind::Count ? fmt::format("{}", x)
                  : key->kind == SweepKind::Duration
                      ? fmt::format("{:g}s", to_s(x))
                      : fmt::format("{:g}GiB", static_cast<double>(x) / (1024.0 * 1024.0 * 1024.0));
        axis.values.push_back(v);
      }
    }
  } else {
    sweep_error(name, "expected start:stop:step or a,b,c");
  }
  return axis;
}

struct PlanArgs {
  std::string file;
  std::vector<std::string> sets;
  std::vector<std::string> sweeps;
  std::string base_case;
  bool json = false;
  bool csv = false;
  std::string out = "-";
  std::string html;
  unsigned jobs = 0;  // 0: every core
};

// `plan --sweep`: the grid from one case, as a table, JSON or CSV (and a heat map).
void run_sweep(const Scenario& sc, const PlanArgs& a, const StepCommSource& comm) {
  if (!sc.plan->spec) sc.fail("plan", "--sweep needs a plan with cases");
  const PlanSpec& spec = *sc.plan->spec;
  std::vector<SweepAxis> axes;
  for (const auto& s : a.sweeps) {
    axes.push_back(parse_sweep(s));
    for (std::size_t i = 0; i + 1 < axes.size(); ++i)
      if (axes[i].key.name == axes.back().key.name) sweep_error(axes.back().key.name, "swept twice");
    if (axes.back().key.name == "cards" && spec.timed())
      for (const auto& v : axes.back().values)
        if (v.integer > spec.max_cards())
          sweep_error("cards", fmt::format("{} cards exceed the batch: {} sequences per step keep at most {} busy",
                                           v.integer, spec.sequences_per_step, spec.max_cards()));
    if (axes.back().key.name == "interval")
      for (const auto& v : axes.back().values)
        if (v.integer <= 0) sweep_error("interval", "checkpoint intervals must be positive");
  }
  const PlanCase* base = &spec.cases.front();
  if (!a.base_case.empty()) {
    std::vector<std::string> names;
    for (const auto& c : spec.cases) names.push_back(c.name);
    check_case_name(a.base_case, names);
    for (const auto& c : spec.cases)
      if (c.name == a.base_case) base = &c;
  }
  std::size_t total = 1;
  for (const auto& ax : axes) total *= ax.values.size();
  if (total > 1'000'000)
    sweep_error(a.sweeps.front(), fmt::format("{} combinations are too many (at most 1,000,000)", total));
  Progress progress("plan", "combinations", total, a.json || a.csv);
  const auto points = sweep_plan(spec, *base, axes, comm, progress.size_callback(), a.jobs > 0 ? a.jobs : all_cores());
  debug("plan: {} combinations in {:.2f} s", total, progress.seconds());
  std::string text;
  if (a.json)
    text = sweep_json(axes, points).dump(2) + "\n";
  else if (a.csv)
    text = sweep_csv(axes, points);
  else
    text = fmt::format("{}: sweep from {}\n", sc.name, base->name) + sweep_text(axes, points, spec);
  write_file(a.out, text);
  if (!a.html.empty()) write_file(a.html, sweep_html_report(sc.name, sc.description, base->name, axes, points, spec));
}

void run_plan(const Scenario& sc, const PlanArgs& a) {
  const PlanScenario& ps = *sc.plan;
  if (a.json && a.csv) throw InputError("--csv", 0, "", "choose one of --json and --csv");
  const StepCommSource comm = plan_step_comm(sc);

  if (!a.sweeps.empty()) return run_sweep(sc, a, comm);
  if (a.csv) throw InputError("--csv", 0, "", "CSV is for sweeps (add --sweep)");
  const std::optional<PlanEvaluation> eval = ps.spec ? std::optional(evaluate_cases(*ps.spec, comm)) : std::nullopt;
  const PlanEvaluation* ev = eval ? &*eval : nullptr;
  // Every text is made before the first file is written: a failure leaves no file half done.
  const std::string text = a.json
                               ? plan_json(sc.name, ps, ev).dump(2) + "\n"
                               : plan_text(sc.description.empty() ? sc.name : sc.name + ": " + sc.description, ps, ev);
  const std::string html = a.html.empty() ? std::string() : plan_html_report(sc.name, sc.description, ps, ev);
  write_file(a.out, text);
  if (!a.html.empty()) write_file(a.html, html);
}

}  // namespace

void add_plan_command(CLI::App& app) {
  auto a = std::make_shared<PlanArgs>();
  auto* cmd = app.add_subcommand("plan",
                                 "capacity and deadline planner: memory per card, step time, checkpoints, "
                                 "completion vs deadline (the book's design desk)");
  cmd->add_option("file", a->file, "scenario YAML file with a 'plan' section")->required();
  cmd->add_option("--set", a->sets, "override a key, e.g. --set plan.compute.efficiency=30% (repeatable)");
  auto* sweep = cmd->add_option(
      "--sweep", a->sweeps,
      "evaluate a grid: key=start:stop:step or key=a,b,c (keys: cards, efficiency, exposed_comm, input_wait, "
      "interval, zero, workspace, margin, straggler_sigma; repeatable)");
  cmd->add_option("--case", a->base_case, "the case a sweep starts from (default: the first)")->needs(sweep);
  add_jobs_option(cmd, a->jobs, "threads for --sweep (default: every core); results do not depend on it");
  cmd->add_flag("--json", a->json, "print JSON instead of tables");
  cmd->add_flag("--csv", a->csv, "with --sweep: print CSV, one row per combination");
  cmd->add_option("-o,--output", a->out, "write to this file instead of stdout")->check(file_name());
  cmd->add_option("--html", a->html,
                  "also write a self-contained HTML report to this file: memory per card against capacity, completion "
                  "against the deadline, the tables; with --sweep, a heat map of the verdicts")
      ->check(file_beside_report());
  cmd->callback([a] {
    const Scenario sc = load_scenario(a->file, a->sets);
    check_output_path("--html", a->html);
    check_output_path("--output", a->out);
    require_section(sc, "plan", "plan");
    sc.blaming("plan", [&] { run_plan(sc, *a); });  // compute, training, completion past the limit
  });
}

}  // namespace stepsim::cli
