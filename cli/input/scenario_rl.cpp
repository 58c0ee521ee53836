// Reading the `rl` section (README "Reinforcement-learning loops"): the loop, its variants, the
// shared card and the weight distribution, into the plain values of schedules/rl_run.hpp.
#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "cli/input/budget.hpp"
#include "cli/input/scenario.hpp"
#include "models/units.hpp"

namespace stepsim::cli {

namespace {

// Runs a lowering's check; its SpecError (key relative to the section) fails at `r`'s key.
template <class Check>
void checked_at(const Reader& r, Check check) {
  try {
    check();
  } catch (const SpecError& e) { r.fail_dotted(e.key(), e.what()); }
}

const std::vector<std::string> kLoopKeys = {
    "name", "mode", "max_staleness", "weight_updates", "interrupted", "batches", "batch_size",
    "kept", "seed", "generation",    "verification",   "learning",    "sync"};

template <class Enum>
Enum choice(const Reader& r, const std::string& k, Enum fallback,
            const std::vector<std::pair<std::string, Enum>>& names) {
  const auto v = r.opt_text(k);
  if (!v) return fallback;
  std::vector<std::string> known;
  for (const auto& [name, value] : names) {
    if (*v == name) return value;
    known.push_back(name);
  }
  const auto near = nearest(*v, known);
  r.fail(k, near.empty() ? fmt::format("unknown value '{}' (known: {})", *v, fmt::join(known, ", "))
                         : fmt::format("unknown value '{}'; did you mean '{}'?", *v, near));
}

Time duration_node(const Reader& r, const YAML::Node& n, const std::string& key) {
  if (!n.IsScalar()) r.fail_at(n, key, "expected a duration like 20s");
  std::string err;
  const auto v = parse_duration(n.Scalar(), &err);
  if (!v) r.fail_at(n, key, err);
  if (*v < 0) r.fail_at(n, key, fmt::format("'{}' is negative", n.Scalar()));
  return *v;
}

// "20s", {exponential: 20s} (the mean) or {uniform: [5s, 40s]}.
std::optional<DurationDist> read_dist(const Reader& r, const std::string& k) {
  if (!r.has(k)) return std::nullopt;
  const YAML::Node n = r.node()[k];
  DurationDist d;
  if (n.IsScalar()) {
    d.a = r.duration(k);
    return d;
  }
  const Reader c = r.child(k);
  c.only({"exponential", "uniform"});
  if (c.has("exponential") == c.has("uniform"))
    r.fail(k, "give a duration, {exponential: mean} or {uniform: [low, high]}");
  if (c.has("exponential")) {
    d.kind = DurationDist::Kind::Exponential;
    d.a = c.duration("exponential");
    if (d.a <= 0) c.fail("exponential", "the mean must be positive");
    return d;
  }
  const YAML::Node u = c.node()["uniform"];
  if (!u.IsSequence() || u.size() != 2) c.fail("uniform", "expected [low, high]");
  d.kind = DurationDist::Kind::Uniform;
  d.a = duration_node(c, u[0], c.key("uniform") + "[0]");
  d.b = duration_node(c, u[1], c.key("uniform") + "[1]");
  if (d.b < d.a) c.fail("uniform", "low is above high");
  return d;
}

RlStageSpec read_stage(const Reader& r, bool generation) {
  if (generation)
    r.only({"workers", "rate", "batch_time", "length", "chunk"});
  else
    r.only({"workers", "rate", "batch_time"});
  RlStageSpec st;
  st.workers = r.opt_count("workers", 1).value_or(1);
  if (st.workers > kMaxWorkers)
    r.fail("workers", fmt::format("{} is too many: at most {} workers", st.workers, kMaxWorkers));
  if (const auto rate = r.opt_text("rate")) {
    std::string err;
    st.rate = parse_rate(*rate, &err);
    if (!st.rate) r.fail("rate", err);
  }
  st.batch_time = read_dist(r, "batch_time");
  if (generation) {
    st.length = read_dist(r, "length");
    st.chunk = r.opt_duration("chunk").value_or(0);
    if (r.has("chunk") && st.chunk <= 0) r.fail("chunk", "must be positive");
  }
  return st;
}

RlLoopSpec read_loop(const Reader& r, const std::string& fallback_name) {
  RlLoopSpec s;
  s.name = r.opt_text("name").value_or(fallback_name);
  s.mode = choice(r, "mode", RlMode::Synchronous,
                  {{"synchronous", RlMode::Synchronous}, {"asynchronous", RlMode::Asynchronous}});
  s.max_staleness = r.opt_count("max_staleness", 1).value_or(1);  // read only when asynchronous
  s.updates = choice(r, "weight_updates", WeightUpdates::BetweenBatches,
                     {{"between_batches", WeightUpdates::BetweenBatches}, {"in_flight", WeightUpdates::InFlight}});
  s.interrupted = choice(r, "interrupted", Interrupted::Discard,
                         {{"discard", Interrupted::Discard}, {"resume", Interrupted::Resume}});
  s.batches = r.count("batches", 1);
  s.batch_size = r.count("batch_size", 1);
  if (const auto kept = r.opt_number("kept")) {
    if (!(*kept > 0 && *kept <= 1)) r.fail("kept", "must be a fraction in (0, 1] or a percentage like 75%");
    s.kept_ppm = std::llround(*kept * kPpm);
  }
  s.seed = static_cast<std::uint64_t>(r.opt_integer("seed", 0).value_or(1));
  s.generation = read_stage(r.child("generation"), true);
  if (r.has("verification")) s.verification = read_stage(r.child("verification"), false);
  s.learning = read_stage(r.child("learning"), false);
  s.sync = r.opt_duration("sync").value_or(0);
  checked_at(r, [&] { check_rl_loop(s); });
  return s;
}

ColocateSpec read_colocate(const Reader& r) {
  r.only({"capacity", "bandwidth", "states", "phases", "orders"});
  ColocateSpec c;
  c.capacity = r.bytes("capacity");
  c.bandwidth = r.bandwidth("bandwidth");
  const Reader states = r.child("states");
  for (const auto& name : states.keys()) {
    CardState st;
    st.name = name;
    if (states.node()[name].IsMap()) {
      const Reader sr = states.child(name);
      sr.only({"size", "allocated"});
      st.size = sr.bytes("size");
      st.allocated = sr.flag("allocated", false);
    } else {
      st.size = states.bytes(name);
    }
    c.states.push_back(st);
  }
  if (r.has("phases")) {
    const Reader ph = r.child("phases");
    ph.only({"training", "generation"});
    c.training = ph.opt_duration("training").value_or(0);
    c.generation = ph.opt_duration("generation").value_or(0);
  }
  const Reader orders = r.child("orders");
  for (const auto& name : orders.keys()) {
    SwitchOrder order;
    order.name = name;
    std::vector<std::string> words;
    for (const auto& item : orders.texts(name)) {
      std::string cur;
      for (char ch : item + " ") {
        if (ch == ' ' || ch == ',' || ch == '\t') {
          if (!cur.empty()) words.push_back(cur);
          cur.clear();
        } else
          cur += ch;
      }
    }
    for (const auto& w : words) {
      if (w.size() < 2 || (w[0] != '+' && w[0] != '-'))
        orders.fail(name, fmt::format("step '{}' is not +state (load) or -state (release)", w));
      order.steps.push_back({w.substr(1), w[0] == '+'});
    }
    c.orders.push_back(order);
  }
  checked_at(r, [&] { check_colocate(c); });
  return c;
}

WeightTransferSpec read_weight_transfer(const Reader& r) {
  r.only({"size", "receivers", "senders", "bandwidth", "latency"});
  WeightTransferSpec w;
  w.size = r.bytes("size");
  w.receivers = r.count("receivers", 1);
  w.senders = r.opt_count("senders", 1).value_or(1);
  w.bandwidth = r.bandwidth("bandwidth");
  w.latency = r.opt_duration("latency").value_or(0);
  checked_at(r, [&] { check_weight_transfer(w); });
  return w;
}

}  // namespace

RlSpec read_rl(const Reader& r) {
  std::vector<std::string> allowed = kLoopKeys;
  for (const char* k : {"variants", "colocate", "weight_transfer"}) allowed.push_back(k);
  r.only(allowed);
  RlSpec sc;
  const bool loop = r.has("generation") || r.has("learning") || r.has("variants");
  if (loop) {
    sc.loops.push_back(read_loop(r, "base"));
    if (r.has("variants")) {
      const YAML::Node list = r.node()["variants"];
      if (!list.IsSequence()) r.fail("variants", "expected a list of variants, each a name and the keys it changes");
      YAML::Node arena(YAML::NodeType::Sequence);
      arena.push_back(r.node());
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string path = fmt::format("{}[{}]", r.key("variants"), i);
        if (!list[i].IsMap()) r.fail_at(list[i], path, "expected a map: name and the keys it changes");
        // Variants are read against the file alone: --set overrides apply to the base.
        const auto file = std::make_shared<Source>(Source{r.file(), YAML::Node(), {}});
        const Reader vr(file, list[i], path);
        vr.only(kLoopKeys);
        if (!vr.has("name")) vr.fail("name", "missing (required): the variant's label");
        const YAML::Node merged =
            laid_over(r.node(), list[i], &arena, {"variants", "colocate", "weight_transfer", "name"});
        sc.loops.push_back(read_loop(Reader(file, merged, path), vr.text("name")));
      }
    }
  }
  if (r.has("colocate")) sc.colocate = read_colocate(r.child("colocate"));
  if (r.has("weight_transfer")) sc.weight_transfer = read_weight_transfer(r.child("weight_transfer"));
  if (sc.loops.empty() && !sc.colocate && !sc.weight_transfer)
    r.fail_at(r.node(), r.path(),
              "nothing to simulate: give the loop (generation, learning), colocate or weight_transfer");
  return sc;
}

}  // namespace stepsim::cli
