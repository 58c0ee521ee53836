#include "cli/input/scenario.hpp"

#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "cli/input/budget.hpp"
#include "cli/input/input_files.hpp"
#include "schedules/pipeline/action_csv.hpp"
#include "sim/time.hpp"

namespace stepsim::cli {

namespace {
// Reads section `k` of `top`: a figure of it past what time or bytes can hold (an efficiency of
// 1e-300, a 2^27-token sequence) is refused at the section, file and line named.
template <class Read>
auto in_section(const Reader& top, const char* k, Read read) {
  try {
    return read(top.child(k));
  } catch (const OverflowError& e) { top.fail(top.source().overflow_key(k), e.what()); }
}

Scenario read(std::shared_ptr<Source> src) {
  Scenario sc;
  sc.file = src->file;
  sc.source = src;
  Reader top(src, src->root, "");
  if (top.has("search"))  // its own reader (search_input.hpp): say which command takes it
    top.fail("search",
             "a layout search: `stepsim search FILE` runs it (and `stepsim validate FILE` checks it); `stepsim "
             "search FILE --export OUT.yaml` writes a layout it finds as a job_step scenario (run, compare, job)");
  top.only({"name", "description", "pipeline", "data_parallel", "job", "plan", "rl", "moe", "job_step"});
  sc.name = top.opt_text("name").value_or(src->file);
  sc.description = top.opt_text("description").value_or("");
  if (top.has("pipeline")) sc.pipeline = in_section(top, "pipeline", read_pipeline);
  if (top.has("data_parallel")) sc.data_parallel = in_section(top, "data_parallel", read_data_parallel);
  if (top.has("plan")) sc.plan = in_section(top, "plan", [&](const Reader& r) { return read_plan(r, src); });
  if (top.has("job_step")) sc.job_step = in_section(top, "job_step", read_job_step);
  if (top.has("job")) {
    // The whole run's step comes from a timed plan's cases or from the job step, not both.
    const PlanSpec* plan = sc.plan && sc.plan->spec && sc.plan->spec->timed() ? &*sc.plan->spec : nullptr;
    if (plan && sc.job_step)
      top.fail("job", "the scenario's plan and job_step both give a step: keep one of them beside the job");
    sc.job = in_section(top, "job",
                        [&](const Reader& r) { return read_job(r, src, plan, sc.job_step ? &*sc.job_step : nullptr); });
  }
  if (top.has("rl")) sc.rl = in_section(top, "rl", read_rl);
  if (top.has("moe")) sc.moe = in_section(top, "moe", read_moe);
  if (!sc.pipeline && !sc.data_parallel && !sc.job && !sc.plan && !sc.rl && !sc.moe && !sc.job_step) {
    // `--set pipeline=` emptied the section the file has: that --set is what left nothing.
    for (const char* k : {"pipeline", "data_parallel", "job", "plan", "rl", "moe", "job_step"})
      if (src->overridden.count(k))
        throw InputError("--set", 0, k, "empty: the scenario has no other section to simulate");
    throw InputError(src->file, 1, "",
                     "the scenario has no section to simulate (expected 'pipeline', 'data_parallel', 'job', 'plan', "
                     "'rl', 'moe' or 'job_step')");
  }
  return sc;
}
}  // namespace

Scenario load_scenario(const std::string& file, const std::vector<std::string>& overrides) {
  return read(Source::load(file, overrides));
}

Scenario parse_scenario(const std::string& text, const std::string& name, const std::vector<std::string>& overrides) {
  return read(Source::parse(text, name, overrides));
}

Scenario scenario_from_root(const YAML::Node& root, const std::string& name,
                            const std::vector<std::string>& overrides) {
  return read(Source::from_root(root, name, overrides));
}

void Scenario::fail(const std::string& key, const std::string& message) const {
  Reader(source, source->root, "").fail_dotted(key, message);
}

std::vector<std::vector<Action>> read_actions_csv(const Reader& r) {
  const std::string name = r.text("actions_csv");
  // Relative to the scenario file, so a scenario and its schedule travel together.
  std::filesystem::path path(name);
  if (path.is_relative()) path = std::filesystem::path(r.file()).parent_path() / path;
  std::string text;
  try {
    text = read_input_file(path.string());
  } catch (const InputError& e) { r.fail("actions_csv", fmt::format("'{}': {}", path.string(), e.message())); }
  try {
    return parse_actions_csv(text);
  } catch (const ActionCsvError& e) { r.fail("actions_csv", fmt::format("{}: {}", path.string(), e.what())); }
}

namespace {

std::vector<int> read_chunk_layers(const Reader& r) {
  std::vector<int> out;
  for (const auto& text : r.texts("chunk_layers")) {
    std::string error;
    const auto n = whole_number(text, 1, INT_MAX, error);
    if (!n) r.fail("chunk_layers", fmt::format("'{}' is not a layer count (a whole number, at least 1)", text));
    out.push_back(static_cast<int>(*n));
  }
  return out;
}

bool split_backward(const Action& a) {
  return a.kind == ActionKind::BackwardInput || a.kind == ActionKind::BackwardWeight;
}

// `actions:` one entry per device, a list of actions or one string of them.
void read_inline_actions(const Reader& r, PipelineSpec& spec) {
  const YAML::Node list = r.node()["actions"];
  if (!list.IsSequence()) r.fail("actions", "expected one entry per device (a list of actions, or one string of them)");
  for (std::size_t d = 0; d < list.size(); ++d) {
    std::vector<std::string> words;
    const YAML::Node dev = list[d];
    const std::string k = fmt::format("{}[{}]", r.key("actions"), d);
    if (dev.IsSequence()) {
      for (std::size_t i = 0; i < dev.size(); ++i) {
        if (!dev[i].IsScalar()) r.fail_at(dev[i], fmt::format("{}[{}]", k, i), "expected an action like 0F3");
        words.push_back(dev[i].Scalar());
      }
    } else if (dev.IsScalar()) {
      std::string cur;
      for (char c : dev.Scalar() + " ") {
        if (c == ' ' || c == ',' || c == '\t' || c == '\n') {
          if (!cur.empty()) words.push_back(cur);
          cur.clear();
        } else
          cur += c;
      }
    } else {
      r.fail_at(dev, k, "expected a list of actions like [0F0, 0B0]");
    }
    std::vector<Action> acts;
    for (const auto& w : words) {
      std::string err;
      auto a = parse_action(w, &err);
      if (!a) r.fail_at(dev, k, err);
      if (split_backward(*a)) spec.custom_split_backward = true;
      acts.push_back(*a);
    }
    spec.custom_actions.push_back(std::move(acts));
  }
}

// `schedule:` a named one, or `custom` with `actions` or `actions_csv`.
void read_schedule(const Reader& r, PipelineSpec& spec) {
  const bool has_actions = r.has("actions") || r.has("actions_csv");
  if (r.has("actions") && r.has("actions_csv")) r.fail("actions_csv", "give either actions or actions_csv, not both");
  spec.schedule = r.opt_text("schedule").value_or(has_actions ? "custom" : "1f1b");
  if (spec.schedule != "custom" && !find_schedule(spec.schedule)) {
    const auto near = nearest(spec.schedule, schedule_names());
    r.fail("schedule", near.empty() ? fmt::format("unknown schedule '{}' (known: {}, custom)", spec.schedule,
                                                  fmt::join(schedule_names(), ", "))
                                    : fmt::format("unknown schedule '{}'; did you mean '{}'?", spec.schedule, near));
  }
  if (spec.schedule == "custom" && r.has("actions_csv")) {
    spec.custom_actions = read_actions_csv(r);
    for (const auto& list : spec.custom_actions)
      for (const Action& a : list)
        if (split_backward(a)) spec.custom_split_backward = true;
  } else if (spec.schedule == "custom") {
    if (!r.has("actions"))
      r.fail("schedule", "schedule 'custom' needs 'actions' (one list per device) or 'actions_csv'");
    read_inline_actions(r, spec);
  } else if (has_actions) {
    const char* key = r.has("actions") ? "actions" : "actions_csv";
    r.fail(key, fmt::format("{} are only read with schedule 'custom' (schedule is '{}')", key, spec.schedule));
  }
}

// `time:` per-stage durations.
void read_pipeline_times(const Reader& r, PipelineSpec& spec) {
  const int n = spec.stages;
  if (!r.has("time")) r.fail("time", "missing section (forward, backward, ... durations)");
  const Reader t = r.child("time");
  t.only({"forward", "backward", "backward_input", "backward_weight", "update", "overlap"});
  spec.forward = t.durations("forward", n);
  if (spec.forward.empty()) t.fail("forward", "missing (required)");
  spec.backward = t.durations("backward", n);
  spec.backward_input = t.durations("backward_input", n);
  spec.backward_weight = t.durations("backward_weight", n);
  if (spec.backward_input.empty() != spec.backward_weight.empty())
    t.fail(spec.backward_input.empty() ? "backward_input" : "backward_weight",
           "backward_input and backward_weight come together");
  if (spec.backward.empty() && spec.backward_input.empty())
    t.fail("backward", "missing: give backward, or backward_input and backward_weight");
  spec.update = t.durations("update", n);
  if (spec.update.empty()) spec.update.assign(n, 0);
  spec.overlap_fb = t.opt_duration("overlap");
}

}  // namespace

PipelineSpec read_pipeline(const Reader& r) {
  r.only({"stages", "microbatches", "virtual_stages", "layers", "chunk_layers", "schedule", "actions", "actions_csv",
          "time", "link", "memory"});
  PipelineSpec spec;
  spec.stages = r.count("stages", 1);
  spec.microbatches = r.count("microbatches", 1);
  spec.virtual_stages = r.opt_count("virtual_stages", 1).value_or(0);
  if (r.has("layers")) spec.layers = r.count("layers", 1);
  if (r.has("chunk_layers")) spec.chunk_layers = read_chunk_layers(r);
  read_schedule(r, spec);
  check_pipeline_budget(r, spec);  // before the per-stage values and the schedule are built
  read_pipeline_times(r, spec);
  if (r.has("link")) {
    const Reader l = r.child("link");
    l.only({"latency", "bandwidth", "wrap_latency"});
    spec.latency = l.opt_duration("latency").value_or(0);
    spec.bandwidth = l.opt_bandwidth("bandwidth").value_or(0);
    spec.wrap_latency = l.opt_duration("wrap_latency");
  }
  if (r.has("memory")) {
    const Reader m = r.child("memory");
    m.only({"activation", "message", "capacity"});
    spec.activation = m.sizes("activation", spec.stages);
    spec.message = m.opt_bytes("message").value_or(0);
    spec.capacity = m.opt_bytes("capacity");
  }
  return spec;
}

}  // namespace stepsim::cli
