#include "schedules/lowering/rl/rl_loop_sim.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "models/random.hpp"

namespace stepsim {
namespace {

constexpr std::int64_t kMaxTrajectories = 1'000'000;
constexpr std::int64_t kMaxOps = 4'000'000;

Time draw(const DurationDist& d, Rng& rng) {
  switch (d.kind) {
    case DurationDist::Kind::Fixed: return d.a;
    case DurationDist::Kind::Uniform: return rng.uniform(d.a, d.b);
    case DurationDist::Kind::Exponential: return rng.exponential(d.a);
  }
  return d.a;
}

// Time of items first .. first+count-1 of a worker at `rate`, exactly.
Time rate_items_time(RatePpm rate, std::int64_t first, std::int64_t count) {
  const __int128 unit = static_cast<__int128>(kSecond) * kPpm;
  return static_cast<Time>(unit * (first + count) / rate - unit * first / rate);
}

void check_stage(const RlStageSpec& st, const std::string& key, bool allow_length) {
  const int given = (st.rate ? 1 : 0) + (st.batch_time ? 1 : 0) + (st.length ? 1 : 0);
  if (st.length && !allow_length) throw SpecError(key + ".length", "only generation has per-trajectory lengths");
  if (given != 1)
    throw SpecError(key, allow_length ? "give exactly one of rate, batch_time or length"
                                      : "give exactly one of rate or batch_time");
  if (st.workers < 1) throw SpecError(key + ".workers", "must be at least 1");
  for (const auto* d : {&st.batch_time, &st.length})
    if (*d && (*d)->kind == DurationDist::Kind::Uniform && (*d)->b < (*d)->a)
      throw SpecError(key + (d == &st.length ? ".length" : ".batch_time"), "uniform range is reversed");
}

}  // namespace

void check_rl_loop(const RlLoopSpec& spec) {
  if (spec.batches < 1) throw SpecError("batches", "must be at least 1");
  if (spec.batch_size < 1) throw SpecError("batch_size", "must be at least 1");
  if (static_cast<std::int64_t>(spec.batches) * spec.batch_size > kMaxTrajectories)
    throw SpecError("batches", fmt::format("batches x batch_size is over {} trajectories", kMaxTrajectories));
  if (spec.kept_ppm <= 0 || spec.kept_ppm > kPpm) throw SpecError("kept", "must be in (0%, 100%]");
  if (spec.mode == RlMode::Asynchronous && spec.max_staleness < 1)
    throw SpecError("max_staleness", "asynchronous training needs max_staleness of at least 1");
  check_stage(spec.generation, "generation", true);
  if (spec.verification.present() || spec.verification.rate || spec.verification.batch_time)
    check_stage(spec.verification, "verification", false);
  check_stage(spec.learning, "learning", false);
  if (spec.generation.chunk < 0) throw SpecError("generation.chunk", "must be positive");
  if (spec.updates == WeightUpdates::InFlight) {
    if (spec.generation.chunk <= 0)
      throw SpecError("generation.chunk",
                      "in-flight weight updates are applied between chunks of a trajectory: give generation.chunk");
    if (spec.interrupted == Interrupted::Discard && !spec.learning.batch_time)
      throw SpecError("learning.rate",
                      "with in-flight updates and discarded interruptions the learner's batch size is only known "
                      "after the run: give learning.batch_time");
  }
}

namespace {

// Durations, drawn in a fixed order from one stream per stage. Returns the generation ops the
// trajectories will need.
std::int64_t deal_trajectories(const RlLoopSpec& spec, RlWork& w) {
  const int B = spec.batch_size, G = spec.generation.workers;
  const int V = spec.verification.present() ? spec.verification.workers : 0;
  const std::int64_t n = static_cast<std::int64_t>(spec.batches) * B;
  Rng gen_rng(derive_seed(spec.seed, 0, 0)), ver_rng(derive_seed(spec.seed, 0, 1));
  w.trajectories.resize(n);
  w.verify_time.assign(n, 0);
  std::vector<std::int64_t> gen_items(G, 0), ver_items(std::max(V, 1), 0);
  Time gen_batch = 0, ver_batch = 0;
  std::int64_t ops_estimate = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    RlTrajectory& t = w.trajectories[i];
    t.id = static_cast<int>(i);
    t.batch = static_cast<int>(i / B);
    t.generator = static_cast<int>(i % G);
    const auto& gs = spec.generation;
    if (gs.length)
      t.length = draw(*gs.length, gen_rng);
    else if (gs.rate)
      t.length = rate_item_time(*gs.rate, gen_items[t.generator]++);
    else {
      if (i % B == 0) gen_batch = draw(*gs.batch_time, gen_rng);
      t.length = even_share(gen_batch, B, i % B);
    }
    t.length = std::max<Time>(t.length, 1);  // a generated trajectory takes time (versions need it)
    ops_estimate += gs.chunk > 0 ? (t.length + gs.chunk - 1) / gs.chunk : 1;
    if (V > 0) {
      t.verifier = static_cast<int>(i % V);
      const auto& vs = spec.verification;
      if (vs.rate)
        w.verify_time[i] = rate_item_time(*vs.rate, ver_items[t.verifier]++);
      else {
        if (i % B == 0) ver_batch = draw(*vs.batch_time, ver_rng);
        w.verify_time[i] = even_share(ver_batch, B, i % B);
      }
    }
    t.verified_kept = kept_evenly(i, spec.kept_ppm);
  }
  return ops_estimate;
}

// Learner shares: contiguous slices of each batch's kept trajectories.
void share_learning(const RlLoopSpec& spec, RlWork& w) {
  const int N = spec.batches, L = spec.learning.workers;
  Rng learn_rng(derive_seed(spec.seed, 0, 2));
  w.batch_learned_ids.assign(N, {});
  for (const RlTrajectory& t : w.trajectories)
    if (t.verified_kept) w.batch_learned_ids[t.batch].push_back(t.id);
  w.learn_time.assign(N, std::vector<Time>(L, 0));
  std::vector<std::int64_t> learn_items(L, 0);
  for (int k = 0; k < N; ++k) {
    const auto& ids = w.batch_learned_ids[k];
    const auto m = static_cast<std::int64_t>(ids.size());
    const Time batch_time = spec.learning.batch_time ? draw(*spec.learning.batch_time, learn_rng) : 0;
    for (int l = 0; l < L; ++l) {
      const std::int64_t lo = m * l / L, hi = m * (l + 1) / L;
      for (std::int64_t j = lo; j < hi; ++j) w.trajectories[ids[j]].learner = l;
      if (spec.learning.rate) {
        w.learn_time[k][l] = rate_items_time(*spec.learning.rate, learn_items[l], hi - lo);
        learn_items[l] += hi - lo;
      } else {
        w.learn_time[k][l] = even_share(batch_time, L, l);
      }
    }
  }
}

}  // namespace

