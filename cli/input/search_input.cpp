#include "cli/input/search_input.hpp"

#include <algorithm>
#include <cctype>
#include <set>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli/input/budget.hpp"
#include "cli/input/job_step_input.hpp"
#include "cli/input/model_files.hpp"
#include "models/layout.hpp"
#include "models/model_limits.hpp"
#include "models/units.hpp"
#include "schedules/pipeline/registry.hpp"
#include "sim/checked.hpp"

namespace stepsim::cli {

namespace {

const std::vector<std::string>& kAxisKeys = searchable_layout_keys();

bool is_auto(const YAML::Node& n) { return n.IsScalar() && n.Scalar() == "auto"; }
bool pipeline_end(const std::string& k) { return k == "first_chunk_layers" || k == "last_chunk_layers"; }

// Appends `x` unless the list has it: a value listed twice is searched once.
template <class T>
void push_once(std::vector<T>& list, const std::type_identity_t<T>& x) {
  if (std::find(list.begin(), list.end(), x) == list.end()) list.push_back(x);
}

// A scalar, a list of scalars or `auto` (-> empty, key recorded).
std::vector<YAML::Node> values_of(const Reader& r, const std::string& k, SearchAxes& axes) {
  std::vector<YAML::Node> out;
  const YAML::Node n = r.node()[k];
  if (!n.IsDefined() || n.IsNull()) return out;
  if (is_auto(n)) {
    axes.auto_keys.push_back(k);
    return out;
  }
  if (n.IsScalar()) return {n};
  if (!n.IsSequence() || n.size() == 0) r.fail(k, "expected a value, a non-empty list of values, or auto");
  for (std::size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsScalar()) r.fail_at(n[i], fmt::format("{}[{}]", r.key(k), i), "expected a single value");
    out.push_back(n[i]);
  }
  return out;
}

std::int64_t int_of(const Reader& r, const YAML::Node& n, const std::string& k, std::int64_t min) {
  std::string error;
  const auto v = whole_number(n.Scalar(), INT64_MIN, INT64_MAX, error);
  if (!v) r.fail_at(n, r.key(k), error);
  if (*v < min) r.fail_at(n, r.key(k), fmt::format("{} is below the minimum {}", *v, min));
  return *v;
}

std::vector<int> ints(const Reader& r, const std::string& k, SearchAxes& axes, std::int64_t min, std::int64_t max) {
  std::vector<int> out;
  for (const auto& n : values_of(r, k, axes)) {
    const std::int64_t v = int_of(r, n, k, min);
    if (v > max) r.fail_at(n, r.key(k), fmt::format("{} is above the maximum {}", v, max));
    push_once(out, static_cast<int>(v));
  }
  return out;
}

// A flag, a list of them or `auto` (-> empty, key recorded), as 0 / 1; absent: {0}.
std::vector<int> flags(const Reader& r, const std::string& k, SearchAxes& axes) {
  std::vector<int> out;
  for (const auto& n : values_of(r, k, axes)) {
    bool b = false;
    if (!YAML::convert<bool>::decode(n, b)) r.fail_at(n, r.key(k), "expected true, false, a list of them or auto");
    push_once(out, b ? 1 : 0);
  }
  if (!r.has(k)) out = {0};
  return out;
}

std::vector<std::int64_t> read_cards(const Reader& hw) {
  std::vector<std::int64_t> out;
  if (!hw.has("gpus")) hw.fail("gpus", "missing: the number of cards, a list, or {from, to, step}");
  const YAML::Node n = hw.node()["gpus"];
  if (n.IsMap()) {
    const Reader g = hw.child("gpus");
    g.only({"from", "to", "step"});
    const std::int64_t from = g.integer("from", 1), to = g.integer("to", 1);
    const std::int64_t step = g.opt_integer("step", 1, kMaxGpus).value_or(1);  // c + step stays far from int64's end
    if (to < from) g.fail("to", fmt::format("{} is below from ({})", to, from));
    if (to > kMaxGpus) g.fail("to", fmt::format("more than {} cards", kMaxGpus));
    if ((to - from) / step + 1 > 4096) g.fail("step", "more than 4,096 card counts: use a larger step");
    for (std::int64_t c = from; c <= to; c += step) out.push_back(c);
  } else {
    SearchAxes dummy;
    for (const auto& x : values_of(hw, "gpus", dummy)) out.push_back(int_of(hw, x, "gpus", 1));
    if (!dummy.auto_keys.empty()) hw.fail("gpus", "give the card count(s): a number, a list or {from, to, step}");
    for (auto c : out)
      if (c > kMaxGpus) hw.fail("gpus", fmt::format("more than {} cards", kMaxGpus));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace

namespace {

// The space's size and the largest step, before any work (bad input must not mean unbounded work).
void check_search_size(const Reader& r, const Reader& lr, const SearchSpec& s) {
  const SearchAxes& a = s.axes;
  auto size_or = [](std::size_t n, std::size_t dflt) { return static_cast<double>(n == 0 ? dflt : n); };
  // An `auto` key's values, at most: tp and cp divide the node's GPUs, pp the layers, ep the
  // experts (layout_space.cpp); the others are short fixed lists.
  const auto divisors = [](std::int64_t n) {
    std::size_t count = 0;
    for (std::int64_t d = 1; d * d <= n; ++d)
      if (n % d == 0) count += d * d == n ? 1 : 2;
    return std::max<std::size_t>(count, 1);
  };
  const std::size_t node = divisors(s.cluster.node.gpus);
  const bool moe = s.model.experts > 0;
  const double space =
      static_cast<double>(a.cards.size()) * size_or(a.tp.size(), node) * size_or(a.cp.size(), node) *
      size_or(a.pp.size(), a.chunk_ends ? s.model.shape.layers + 2 : divisors(s.model.shape.layers)) *
      (a.chunk_ends ? 4 : 1) * size_or(a.vpp.size(), 8) * size_or(a.schedule.size(), 7) * size_or(a.zero.size(), 4) *
      size_or(a.micro_batch.size(), 5) * size_or(a.recompute.size(), 3) * size_or(a.sequence_parallel.size(), 2) *
      size_or(a.ep.size(), moe ? divisors(s.model.experts) : 1) * size_or(a.expert_tp.size(), moe ? node : 1) *
      size_or(a.cp_comm.size(), 3) * size_or(a.dp_replicate.size(), 2) * static_cast<double>(a.global_batch.size()) *
      size_or(a.dp.size(), 1) * size_or(a.recompute_layers.size(), 1) * size_or(a.keep_gathered.size(), 2) *
      size_or(a.offload_optimizer.size(), 2) * size_or(a.offload_activations.size(), 1);
  // The largest step any layout may simulate: the most micro-batches (the largest global batch
  // in micro-batches of the smallest size, dp 1) through chunks up to one per layer (DualPipe: 2).
  JobLayout widest;
  widest.global_batch = *std::max_element(a.global_batch.begin(), a.global_batch.end());
  widest.micro_batch = a.micro_batch.empty() ? 1 : *std::min_element(a.micro_batch.begin(), a.micro_batch.end());
  widest.pp = static_cast<int>(std::min<std::int64_t>(s.model.shape.layers, 1 << 20));
  check_budget(lr, "global_batch", 2 * job_step_ops_bound(widest, s.model.shape.layers));
  if (space > static_cast<double>(kMaxSearchSpace))
    r.fail(
        "layout",
        fmt::format("the search space may hold up to {:.3g} layouts, more than {}: fix some keys or shorten the lists",
                    space, kMaxSearchSpace));
}

// The keys whose values are names or flags: schedule, recompute, sequence_parallel,
// keep_gathered, offload_optimizer, cp_comm.
void read_named_axes(const Reader& lr, SearchAxes& a) {
  for (const auto& n : values_of(lr, "schedule", a)) {
    const std::string name = n.Scalar();
    const ScheduleFamily* f = find_schedule(name);
    if (!f) {
      const auto near = nearest(name, schedule_names());
      lr.fail_at(n, lr.key("schedule"),
                 near.empty() ? fmt::format("unknown schedule '{}'", name)
                              : fmt::format("unknown schedule '{}'; did you mean '{}'?", name, near));
    }
    push_once(a.schedule, f->name);
  }
  a.default_schedule = !lr.has("schedule");
  for (const auto& n : values_of(lr, "recompute", a)) {
    const std::string v = n.Scalar();
    const auto rc = recompute_from_name(v);
    if (!rc)
      lr.fail_at(n, lr.key("recompute"), fmt::format("unknown recompute '{}' (none, selective, op, full or auto)", v));
    push_once(a.recompute, *rc);
  }
  if (!lr.has("recompute")) a.recompute = {JobRecompute::None};
  a.sequence_parallel = flags(lr, "sequence_parallel", a);
  a.keep_gathered = flags(lr, "keep_gathered", a);
  a.offload_optimizer = flags(lr, "offload_optimizer", a);
  for (const auto& n : values_of(lr, "cp_comm", a)) {
    const auto comm = cp_comm_from_name(n.Scalar());
    if (!comm)
      lr.fail_at(n, lr.key("cp_comm"), fmt::format("unknown cp_comm '{}' (p2p, all_gather, a2a or auto)", n.Scalar()));
    push_once(a.cp_comm, *comm);
  }
  if (!lr.has("cp_comm")) a.cp_comm = {CpComm::P2p};
}

// The pipeline's ends, `auto` (either key, the other auto or left out): both searched over the
// splits Megatron-Core's pipeline takes (auto_chunk_ends). A count or `even` is a fixed key.
void read_chunk_ends(const Reader& lr, SearchAxes& a) {
  const char* keys[] = {"first_chunk_layers", "last_chunk_layers"};
  for (const char* k : keys)
    if (lr.has(k) && lr.node()[k].IsSequence())
      lr.fail(k, "a count of layers, even, or auto (the ends searched together); not a list");
  for (const char* k : keys) a.chunk_ends = a.chunk_ends || (lr.has(k) && is_auto(lr.node()[k]));
  for (const char* k : keys)
    if (a.chunk_ends && lr.has(k) && !is_auto(lr.node()[k]))
      lr.fail(k, "auto searches both ends together: make this one auto too, or leave it out");
}

// The searched layout keys (lists, `auto`, or absent: job_step's default), and the space's size.
void read_axes(const Reader& r, const Reader& lr, SearchSpec& s) {
  SearchAxes& a = s.axes;
  const int layers = s.model.shape.layers;
  a.tp = ints(lr, "tp", a, 1, 1024);
  a.pp = ints(lr, "pp", a, 1, layers);
  a.vpp = ints(lr, "virtual_stages", a, 1, layers);
  a.dp = ints(lr, "dp", a, 1, kMaxGpus);
  a.dp_listed = !a.dp.empty();
  a.cp = ints(lr, "cp", a, 1, 1024);
  a.ep = ints(lr, "ep", a, 1, 1024);
  a.micro_batch = ints(lr, "micro_batch", a, 1, kMaxGpus);
  a.zero = ints(lr, "zero", a, 0, 3);
  if (lr.has("fsdp")) {
    const YAML::Node f = lr.node()["fsdp"];
    if (is_auto(f)) {
      if (a.zero.empty() && !lr.has("zero")) a.zero = {0, 1, 2, 3};
    } else if (lr.flag("fsdp", false)) {
      if (lr.has("zero")) lr.fail("fsdp", "fsdp is zero 3; drop one of them");
      a.zero = {3};
    }
  }
  // Keys not given stay at the job_step default (not searched); `auto` (empty list) searches.
  auto absent_default = [&](const char* k, std::vector<int>& v, int dflt) {
    if (!lr.has(k)) v = {dflt};
  };
  absent_default("tp", a.tp, 1);
  absent_default("pp", a.pp, 1);
  absent_default("cp", a.cp, 1);
  absent_default("ep", a.ep, 1);
  absent_default("micro_batch", a.micro_batch, 1);
  if (!lr.has("zero") && !lr.has("fsdp")) a.zero = {0};
  if (!lr.has("virtual_stages")) a.vpp = {1};
  read_named_axes(lr, a);
  a.expert_tp = ints(lr, "expert_tp", a, 1, 1024);
  if (!a.expert_tp.empty() && s.model.experts == 0)
    lr.fail("expert_tp", "expert_tp splits routed experts: the model has none");
  absent_default("expert_tp", a.expert_tp, 0);
  // HSDP's replicas: a list, or `auto` (one shard group of every rank, and one per node).
  a.dp_replicate = ints(lr, "dp_replicate", a, 1, kMaxGpus);
  absent_default("dp_replicate", a.dp_replicate, 1);
  // Partial recompute of the layouts that recompute fully: counts, or `auto` (the fewest that fit).
  // `all` in the list: every layer (as job_step's `recompute_layers: all`), beside counts.
  for (const auto& n : values_of(lr, "recompute_layers", a)) {
    if (n.Scalar() == "all") {
      push_once(a.recompute_layers, -1);
      continue;
    }
    if (!n.Scalar().empty() && std::isalpha(static_cast<unsigned char>(n.Scalar().front())))
      lr.fail_at(n, lr.key("recompute_layers"),
                 fmt::format("'{}': expected a count of layers or all (a list of them), or auto", n.Scalar()));
    const std::int64_t v = int_of(lr, n, "recompute_layers", 0);
    if (v > layers) lr.fail_at(n, lr.key("recompute_layers"), fmt::format("{} is above the maximum {}", v, layers));
    push_once(a.recompute_layers, static_cast<int>(v));
  }
  absent_default("recompute_layers", a.recompute_layers, -1);
  // Activations on the host: counts below the model's layers, or `auto` (the fewest that fit).
  if (lr.has("offload_activations")) a.offload_activations.clear();
  for (const auto& n : values_of(lr, "offload_activations", a)) {
    const std::int64_t v = int_of(lr, n, "offload_activations", 0);
    if (v >= layers)
      lr.fail_at(n, lr.key("offload_activations"),
                 fmt::format("{} of the {} layers: the last layer's activations stay on the GPU (at most {})", v,
                             layers, layers - 1));
    push_once(a.offload_activations, static_cast<int>(v));
  }
  if (lr.has("recompute_layers") && !a.recompute.empty() &&
      std::find(a.recompute.begin(), a.recompute.end(), JobRecompute::Full) == a.recompute.end())
    lr.fail("recompute_layers", "recomputes the first layers of each chunk whole: the recompute list has no full");
  for (const char* k : kOpenableKeys)
    if (!lr.has(k) && !(std::string_view(k) == "zero" && lr.has("fsdp")) &&
        !(std::string_view(k) == "ep" && s.model.experts == 0))
      a.left_out.emplace_back(k);
  for (const auto& k : kAxisKeys) {
    const YAML::Node n = lr.has(k) ? lr.node()[k] : YAML::Node();
    if (is_auto(n) || (n.IsSequence() && n.size() > 1)) a.opened.push_back(k);
  }

  check_search_size(r, lr, s);
}

// `input_wait`, `task` and `checkpoint`: the run to finish and what saves and failures cost.
void read_task(const Reader& r, SearchSpec& s) {
  s.input_wait = r.opt_duration("input_wait").value_or(0);
  if (r.has("task")) {
    const Reader t = r.child("task");
    t.only({"tokens", "deadline", "reserved"});
    if (!t.has("tokens")) t.fail("tokens", "missing: the tokens to train on");
    s.task.tokens = t.integer("tokens", 1);
    s.task.deadline = t.opt_duration("deadline").value_or(0);
    s.task.reserved = t.opt_duration("reserved").value_or(0);
    if (s.task.deadline > 0 && s.task.reserved >= s.task.deadline) {
      // Blamed at the one --set changed, if it changed one of the two.
      if (t.overridden("deadline") && !t.overridden("reserved"))
        t.fail("deadline", fmt::format("must be longer than the {} reserved", format_duration(s.task.reserved)));
      t.fail("reserved", "must be shorter than the deadline");
    }
  }
  if (r.has("checkpoint")) {
    const Reader c = r.child("checkpoint");
    c.only({"size", "bandwidth", "restore", "interval", "card_mtbf"},
           {{"every", "interval"}, {"storage", "bandwidth"}});
    if (auto v = c.opt_bytes("size")) s.task.checkpoint_bytes = *v;
    if (auto v = c.opt_bandwidth("bandwidth")) s.task.storage_bandwidth = *v;
    s.task.restore = c.opt_duration("restore").value_or(0);
    if (auto v = c.opt_duration("interval")) {
      if (*v <= 0) c.fail("interval", "must be positive");
      s.task.interval = *v;
    }
    s.task.card_mtbf = c.opt_duration("card_mtbf").value_or(0);
    if (c.has("card_mtbf") && s.task.card_mtbf <= 0)
      c.fail("card_mtbf", "must be positive (leave it out for no failures)");
  }
}

SearchScenario read_search_scenario(const std::shared_ptr<Source>& src, const std::vector<std::string>& search_sets);

// The run a job beside a job step asks for, as a search's `task:` and `checkpoint:` (the job's own
// nodes): its tokens, deadline and reserved days; its card MTBF, restore, the checkpoint's storage
// rate (`bandwidth`), size and interval (`every` as a duration; `young` is the search's default).
// Its other keys are the whole-run Monte Carlo's (`stepsim job`).
void job_task(const Reader& job, YAML::Node& section) {
  YAML::Node task(YAML::NodeType::Map), checkpoint(YAML::NodeType::Map);
  for (const char* k : {"tokens", "deadline", "reserved"})
    if (job.has(k)) task[k] = job.node()[k];
  for (const char* k : {"card_mtbf", "restore"})
    if (job.has(k)) checkpoint[k] = job.node()[k];
  if (job.has("checkpoint") && job.node()["checkpoint"].IsMap()) {
    const Reader c = job.child("checkpoint");
    if (c.has("storage")) checkpoint["bandwidth"] = c.node()["storage"];
    if (c.has("size")) checkpoint["size"] = c.node()["size"];
    if (c.has("every") && !(c.node()["every"].IsScalar() && c.node()["every"].Scalar() == "young"))
      checkpoint["interval"] = c.node()["every"];
  }
  section["task"] = task;
  if (checkpoint.size() > 0) section["checkpoint"] = checkpoint;
}

// `--set search.KEY=VALUE` on a job_step scenario: a key of the search made around the step (a
// searched layout key, top, rank, the task or the checkpoint). The step's own keys, which it shares
// with the search, are set as `run` sets them (`--set job_step.KEY=VALUE`).
void check_around_set(const std::string& set) {
  const std::string key = set.substr(0, set.find('='));
  const std::vector<std::string> parts = split_dots(key);
  const auto in = [](const std::string& k, const auto& list) {
    return std::find(list.begin(), list.end(), k) != list.end();
  };
  const bool layout_axis = parts.size() == 3 && parts[1] == "layout" && in(parts[2], kAxisKeys) && parts[2] != "fsdp";
  const bool search_key =
      parts.size() >= 2 && in(parts[1], std::vector<std::string>{"top", "rank", "task", "checkpoint"});
  if (layout_axis || search_key) return;
  if (parts.size() >= 2 && in(parts[1], std::vector<std::string>{"model", "hardware", "layout", "input_wait"}))
    throw InputError(
        "--set", 0, key,
        fmt::format("searching around a job step, its own keys are set as `run` sets them: --set "
                    "job_step.{}=...{}",
                    fmt::join(parts.begin() + 1, parts.end(), "."),
                    parts[1] == "layout" ? " (search.layout takes the searched keys: tp, pp, cp, ep, ...)" : ""));
  throw InputError("--set", 0, key,
                   "searching around a job step: search.layout.KEY opens or narrows a searched key (tp, pp, cp, "
                   "ep, ...); search.top, search.rank, search.task and search.checkpoint as in a search section");
}

// A job_step scenario as the search around its step: its model, hardware (on the step's GPUs) and
// input wait as they are, its layout with kAroundKeys opened, `recompute_layers` N as [all, N],
// every other key fixed as the step has it; the step's own layout is spec.around. The step is read
// as `run` reads it, but not fitting its memory is a result here (the search finds what fits).
// A `job:` beside it with `tokens` is the search's task (job_task); `variants:` are not read.
// `search_sets` (--set search.*) apply to the search so made: `search.layout.cp=auto` opens cp.
SearchScenario search_around_step(const std::shared_ptr<const Source>& src, const Reader& top,
                                  const std::vector<std::string>& search_sets) {
  // New maps holding the file's own nodes (errors point at their lines); a key given a new value
  // is not copied first: assigning to a node shared with the file would change the file's.
  const Reader js = top.child("job_step");
  YAML::Node allowed(YAML::NodeType::Map);
  for (const auto& k : js.keys())
    if (k != "allow_oom") allowed[k] = js.node()[k];
  allowed["allow_oom"] = true;
  const JobStepScenario step = read_job_step(js.over(allowed, js.path()));
  YAML::Node section(YAML::NodeType::Map);
  section["model"] = js.node()["model"];
  if (js.has("input_wait")) section["input_wait"] = js.node()["input_wait"];
  YAML::Node hardware(YAML::NodeType::Map);
  for (const auto& k : js.child("hardware").keys())
    if (k != "gpus") hardware[k] = js.node()["hardware"][k];
  hardware["gpus"] = step.spec.layout.ranks();
  section["hardware"] = hardware;
  YAML::Node layout(YAML::NodeType::Map);
  const Reader lr = js.child("layout");
  const auto opened = [](const std::string& k) {
    return std::find(kAroundKeys.begin(), kAroundKeys.end(), k) != kAroundKeys.end();
  };
  for (const auto& k : lr.keys()) {
    const YAML::Node n = lr.node()[k];
    if (k == "dp" || k == "fsdp" || opened(k)) continue;
    if (k == "recompute_layers" && n.IsScalar() && !is_auto(n) && n.Scalar() != "all") {
      YAML::Node both(YAML::NodeType::Sequence);
      both.push_back("all");
      both.push_back(n.Scalar());
      layout[k] = both;
    } else {
      layout[k] = n;
    }
  }
  for (const char* k : kAroundKeys) layout[k] = "auto";
  section["layout"] = layout;
  if (top.has("job") && top.child("job").has("tokens")) job_task(top.child("job"), section);
  YAML::Node root(YAML::NodeType::Map);
  for (const char* k : {"name", "description"})
    if (top.has(k)) root[k] = src->root[k];
  root["search"] = section;
  for (const auto& set : search_sets) check_around_set(set);
  auto around = std::make_shared<Source>(Source{src->file, root, src->overridden});
  Source::apply_overrides(*around, search_sets);
  SearchScenario sc = read_search_scenario(around, {});
  sc.spec.around = Candidate{-1, step.spec.layout.ranks(), step.spec.layout};
  sc.step_source = src;
  return sc;
}

SearchScenario read_search_scenario(const std::shared_ptr<Source>& src, const std::vector<std::string>& search_sets) {
  const Reader top(src, src->root, "");  // sees the search's --set below: they change its root in place
  if (!top.has("search") && top.has("job_step")) {
    top.only({"name", "description", "job_step", "job"});
    return search_around_step(src, top, search_sets);
  }
  Source::apply_overrides(*src, search_sets);
  SearchScenario sc;
  sc.source = src;
  sc.file = src->file;
  if (!top.has("search"))
    top.fail("search",
             "missing: a search section (model, hardware, layout with lists or auto), or a job_step to search around");
  top.only({"name", "description", "search"});
  sc.name = top.opt_text("name").value_or("search");
  sc.description = top.opt_text("description").value_or("");
  const Reader r = top.child("search");
  r.only({"model", "hardware", "layout", "input_wait", "task", "checkpoint", "top", "rank"});
  if (!r.has("model")) r.fail("model", "missing (a model file, fields or a built-in name)");
  if (!r.has("hardware")) r.fail("hardware", "missing (preset, gpus, ...)");
  if (!r.has("layout")) r.fail("layout", "missing (global_batch, and lists or auto for the keys to search)");
  SearchSpec& s = sc.spec;
  s.model = read_job_model(r, "model");
  s.cluster = read_cluster(r, "hardware");
  s.axes.cards = read_cards(r.child("hardware"));

  // Fixed layout keys through the job_step reader: a map holding every key but the searched ones.
  const Reader lr = r.child("layout");
  read_chunk_ends(lr, s.axes);  // before the fixed keys are read, which take the ends as counts
  YAML::Node fixed(YAML::NodeType::Map);
  for (const auto& k : lr.keys())
    if (std::find(kAxisKeys.begin(), kAxisKeys.end(), k) == kAxisKeys.end() ||
        (pipeline_end(k) && !is_auto(lr.node()[k])))
      fixed[k] = lr.node()[k];
  SearchAxes& a = s.axes;
  a.global_batch.clear();
  for (const auto& n : values_of(lr, "global_batch", a)) push_once(a.global_batch, int_of(lr, n, "global_batch", 1));
  if (a.global_batch.empty())
    lr.fail("global_batch", "give the global batch (sequences per step; a list to search it)");
  fixed["global_batch"] = a.global_batch.front();
  // Unknown keys are caught here (read_layout's list plus the searched ones).
  lr.only(layout_keys());
  s.base = read_layout(Reader(src, fixed, lr.path()));
  if (s.base.smallest_offload)
    lr.fail("offload_fraction",
            "auto (the smallest share that fits) is a job step's: a search takes a share, the "
            "same for every layout that offloads");
  fail_on(lr, check_accelerator_kernels(s.base, s.cluster.accelerator));
  s.base.global_batch = a.global_batch.front();

  read_axes(r, lr, s);
  read_task(r, s);
  s.top = static_cast<int>(r.opt_integer("top", 1, 10000).value_or(10));  // as --top says it
  const std::string rank = r.opt_text("rank").value_or("time");
  if (rank == "time")
    s.rank = SearchRank::Step;
  else if (rank == "cost")
    s.rank = SearchRank::Cost;
  else if (rank == "days")
    s.rank = SearchRank::Days;
  else
    r.fail("rank", fmt::format("unknown rank '{}' (time, cost or days)", rank));
  if (s.rank == SearchRank::Days && s.task.tokens <= 0) r.fail("rank", "rank days needs a task (tokens, deadline)");
  return sc;
}

}  // namespace

void SearchScenario::fail_step(const SpecError& e) const {
  if (!step_source) throw e;
  Reader(step_source, step_source->root, "").fail_dotted("job_step." + e.key(), e.what());
}

namespace {
// The --set overrides of `search` and `search.*` (second) apart from the others (first): on a
// job_step scenario they are the search's made around its step, applied once it is made.
std::pair<std::vector<std::string>, std::vector<std::string>> search_sets_apart(
    const std::vector<std::string>& overrides) {
  std::pair<std::vector<std::string>, std::vector<std::string>> apart;
  for (const auto& set : overrides) {
    const std::string_view key = std::string_view(set).substr(0, set.find('='));
    (key == "search" || key.substr(0, 7) == "search." ? apart.second : apart.first).push_back(set);
  }
  return apart;
}

// A figure past what time or bytes can hold (an efficiency of 1e-300) refused at the section.
SearchScenario read_or_blame(const std::shared_ptr<Source>& src, const std::vector<std::string>& search_sets) {
  try {
    return read_search_scenario(src, search_sets);
  } catch (const OverflowError& e) {
    const Reader top(src, src->root, "");
    top.fail(top.has("search") ? "search" : "job_step", e.what());
  }
}
}  // namespace

void SearchScenario::fail_section(const OverflowError& e) const {
  const auto& src = step_source ? step_source : source;
  Reader(src, src->root, "").fail(src->overflow_key(step_source ? "job_step" : "search"), e.what());
}

SearchScenario load_search(const std::string& file, const std::vector<std::string>& overrides) {
  const auto [file_sets, search_sets] = search_sets_apart(overrides);
  return read_or_blame(Source::load(file, file_sets), search_sets);
}

SearchScenario parse_search(const std::string& text, const std::string& name,
                            const std::vector<std::string>& overrides) {
  const auto [file_sets, search_sets] = search_sets_apart(overrides);
  return read_or_blame(Source::parse(text, name, file_sets), search_sets);
}

}  // namespace stepsim::cli
