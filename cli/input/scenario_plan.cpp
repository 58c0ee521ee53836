#include "cli/input/scenario_plan.hpp"

#include <cmath>

#include <fmt/format.h>

#include "cli/input/model_files.hpp"
#include "models/accelerators.hpp"
#include "models/model_limits.hpp"
#include "models/training_state.hpp"
#include "models/units.hpp"
#include "sim/checked.hpp"

namespace stepsim::cli {

namespace {

constexpr int kMaxSavedArrays = 1024;  // arrays a layer keeps for its backward

// A count that may be written 100000000000, 1e11 or 100B (Reader::opt_integer), as the planner's double.
std::optional<double> opt_count(const Reader& r, const std::string& k) {
  const auto v = r.opt_integer(k, 1);
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

double required_count(const Reader& r, const std::string& k) {
  const auto v = opt_count(r, k);
  if (!v) r.fail(k, "missing (required)");
  return *v;
}

double fraction(const Reader& r, const std::string& k, double fallback, bool allow_zero) {
  const auto v = r.opt_number(k);
  if (!v) return fallback;
  if (!(*v <= 1.0) || *v < 0 || (!allow_zero && *v == 0))
    r.fail(k, allow_zero ? "expected a fraction from 0 to 1 (or a percentage like 25%)"
                         : "expected a fraction above 0 and at most 1 (or a percentage like 40%)");
  return *v;
}

std::vector<int> int_list(const Reader& r, const std::string& k) {
  std::vector<int> out;
  for (const auto& t : r.texts(k)) {
    std::string error;
    const auto v = whole_number(t, 1, 1 << 30, error);
    if (!v) r.fail(k, error);
    out.push_back(static_cast<int>(*v));
  }
  return out;
}

std::vector<Time> positive_durations(const Reader& r, const std::string& k) {
  std::vector<Time> out;
  for (const auto& t : r.texts(k)) {
    std::string err;
    const auto v = parse_duration(t, &err);
    if (!v) r.fail(k, err);
    if (*v <= 0) r.fail(k, fmt::format("'{}' must be positive", t));
    out.push_back(*v);
  }
  return out;
}

std::vector<double> fraction_list(const Reader& r, const std::string& k) {
  std::vector<double> out;
  for (const auto& t : r.texts(k)) {
    std::size_t used = 0;
    double v = 0;
    try {
      v = std::stod(t, &used);
    } catch (...) { used = 0; }
    if (used + 1 == t.size() && t.back() == '%')
      v /= 100.0;
    else if (used == 0 || used != t.size())
      r.fail(k, fmt::format("'{}' is not a number", t));
    if (!(v > 0 && v <= 1)) r.fail(k, fmt::format("'{}' is not a fraction above 0 and at most 1", t));
    out.push_back(v);
  }
  return out;
}

const Accelerator& accelerator_named(const Reader& r, const std::string& k, const std::string& name) {
  const Accelerator* a = find_accelerator(name);
  if (!a && find_cluster_preset(name))
    r.fail(k, fmt::format("'{}' is a job_step preset the plan's table does not have (it has: {}; a job_step scenario "
                          "takes every preset)",
                          name, fmt::join(accelerator_names(), ", ")));
  if (!a) {
    const auto near = nearest(name, accelerator_names());
    r.fail(k, near.empty()
                  ? fmt::format("unknown accelerator '{}' (known: {})", name, fmt::join(accelerator_names(), ", "))
                  : fmt::format("unknown accelerator '{}'; did you mean '{}'?", name, near));
  }
  return *a;
}

void read_model(const Reader& r, PlanSpec& spec) {
  if (!r.has("model")) r.fail("model", "missing: a built-in model name or {parameters, layers, width, saved_arrays}");
  if (r.node()["model"].IsScalar()) {
    const std::string name = r.text("model");
    const TransformerConfig* c = find_transformer(name);
    if (!c) {
      const auto near = nearest(name, transformer_names());
      r.fail("model", near.empty() ? fmt::format("unknown model '{}' (known: {}, or a map with parameters)", name,
                                                 fmt::join(transformer_names(), ", "))
                                   : fmt::format("unknown model '{}'; did you mean '{}'?", name, near));
    }
    spec.model.name = name;
    spec.model.shape = *c;
    spec.model.parameters = count_parameters(*c).total;
    return;
  }
  const Reader m = r.child("model");
  m.only({"name", "parameters", "layers", "width", "saved_arrays"});
  spec.model.name = m.opt_text("name").value_or("model");
  spec.model.parameters = static_cast<std::int64_t>(required_count(m, "parameters"));
  // Bytes of state are parameters x up to 20-odd bytes each, kept in int64: bounded well below.
  if (spec.model.parameters > kMaxParameters)
    m.fail("parameters",
           fmt::format("{:g} is too large: at most {:g} parameters (1,000x the largest models trained)",
                       static_cast<double>(spec.model.parameters), static_cast<double>(kMaxParameters)));
  // Bounded as a job's model is (models/model_limits.hpp): activations are layers x arrays x width.
  spec.model.layers = static_cast<int>(m.opt_integer("layers", 1, kMaxLayers).value_or(1));
  spec.model.width = m.opt_integer("width", 1, kMaxHidden).value_or(1);
  spec.model.saved_arrays = static_cast<int>(m.opt_integer("saved_arrays", 0, kMaxSavedArrays).value_or(0));
}

// Bytes per parameter of each resident array; absent ones keep mixed-precision Adam's.
StateFormat read_state_format(const Reader& f) {
  f.only({"weights", "gradients", "master", "moment1", "moment2"});
  StateFormat format;
  format.weights = f.opt_count("weights", 0).value_or(2);
  format.gradients = f.opt_count("gradients", 0).value_or(2);
  format.master = f.opt_count("master", 0).value_or(4);
  format.moment1 = f.opt_count("moment1", 0).value_or(4);
  format.moment2 = f.opt_count("moment2", 0).value_or(4);
  // Sums of these are ints, and x 10^15 parameters stay inside int64.
  for (const char* k : {"weights", "gradients", "master", "moment1", "moment2"})
    if (f.has(k) && f.count(k, 0) > kMaxBytesPerParameter)
      f.fail(k, fmt::format("{} bytes per parameter is too many (at most {})", f.count(k, 0), kMaxBytesPerParameter));
  return format;
}

ReshardQuestion read_reshard(const Reader& r, const std::optional<PlanSpec>& spec) {
  r.only({"tensor", "shape", "from", "to", "state_bytes"});
  ReshardQuestion q;
  q.tensor = r.opt_text("tensor").value_or("tensor");
  const YAML::Node shape = r.node()["shape"];
  if (!shape.IsDefined()) r.fail("shape", "missing: [rows, columns] of the matrix, split by rows");
  if (!shape.IsSequence() || shape.size() != 2) r.fail("shape", "expected [rows, columns], e.g. [12288, 4096]");
  std::int64_t dims[2] = {0, 0};
  for (std::size_t i = 0; i < 2; ++i) {
    std::string error;
    // No matrix of a model is wider than its vocabulary's limit.
    const auto d = shape[i].IsScalar() ? whole_number(shape[i].Scalar(), 1, kMaxVocab, error) : std::nullopt;
    if (!d)
      r.fail_at(shape[i], fmt::format("{}[{}]", r.key("shape"), i),
                fmt::format("expected a whole number from 1 to {}", kMaxVocab));
    dims[i] = *d;
  }
  q.rows = dims[0];
  q.cols = dims[1];
  q.from = r.count("from", 1);
  q.to = r.count("to", 1);
  if (q.from > q.rows) r.fail("from", fmt::format("more ranks than the {} rows", q.rows));
  if (q.to > q.rows) r.fail("to", fmt::format("more ranks than the {} rows", q.rows));
  if (r.has("state_bytes"))
    q.format = read_state_format(r.child("state_bytes"));
  else if (spec)
    q.format = spec->format;
  return q;
}

KvCacheQuestion read_kv_cache(const Reader& r, const std::optional<PlanSpec>& spec) {
  r.only({"model", "tokens", "bytes"});
  KvCacheQuestion q;
  if (r.has("model"))
    q.model = read_transformer(r, "model");
  else if (spec && spec->model.shape)
    q.model = *spec->model.shape;
  else
    r.fail("model", "missing: the KV cache needs a model with shapes (layers, kv_heads, head_dim)");
  if (q.model.layers < 1 || q.model.kv_heads < 1 || q.model.head_dim < 1)
    r.fail("model", "the model needs layers, kv_heads and head_dim for its KV cache");
  for (int n : int_list(r, "tokens")) q.tokens.push_back(n);
  if (q.tokens.empty()) r.fail("tokens", "missing: a list of sequence lengths, e.g. [8192]");
  q.bytes = r.opt_count("bytes", 1).value_or(2);
  return q;
}

RecomputePolicy read_recompute(const Reader& r, const std::string& k) {
  const std::string s = r.opt_text(k).value_or("none");
  if (s == "none") return {RecomputeKind::None, 0};
  if (s == "selective") return {RecomputeKind::Selective, 0};
  if (s == "full") return {RecomputeKind::Full, 0};
  if (s.rfind("keep ", 0) == 0) {
    std::size_t used = 0;
    int n = 0;
    try {
      n = std::stoi(s.substr(5), &used);
    } catch (...) { used = 0; }
    if (used > 0 && used == s.size() - 5 && n >= 1) return {RecomputeKind::Keep, n};
  }
  r.fail(k,
         fmt::format("'{}' is not a recompute policy (none, selective, full, or 'keep N' saved arrays per layer)", s));
}

PlanCase read_case(const Reader& c, const PlanSpec& spec) {
  c.only({"name", "cards", "efficiency", "exposed_comm", "input_wait", "zero", "recompute"});
  PlanCase pc;
  pc.cards = c.count("cards", 1);
  pc.name = c.opt_text("name").value_or(fmt::format("{} cards", pc.cards));
  if (c.has("efficiency")) pc.efficiency = fraction(c, "efficiency", 0, false);
  pc.exposed_comm = c.opt_duration("exposed_comm");
  pc.input_wait = c.opt_duration("input_wait");
  if (const auto z = c.opt_integer("zero", 0)) {
    if (*z > 3) c.fail("zero", fmt::format("ZeRO stages are 0 to 3 (got {})", *z));
    pc.zero_stage = static_cast<int>(*z);
  }
  if (c.has("recompute")) {
    pc.recompute = read_recompute(c, "recompute");
    if (pc.recompute->kind == RecomputeKind::Selective && !spec.model.shape)
      c.fail("recompute", "selective recompute needs a model with shapes (use 'keep N' for a model given by counts)");
  }
  return pc;
}

// `task:` the tokens to train on and the micro-batch. Without tokens the plan is memory-only.
void read_task(const Reader& r, PlanSpec& spec) {
  const Reader t = r.child("task");
  t.only({"tokens", "sequence", "sequences_per_step", "microbatch_sequences"});
  spec.tokens = t.opt_integer("tokens", 1).value_or(0);  // exact: near 2^63 a double rounds past int64
  spec.sequence = t.integer("sequence", 1, kMaxSeq);
  spec.microbatch_sequences = t.opt_count("microbatch_sequences", 1).value_or(1);
  spec.sequences_per_step = spec.timed() ? t.integer("sequences_per_step", 1, kMaxGlobalBatch)
                                         : t.opt_integer("sequences_per_step", 1, kMaxGlobalBatch)
                                               .value_or(spec.microbatch_sequences);
  if (!checked_mul(spec.sequence, spec.sequences_per_step))
    t.fail("sequences_per_step", fmt::format("sequence x sequences_per_step = {} x {} tokens per step is too large",
                                             spec.sequence, spec.sequences_per_step));
  if (spec.sequences_per_step % spec.microbatch_sequences != 0)
    t.fail("microbatch_sequences", fmt::format("must divide sequences_per_step ({})", spec.sequences_per_step));
}

// `task`, `deadline` and the checks that tie them together.
void read_task_and_deadline(const Reader& r, PlanSpec& spec) {
  if (r.has("task")) read_task(r, spec);
  if (r.has("deadline")) {
    const Reader d = r.child("deadline");
    d.only({"within", "reserved"});
    spec.deadline = d.duration("within");
    spec.reserved = d.opt_duration("reserved").value_or(0);
    if (spec.reserved >= spec.deadline) d.fail("reserved", "leaves no time for training (must be less than 'within')");
  }
  if (spec.timed() && spec.deadline == 0) r.fail("deadline", "missing: a plan with a task needs {within, reserved}");
  if (!spec.timed() && r.has("deadline"))
    r.fail("task", "a deadline needs a task with tokens, sequence and sequences_per_step");
  if (spec.sequence == 0 && !(r.has("memory") && r.child("memory").has("workspace")))
    r.fail("task", "missing: the micro-batch's {sequence, microbatch_sequences} sizes the activations");
}

void read_plan_memory(const Reader& r, PlanSpec& spec) {
  if (r.has("memory")) {
    const Reader m = r.child("memory");
    m.only({"state_bytes", "zero", "workspace", "recompute", "activation_bytes", "logit_bytes", "prefetch", "margin"});
    if (m.has("state_bytes")) spec.format = read_state_format(m.child("state_bytes"));
    spec.zero_stage = m.opt_count("zero", 0).value_or(0);
    if (spec.zero_stage > 3) m.fail("zero", fmt::format("ZeRO stages are 0 to 3 (got {})", spec.zero_stage));
    spec.workspace = m.opt_bytes("workspace");
    spec.recompute = read_recompute(m, "recompute");
    if (spec.recompute.kind == RecomputeKind::Selective && !spec.model.shape)
      m.fail("recompute", "selective recompute needs a model with shapes (use 'keep N' for a model given by counts)");
    // Bytes per element (BF16 2, FP32 4; FP64's 8 the most): 2B would be two billion.
    spec.activation_bytes = static_cast<int>(m.opt_integer("activation_bytes", 1, 8).value_or(2));
    spec.logit_bytes = static_cast<int>(m.opt_integer("logit_bytes", 1, 8).value_or(2));
    spec.prefetch = m.opt_count("prefetch", 0).value_or(1);
    spec.margin = fraction(m, "margin", 0, true);
  }
  if (!spec.workspace && !spec.model.shape && spec.model.saved_arrays == 0)
    r.fail("memory", "missing workspace: give the activations and buffers, or a model with shapes or saved_arrays");
}

void read_plan_compute(const Reader& r, PlanSpec& spec) {
  if (r.has("compute")) {
    const Reader c = r.child("compute");
    c.only({"efficiency", "flops_per_token", "peak"});
    spec.efficiency = fraction(c, "efficiency", 0.4, false);
    spec.flops_per_token = c.opt_number("flops_per_token");
    if (spec.flops_per_token && *spec.flops_per_token <= 0) c.fail("flops_per_token", "must be positive");
    if (const auto p = c.opt_number("peak")) {
      if (*p <= 0) c.fail("peak", "must be positive (FLOP/s)");
      spec.accelerator.peak_bf16_flops = *p;
    }
  }
  if (spec.timed()) {
    if (spec.accelerator.peak_bf16_flops <= 0)
      r.fail("accelerator", "missing: a timed plan needs an accelerator (or compute.peak)");
    if (!spec.model.shape && !spec.flops_per_token)
      r.fail("compute", "missing flops_per_token: the model has no shapes to count FLOPs from");
  }
}

void read_plan_step(const Reader& r, PlanSpec& spec) {
  const Reader s = r.child("step");
  s.only({"exposed_comm", "input_wait", "link", "straggler_sigma"});
  spec.exposed_comm = s.opt_duration("exposed_comm").value_or(0);
  spec.input_wait = s.opt_duration("input_wait").value_or(0);
  if (const auto l = s.opt_bandwidth("link")) spec.link_bandwidth = *l;
  spec.straggler_sigma = fraction(s, "straggler_sigma", 0, true);
}

void read_plan_checkpoint(const Reader& r, PlanSpec& spec) {
  if (!r.has("checkpoint")) {
    if (spec.timed())
      r.fail("checkpoint", "missing: {bandwidth, restore, interval, card_mtbf} (the save / redo / restore overhead)");
    return;
  }
  const Reader c = r.child("checkpoint");
  c.only({"bytes", "bandwidth", "restore", "interval", "card_mtbf", "rollback_every", "compare"});
  spec.checkpoint_bytes = c.opt_bytes("bytes");
  spec.storage_bandwidth = c.bandwidth("bandwidth");
  spec.restore = c.opt_duration("restore").value_or(0);
  if (c.has("interval") && c.text("interval") != "optimal") {
    spec.interval = c.duration("interval");
    if (*spec.interval <= 0) c.fail("interval", "must be positive (or 'optimal')");
  }
  spec.card_mtbf = c.duration("card_mtbf");
  if (spec.card_mtbf <= 0) c.fail("card_mtbf", "must be positive");
  spec.rollback_every = c.opt_duration("rollback_every");
  if (spec.rollback_every && *spec.rollback_every <= 0) c.fail("rollback_every", "must be positive");
}

void read_cases(const Reader& r, const std::shared_ptr<const Source>& src, PlanSpec& spec) {
  if (!r.has("cases")) r.fail("cases", "missing: a list of {name, cards} to compare");
  const YAML::Node list = r.node()["cases"];
  if (!list.IsSequence() || list.size() == 0) r.fail("cases", "expected a list of {name, cards}");
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string k = fmt::format("{}[{}]", r.key("cases"), i);
    if (!list[i].IsMap()) r.fail_at(list[i], k, "expected a map like {name: 48 cards, cards: 48}");
    const Reader c(src, list[i], k);
    PlanCase pc = read_case(c, spec);
    for (const auto& other : spec.cases)  // a case's name heads its column and names it to --case
      if (other.name == pc.name) c.fail("name", fmt::format("'{}' names two cases: give each its own", pc.name));
    if (spec.timed() && pc.cards > spec.max_cards())
      c.fail("cards",
             fmt::format("{} cards exceed the batch: {} sequences per step in micro-batches of {} keep at most {} busy",
                         pc.cards, spec.sequences_per_step, spec.microbatch_sequences, spec.max_cards()));
    spec.cases.push_back(std::move(pc));
  }
}

PlanSpec read_spec(const Reader& r, const std::shared_ptr<const Source>& src) {
  PlanSpec spec;
  read_model(r, spec);
  if (r.has("accelerator")) {
    spec.accelerator = accelerator_named(r, "accelerator", r.text("accelerator"));
    spec.usable = spec.accelerator.usable_memory;
    spec.link_bandwidth = spec.accelerator.host_link;
  }
  if (const auto u = r.opt_bytes("usable_memory")) spec.usable = *u;
  if (spec.usable <= 0) r.fail("usable_memory", "missing: give an accelerator or usable_memory per card");
  spec.cards_per_host = r.opt_count("cards_per_host", 1).value_or(8);
  read_task_and_deadline(r, spec);
  read_plan_memory(r, spec);
  read_plan_compute(r, spec);
  if (r.has("step")) read_plan_step(r, spec);
  read_plan_checkpoint(r, spec);
  read_cases(r, src, spec);
  return spec;
}

}  // namespace

PlanScenario read_plan(const Reader& r, const std::shared_ptr<const Source>& src) {
  r.only({"model", "accelerator", "usable_memory", "cards_per_host", "task", "deadline", "memory", "compute", "step",
          "checkpoint", "cases", "scaling", "scale_out", "reshard", "kv_cache"});
  PlanScenario ps;
  if (r.has("cases") || r.has("model")) ps.spec = read_spec(r, src);
  ps.exposed_comm_given = r.has("step") && r.child("step").has("exposed_comm");
  if (r.has("checkpoint") && r.child("checkpoint").has("compare")) {
    const Reader c = r.child("checkpoint").child("compare");
    c.only({"cards", "intervals"});
    ps.checkpoints.cards = int_list(c, "cards");
    ps.checkpoints.intervals = positive_durations(c, "intervals");
    // Without `cards`, the plan's cases' (the table used to be left out, silently).
    if (!c.has("cards") && ps.spec)
      for (const auto& pc : ps.spec->cases) ps.checkpoints.cards.push_back(pc.cards);
    if (ps.checkpoints.cards.empty()) c.fail("cards", "missing: the card counts to compare (the plan has no cases)");
    if (ps.checkpoints.intervals.empty()) c.fail("intervals", "missing: the checkpoint intervals to compare");
  }
  if (r.has("scaling")) {
    const Reader s = r.child("scaling");
    s.only({"batch_noise", "cards", "stragglers"});
    ps.scaling.batch_noise = opt_count(s, "batch_noise");
    ps.scaling.cards = int_list(s, "cards");
    ps.scaling.stragglers = int_list(s, "stragglers");
    if (!ps.scaling.cards.empty() && (!ps.spec || !ps.spec->timed()))
      s.fail("cards", "weak and strong scaling start from a timed plan (give task, deadline and cases)");
    if (!ps.scaling.cards.empty() && !ps.scaling.batch_noise)
      s.fail("batch_noise", "missing: weak scaling needs the gradient noise scale in tokens");
  }
  if (r.has("scale_out")) {
    const Reader s = r.child("scale_out");
    s.only({"parameters", "tokens", "tokens_per_parameter", "cards", "mfu", "accelerators", "within"});
    ScaleOut so;
    so.parameters = required_count(s, "parameters");
    if (s.has("tokens") == s.has("tokens_per_parameter"))
      s.fail("tokens", "give exactly one of tokens (D) and tokens_per_parameter (D = k N)");
    so.tokens = s.has("tokens") ? *opt_count(s, "tokens") : so.parameters * *s.opt_number("tokens_per_parameter");
    if (so.tokens <= 0) s.fail("tokens_per_parameter", "must be positive");
    so.cards = s.integer("cards", 1, kMaxGpus);
    so.mfu = fraction_list(s, "mfu");
    if (so.mfu.empty()) so.mfu = {0.4};
    so.accelerators = s.texts("accelerators");
    if (so.accelerators.empty()) s.fail("accelerators", "missing: a list like [a100, h100, b200]");
    for (const auto& a : so.accelerators) accelerator_named(s, "accelerators", a);
    so.within = s.opt_duration("within");
    ps.scale_out = so;
  }
  if (r.has("reshard")) ps.reshard = read_reshard(r.child("reshard"), ps.spec);
  if (r.has("kv_cache")) ps.kv_cache = read_kv_cache(r.child("kv_cache"), ps.spec);
  if (!ps.spec && !ps.scale_out && !ps.reshard && !ps.kv_cache)
    r.fail("cases", "the plan has nothing to evaluate: give model and cases, scale_out, reshard or kv_cache");
  return ps;
}

}  // namespace stepsim::cli