RlWork rl_work(const RlLoopSpec& spec) {
  RlWork w;
  const std::int64_t ops_estimate = deal_trajectories(spec, w);
  if (ops_estimate > kMaxOps)
    throw SpecError("generation.chunk", fmt::format("{} generation ops is over the limit of {}: use a longer chunk or "
                                                    "fewer trajectories",
                                                    ops_estimate, kMaxOps));
  share_learning(spec, w);
  w.per_generator.assign(spec.generation.workers, {});
  for (const RlTrajectory& t : w.trajectories) w.per_generator[t.generator].push_back(t.id);
  return w;
}

RlSyncPlan rl_sync_plan(const RlLoopSpec& spec, const RlWork& work) {
  const int N = spec.batches, G = spec.generation.workers, lead = spec.lead();
  const bool in_flight = spec.updates == WeightUpdates::InFlight;
  RlSyncPlan plan;
  plan.chained = in_flight;
  plan.steps.assign(G, {});
  plan.publish_after.assign(G, std::vector<int>(N, -1));
  for (int w = 0; w < G; ++w) {
    auto& steps = plan.steps[w];
    const auto& mine = work.per_generator[w];
    if (in_flight) {
      // Syncs first: on a FIFO generator they get lower ids than every chunk, so a sync and a
      // chunk ready at the same instant run sync first.
      for (int k = 0; k < N; ++k) steps.push_back({-1, k});
      for (int id : mine) steps.push_back({id, -1});
      continue;
    }
    const auto sync_here = [&](int k) {
      plan.publish_after[w][k] = static_cast<int>(steps.size()) - 1;
      steps.push_back({-1, k});
    };
    std::size_t next = 0;
    for (int j = 0; j < N; ++j) {
      for (; next < mine.size() && work.trajectories[mine[next]].batch == j; ++next) steps.push_back({mine[next], -1});
      if (j - lead >= 0) sync_here(j - lead);
    }
    for (int k = std::max(0, N - lead); k < N; ++k) sync_here(k);
  }
  for (const RlTrajectory& t : work.trajectories)
    plan.gate.push_back(in_flight && t.batch - lead - 1 >= 0 ? t.batch - lead - 1 : -1);
  return plan;
}

namespace {

// One generator's program order against the rules; appends to `problems`.
void check_generator_steps(const RlLoopSpec& spec, const RlWork& work, const RlSyncPlan& plan, int w,
                           std::vector<std::string>& problems) {
  const auto& steps = plan.steps[w];
  std::vector<int> trajectories;
  int next_sync = 0;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const RlGeneratorStep& st = steps[i];
    if ((st.trajectory >= 0) == (st.sync >= 0)) {
      problems.push_back(fmt::format("generator {} step {}: neither one trajectory nor one sync", w, i));
      continue;
    }
    if (st.trajectory >= 0) {
      trajectories.push_back(st.trajectory);
      continue;
    }
    if (st.sync != next_sync++)
      problems.push_back(fmt::format("generator {} step {}: sync {} out of order", w, i, st.sync));
    if (plan.chained) continue;
    if (plan.publish_after[w][st.sync] != static_cast<int>(i) - 1)
      problems.push_back(
          fmt::format("generator {}: publish {} does not wait for the step before its sync", w, st.sync));
    // Between batches: sync(k) sits after batch k + lead and before batch k + lead + 1.
    for (std::size_t j = 0; j < steps.size(); ++j) {
      if (steps[j].trajectory < 0) continue;
      const int batch = work.trajectories[steps[j].trajectory].batch;
      if ((j < i) != (batch <= st.sync + spec.lead()))
        problems.push_back(
            fmt::format("generator {}: sync {} and trajectory {} in the wrong order", w, st.sync, steps[j].trajectory));
    }
  }
  if (next_sync != spec.batches)
    problems.push_back(fmt::format("generator {}: {} syncs, not {}", w, next_sync, spec.batches));
  if (trajectories != work.per_generator[w])
    problems.push_back(fmt::format("generator {}: its trajectories are not each once in id order", w));
}

}  // namespace

std::vector<std::string> check_sync_plan(const RlLoopSpec& spec, const RlWork& work, const RlSyncPlan& plan) {
  std::vector<std::string> problems;
  const int G = spec.generation.workers;
  if (static_cast<int>(plan.steps.size()) != G || static_cast<int>(plan.publish_after.size()) != G ||
      plan.gate.size() != work.trajectories.size())
    return {"plan sizes do not match the loop"};
  for (int w = 0; w < G; ++w) check_generator_steps(spec, work, plan, w, problems);
  for (std::size_t i = 0; i < plan.gate.size(); ++i)
    if (plan.gate[i] < -1 || plan.gate[i] >= work.trajectories[i].batch)
      problems.push_back(fmt::format("trajectory {}: gated by publish {}, not an earlier batch's", i, plan.gate[i]));
  return problems;
}

namespace {

// Op emission in a fixed id order: publishes, each generator's steps, verifications, then each
// learner's learn and sync per batch; dependencies after.
class RlEmitter {
 public:
  RlEmitter(const RlLoopSpec& spec, const RlWork& work, const RlSyncPlan& plan, RlLoopProgram& p)
      : spec_(spec), work_(work), plan_(plan), p_(p), g_(p.graph) {}

  void resources() {
    const Discipline gen_discipline = plan_.chained ? Discipline::Fifo : Discipline::ProgramOrder;
    const int V = spec_.verification.present() ? spec_.verification.workers : 0;
    for (int w = 0; w < spec_.generation.workers; ++w)
      p_.generators.push_back(g_.add_resource(fmt::format("generation {}", w), gen_discipline));
    for (int w = 0; w < V; ++w)
      p_.verifiers.push_back(g_.add_resource(fmt::format("verification {}", w), Discipline::Fifo));
    for (int w = 0; w < spec_.learning.workers; ++w)
      p_.learners.push_back(g_.add_resource(fmt::format("learning {}", w)));
    p_.weights = g_.add_resource("weights");
  }

  void ops() {
    const int N = spec_.batches, G = spec_.generation.workers, L = spec_.learning.workers;
    for (int k = 0; k < N; ++k) p_.publish.push_back(add(p_.weights, 0, {RlOpKind::Publish, 3, 0, -1, k, 0}));
    p_.generator_syncs.assign(G, std::vector<OpId>(N, kNoOp));
    step_op_.assign(G, {});
    for (int w = 0; w < G; ++w)
      for (const RlGeneratorStep& st : plan_.steps[w]) {
        if (st.sync >= 0)
          p_.generator_syncs[w][st.sync] = add(p_.generators[w], spec_.sync, {RlOpKind::Sync, 0, w, -1, st.sync, 0});
        else
          add_chunks(p_.trajectories[st.trajectory]);
        step_op_[w].push_back(st.sync >= 0 ? p_.generator_syncs[w][st.sync] : p_.trajectories[st.trajectory].last_op);
      }
    for (RlTrajectory& t : p_.trajectories)
      if (!p_.verifiers.empty())
        t.verify_op =
            add(p_.verifiers[t.verifier], work_.verify_time[t.id], {RlOpKind::Verify, 1, t.verifier, t.id, t.batch, 0});
    p_.learn.assign(N, std::vector<OpId>(L, kNoOp));
    p_.learner_syncs.assign(L, std::vector<OpId>(N, kNoOp));
    for (int w = 0; w < L; ++w)
      for (int k = 0; k < N; ++k) {
        p_.learn[k][w] = add(p_.learners[w], work_.learn_time[k][w], {RlOpKind::Learn, 2, w, -1, k, 0});
        p_.learner_syncs[w][k] = add(p_.learners[w], spec_.sync, {RlOpKind::Sync, 2, w, -1, k, 0});
      }
  }

  void trajectory_dependencies() {
    if (plan_.chained)
      for (const auto& mine : work_.per_generator)
        for (std::size_t j = 1; j < mine.size(); ++j)
          g_.add_dep(p_.trajectories[mine[j - 1]].last_op, p_.trajectories[mine[j]].first_op);
    for (const RlTrajectory& t : p_.trajectories) {
      if (plan_.gate[t.id] >= 0) g_.add_dep(p_.publish[plan_.gate[t.id]], t.first_op);
      if (t.verify_op != kNoOp) g_.add_dep(t.last_op, t.verify_op);
      // The learner starts a batch once all of it is verified (only then is the kept set known).
      const OpId ready = t.verify_op != kNoOp ? t.verify_op : t.last_op;
      for (OpId learn : p_.learn[t.batch]) g_.add_dep(ready, learn);
      // Queue lengths: waiting for a verifier, then (kept ones) waiting for the learner.
      if (t.verify_op != kNoOp)
        p_.holds.push_back(
            {RlLoopProgram::kVerificationQueue, 1, {t.last_op, OpPoint::Done}, {t.verify_op, OpPoint::Start}});
      if (t.verified_kept)
        p_.holds.push_back(
            {RlLoopProgram::kLearningQueue, 1, {ready, OpPoint::Done}, {p_.learn[t.batch][t.learner], OpPoint::Start}});
    }
  }

  void publish_dependencies() {
    for (int k = 0; k < spec_.batches; ++k) {
      for (OpId learn : p_.learn[k]) g_.add_dep(learn, p_.publish[k]);
      for (std::size_t w = 0; w < p_.generators.size(); ++w) {
        if (const int before = plan_.publish_after[w][k]; before >= 0) g_.add_dep(step_op_[w][before], p_.publish[k]);
        g_.add_dep(p_.publish[k], p_.generator_syncs[w][k]);
      }
      for (const auto& syncs : p_.learner_syncs) g_.add_dep(p_.publish[k], syncs[k]);
    }
  }

 private:
  OpId add(ResourceId r, Time d, RlOpInfo info) {
    const OpId op = g_.add_op(r, d);
    p_.info.push_back(info);
    return op;
  }

  void add_chunks(RlTrajectory& t) {
    const Time chunk = spec_.generation.chunk > 0 ? spec_.generation.chunk : t.length;
    const std::int64_t chunks = (t.length + chunk - 1) / chunk;
    OpId prev = kNoOp;
    for (std::int64_t c = 0; c < chunks; ++c) {
      const Time d = c + 1 < chunks ? chunk : t.length - chunk * (chunks - 1);
      const OpId op = add(p_.generators[t.generator], d,
                          {RlOpKind::Generate, 0, t.generator, t.id, t.batch, static_cast<std::int32_t>(c)});
      if (prev == kNoOp)
        t.first_op = op;
      else
        g_.add_dep(prev, op);
      prev = op;
    }
    t.last_op = prev;
  }

  const RlLoopSpec& spec_;
  const RlWork& work_;
  const RlSyncPlan& plan_;
  RlLoopProgram& p_;
  OpGraph& g_;
  std::vector<std::vector<OpId>> step_op_;  // [generator][step]: the step's last op
};

std::string rl_op_name(const RlOpInfo& x) {
  switch (x.kind) {
    case RlOpKind::Generate:
      return fmt::format("generate traj {} chunk {} (generator {})", x.sample, x.chunk, x.worker);
    case RlOpKind::Verify: return fmt::format("verify traj {} (verifier {})", x.sample, x.worker);
    case RlOpKind::Learn: return fmt::format("learn batch {} (learner {})", x.batch, x.worker);
    case RlOpKind::Publish: return fmt::format("publish v{}", x.batch + 1);
    case RlOpKind::Sync: return fmt::format("sync v{} ({} {})", x.batch + 1, stage_name(x.stage), x.worker);
  }
  return std::string("?");
}

}  // namespace

std::unique_ptr<RlLoopProgram> emit_rl_loop(const RlLoopSpec& spec, RlWork work, const RlSyncPlan& plan) {
  auto prog = std::make_unique<RlLoopProgram>();
  RlLoopProgram& p = *prog;
  p.trajectories = std::move(work.trajectories);
  p.batch_learned_ids = std::move(work.batch_learned_ids);
  RlEmitter emitter(spec, work, plan, p);
  emitter.resources();
  emitter.ops();
  emitter.trajectory_dependencies();
  emitter.publish_dependencies();
  const RlLoopProgram* self = &p;
  p.graph.set_namer([self](OpId op) { return rl_op_name(self->info[op]); });
  return prog;
}

std::unique_ptr<RlLoopProgram> build_rl_loop(const RlLoopSpec& spec) {
  check_rl_loop(spec);
  RlWork work = rl_work(spec);
  const RlSyncPlan plan = rl_sync_plan(spec, work);
  return emit_rl_loop(spec, std::move(work), plan);
}

namespace {

void fill_outcomes(const RlLoopSpec& spec, RlLoopProgram& p, const Timeline& tl) {
  std::vector<std::vector<Time>> sync_end(p.generators.size());
  for (std::size_t w = 0; w < p.generators.size(); ++w) {
    for (OpId op : p.generator_syncs[w]) sync_end[w].push_back(tl.end(p.graph, op));
    std::sort(sync_end[w].begin(), sync_end[w].end());
  }
  const auto version_at = [&](int w, Time start) {
    return static_cast<int>(std::upper_bound(sync_end[w].begin(), sync_end[w].end(), start) - sync_end[w].begin());
  };
  for (RlTrajectory& t : p.trajectories) {
    t.start = tl.start[t.first_op];
    t.end = tl.end(p.graph, t.last_op);
    t.version_first = version_at(t.generator, t.start);
    t.version_last = version_at(t.generator, tl.start[t.last_op]);
    t.interrupted = t.version_last != t.version_first;
    t.learned = t.verified_kept && !(t.interrupted && spec.interrupted == Interrupted::Discard);
    t.staleness = t.batch - t.version_first;
  }
}

// Counts and mean lengths over every trajectory; learned ones per batch.
std::vector<int> count_trajectories(const RlLoopSpec& spec, const RlLoopProgram& p, RlLoopStats& s) {
  std::vector<int> learned_in(spec.batches, 0);
  double gen_len = 0, learned_len = 0;
  for (const RlTrajectory& t : p.trajectories) {
    ++s.generated;
    gen_len += to_s(t.length);
    if (t.verified_kept) ++s.verified_kept;
    if (t.interrupted) ++s.interrupted;
    if (t.verified_kept && t.interrupted && spec.interrupted == Interrupted::Discard) ++s.discarded_interrupted;
    if (t.learned) {
      ++s.learned;
      ++learned_in[t.batch];
      learned_len += to_s(t.length);
      ++s.staleness[t.staleness];
    }
  }
  s.mean_length_generated_s = s.generated ? gen_len / s.generated : 0;
  s.mean_length_learned_s = s.learned ? learned_len / s.learned : 0;
  return learned_in;
}

// Stage utilization: the share of the window [t0, t1] its workers spend on its work (each op's
// time clipped to the window; a worker runs one op at a time, so it is at most 1). Syncs are not
// a stage's work. (Counting the work of the window's batches instead read generation that ran
// ahead of a short window as more than 100 %.)
void stage_utilization(const RlLoopProgram& p, const Timeline& tl, Time t0, Time t1, RlLoopStats& s) {
  const OpGraph& g = p.graph;
  const int workers[3] = {static_cast<int>(p.generators.size()), static_cast<int>(p.verifiers.size()),
                          static_cast<int>(p.learners.size())};
  Time busy[3] = {0, 0, 0};
  for (OpId op = 0; op < g.op_count(); ++op) {
    const RlOpInfo& x = p.info[op];
    if (x.kind != RlOpKind::Generate && x.kind != RlOpKind::Verify && x.kind != RlOpKind::Learn) continue;
    const Time from = std::max(t0, tl.start[op]), to = std::min(t1, tl.end(g, op));
    if (to > from) busy[x.stage] += to - from;
  }
  double best = -1;
  for (int st = 0; st < 3; ++st) {
    if (workers[st] == 0) continue;
    const double u = t1 > t0 ? static_cast<double>(busy[st]) / (static_cast<double>(t1 - t0) * workers[st]) : 0;
    s.stages.push_back({st, workers[st], u});
    if (u > best) {
      best = u;
      s.bottleneck = st;
    }
  }
}

// In flight: survival of trajectories by length against the model. Eight bins of half the mean
// length; the last one open-ended.
void survival_bins(const RlLoopProgram& p, RlLoopStats& s) {
  const Time width = std::max<Time>(1, static_cast<Time>(std::llround(s.mean_length_generated_s * kSecond / 2)));
  constexpr int kBins = 8;
  s.survival.resize(kBins);
  for (int b = 0; b < kBins; ++b) s.survival[b] = {width * b, b + 1 < kBins ? width * (b + 1) : -1};
  for (const RlTrajectory& t : p.trajectories) {
    const int b = static_cast<int>(std::min<Time>(t.length / width, kBins - 1));
    ++s.survival[b].generated;
    if (!t.interrupted) ++s.survival[b].survived;
    s.survival[b].model += survival_probability(to_s(t.length), s.update_rate_per_s);
  }
  for (auto& bin : s.survival)
    if (bin.generated) bin.model /= bin.generated;
}

RlLoopStats measure(const RlLoopSpec& spec, const RlLoopProgram& p, const Timeline& tl,
                    const std::vector<LevelCurve>& queues) {
  RlLoopStats s;
  s.makespan = tl.makespan;
  const int N = spec.batches;
  std::vector<Time> done(N, 0);
  for (int k = 0; k < N; ++k)
    for (const auto& syncs : p.learner_syncs) done[k] = std::max(done[k], tl.end(p.graph, syncs[k]));
  const std::vector<int> learned_in = count_trajectories(spec, p, s);

  // Steady state: batches (window_from, window_to], the second half of those before the drain.
  // The last `lead` batches are learned with no generation left to overlap, so they are left out;
  // with too few batches the whole run is the window.
  s.window_to = std::max(0, N - 1 - spec.lead());
  s.window_from = s.window_to / 2;
  if (s.window_to == s.window_from) s.window_from = -1;
  const Time t0 = s.window_from >= 0 ? done[s.window_from] : 0, t1 = done[s.window_to];
  int learned_window = 0;
  for (int k = s.window_from + 1; k <= s.window_to; ++k) learned_window += learned_in[k];
  s.period = (t1 - t0) / (s.window_to - s.window_from);
  s.learner_rate = t1 > t0 ? learned_window / to_s(t1 - t0) : 0;
  stage_utilization(p, tl, t0, t1, s);

  if (N >= 2) {
    const Time span = tl.start[p.publish[N - 1]] - tl.start[p.publish[0]];
    s.update_rate_per_s = span > 0 ? (N - 1) / to_s(span) : 0;
  }
  if (spec.updates == WeightUpdates::InFlight && s.generated > 0) survival_bins(p, s);
  s.peak_verification_queue = queues[RlLoopProgram::kVerificationQueue].peak;
  s.peak_learning_queue = queues[RlLoopProgram::kLearningQueue].peak;
  return s;
}

}  // namespace

RlLoopRun simulate_rl_loop(const RlLoopSpec& spec) {
  RlLoopRun out;
  out.spec = spec;
  out.program = build_rl_loop(spec);
  out.timeline = run(out.program->graph);
  fill_outcomes(spec, *out.program, out.timeline);
  out.queues = sweep_levels(out.program->graph, out.timeline, out.program->holds, RlLoopProgram::kCounters);
  out.stats = measure(spec, *out.program, out.timeline, out.queues);
  return out;
}

std::vector<GenerationStretch> generation_stretches(const RlLoopRun& run) {
  const RlLoopProgram& p = *run.program;
  const Timeline& tl = run.timeline;
  std::vector<std::vector<Time>> sync_ends(p.generators.size());
  for (std::size_t w = 0; w < p.generators.size(); ++w) {
    for (OpId s : p.generator_syncs[w]) sync_ends[w].push_back(tl.end(p.graph, s));
    std::sort(sync_ends[w].begin(), sync_ends[w].end());
  }
  std::vector<GenerationStretch> out;
  for (const RlTrajectory& t : p.trajectories) {
    const auto& ends = sync_ends[static_cast<std::size_t>(t.generator)];
    GenerationStretch cur{&t, t.first_op, t.first_op, -1};
    for (OpId op = t.first_op; op <= t.last_op; ++op) {
      const int v = static_cast<int>(std::upper_bound(ends.begin(), ends.end(), tl.start[op]) - ends.begin());
      if (cur.version >= 0 && v != cur.version) {
        out.push_back(cur);
        cur.first_op = op;
      }
      cur.version = v;
      cur.last_op = op;
    }
    out.push_back(cur);
  }
  return out;
}

}  // namespace stepsim
