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

std::unique_ptr<RlLoopProgram> build_rl_loop(const RlLoopSpec& spec) {
  check_rl_loop(spec);
  auto prog = std::make_unique<RlLoopProgram>();
  RlLoopProgram& p = *prog;
  OpGraph& g = p.graph;
  const int N = spec.batches, B = spec.batch_size;
  const int G = spec.generation.workers, V = spec.verification.present() ? spec.verification.workers : 0;
  const int L = spec.learning.workers;
  const int lead = spec.lead();
  const bool in_flight = spec.updates == WeightUpdates::InFlight;
  const std::int64_t n = static_cast<std::int64_t>(N) * B;

  // --- Durations, drawn in a fixed order from one stream per stage.
  Rng gen_rng(derive_seed(spec.seed, 0, 0)), ver_rng(derive_seed(spec.seed, 0, 1)),
      learn_rng(derive_seed(spec.seed, 0, 2));
  p.trajectories.resize(n);
  std::vector<Time> verify_time(n, 0);
  std::vector<std::int64_t> gen_items(G, 0), ver_items(std::max(V, 1), 0);
  Time gen_batch = 0, ver_batch = 0;
  std::int64_t ops_estimate = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    RlTrajectory& t = p.trajectories[i];
    t.id = static_cast<int>(i);
    t.batch = static_cast<int>(i / B);
    t.generator = static_cast<int>(i % G);
    const auto& gs = spec.generation;
    if (gs.length) t.length = draw(*gs.length, gen_rng);
    else if (gs.rate) t.length = rate_item_time(*gs.rate, gen_items[t.generator]++);
    else {
      if (i % B == 0) gen_batch = draw(*gs.batch_time, gen_rng);
      t.length = even_share(gen_batch, B, i % B);
    }
    t.length = std::max<Time>(t.length, 1);  // a generated trajectory takes time (versions need it)
    ops_estimate += gs.chunk > 0 ? (t.length + gs.chunk - 1) / gs.chunk : 1;
    if (V > 0) {
      t.verifier = static_cast<int>(i % V);
      const auto& vs = spec.verification;
      if (vs.rate) verify_time[i] = rate_item_time(*vs.rate, ver_items[t.verifier]++);
      else {
        if (i % B == 0) ver_batch = draw(*vs.batch_time, ver_rng);
        verify_time[i] = even_share(ver_batch, B, i % B);
      }
    }
    t.verified_kept = kept_evenly(i, spec.kept_ppm);
  }
  if (ops_estimate > kMaxOps)
    throw SpecError("generation.chunk", fmt::format("{} generation ops is over the limit of {}: use a longer chunk or "
                                                    "fewer trajectories", ops_estimate, kMaxOps));

  // Learner shares: contiguous slices of each batch's kept trajectories.
  p.batch_learned_ids.resize(N);
  for (std::int64_t i = 0; i < n; ++i)
    if (p.trajectories[i].verified_kept) p.batch_learned_ids[p.trajectories[i].batch].push_back(static_cast<int>(i));
  std::vector<std::vector<Time>> learn_time(N, std::vector<Time>(L, 0));
  std::vector<std::int64_t> learn_items(L, 0);
  for (int k = 0; k < N; ++k) {
    const auto& ids = p.batch_learned_ids[k];
    const auto m = static_cast<std::int64_t>(ids.size());
    const Time batch_time = spec.learning.batch_time ? draw(*spec.learning.batch_time, learn_rng) : 0;
    for (int w = 0; w < L; ++w) {
      const std::int64_t lo = m * w / L, hi = m * (w + 1) / L;
      for (std::int64_t j = lo; j < hi; ++j) p.trajectories[ids[j]].learner = w;
      if (spec.learning.rate) {
        learn_time[k][w] = rate_items_time(*spec.learning.rate, learn_items[w], hi - lo);
        learn_items[w] += hi - lo;
      } else {
        learn_time[k][w] = even_share(batch_time, L, w);
      }
    }
  }

  // --- Resources.
  const Discipline gen_discipline = in_flight ? Discipline::Fifo : Discipline::ProgramOrder;
  for (int w = 0; w < G; ++w) p.generators.push_back(g.add_resource(fmt::format("generation {}", w), gen_discipline));
  for (int w = 0; w < V; ++w) p.verifiers.push_back(g.add_resource(fmt::format("verification {}", w), Discipline::Fifo));
  for (int w = 0; w < L; ++w) p.learners.push_back(g.add_resource(fmt::format("learning {}", w)));
  p.weights = g.add_resource("weights");

  const auto add = [&](ResourceId r, Time d, RlOpInfo info) {
    const OpId op = g.add_op(r, d);
    p.info.push_back(info);
    return op;
  };

  // --- Ops. Publishes first; on FIFO generators the syncs get lower ids than every chunk, so a
  // sync and a chunk ready at the same instant run sync first.
  for (int k = 0; k < N; ++k) p.publish.push_back(add(p.weights, 0, {RlOpKind::Publish, 3, 0, -1, k, 0}));
  p.generator_syncs.assign(G, std::vector<OpId>(N, kNoOp));
  std::vector<std::vector<int>> per_generator(G);
  for (std::int64_t i = 0; i < n; ++i) per_generator[p.trajectories[i].generator].push_back(static_cast<int>(i));
  // The op before sync(k) in a generator's program order (between batches): publish(k) waits on it.
  std::vector<std::vector<OpId>> before_sync(G, std::vector<OpId>(N, kNoOp));
  const auto add_chunks = [&](RlTrajectory& t) {
    const Time chunk = spec.generation.chunk > 0 ? spec.generation.chunk : t.length;
    const std::int64_t chunks = (t.length + chunk - 1) / chunk;
    OpId prev = kNoOp;
    for (std::int64_t c = 0; c < chunks; ++c) {
      const Time d = c + 1 < chunks ? chunk : t.length - chunk * (chunks - 1);
      const OpId op = add(p.generators[t.generator], d, {RlOpKind::Generate, 0, t.generator, t.id, t.batch, static_cast<std::int32_t>(c)});
      if (prev == kNoOp) t.first_op = op; else g.add_dep(prev, op);
      prev = op;
    }
    t.last_op = prev;
  };
  for (int w = 0; w < G; ++w) {
    const ResourceId r = p.generators[w];
    if (in_flight) {
      for (int k = 0; k < N; ++k) p.generator_syncs[w][k] = add(r, spec.sync, {RlOpKind::Sync, 0, w, -1, k, 0});
      for (int id : per_generator[w]) add_chunks(p.trajectories[id]);
    } else {
      OpId last = kNoOp;
      const auto sync_here = [&](int k) {
        before_sync[w][k] = last;
        last = p.generator_syncs[w][k] = add(r, spec.sync, {RlOpKind::Sync, 0, w, -1, k, 0});
      };
      std::size_t next = 0;
      for (int j = 0; j < N; ++j) {
        for (; next < per_generator[w].size() && p.trajectories[per_generator[w][next]].batch == j; ++next) {
          add_chunks(p.trajectories[per_generator[w][next]]);
          last = p.trajectories[per_generator[w][next]].last_op;
        }
        if (j - lead >= 0) sync_here(j - lead);
      }
      for (int k = std::max(0, N - lead); k < N; ++k) sync_here(k);
    }
  }
  for (std::int64_t i = 0; i < n && V > 0; ++i) {
    RlTrajectory& t = p.trajectories[i];
    t.verify_op = add(p.verifiers[t.verifier], verify_time[i], {RlOpKind::Verify, 1, t.verifier, t.id, t.batch, 0});
  }
  p.learn.assign(N, std::vector<OpId>(L, kNoOp));
  p.learner_syncs.assign(L, std::vector<OpId>(N, kNoOp));
  for (int w = 0; w < L; ++w)
    for (int k = 0; k < N; ++k) {
      p.learn[k][w] = add(p.learners[w], learn_time[k][w], {RlOpKind::Learn, 2, w, -1, k, 0});
      p.learner_syncs[w][k] = add(p.learners[w], spec.sync, {RlOpKind::Sync, 2, w, -1, k, 0});
    }

  // --- Dependencies.
  for (int w = 0; w < G && in_flight; ++w)
    for (std::size_t j = 1; j < per_generator[w].size(); ++j)
      g.add_dep(p.trajectories[per_generator[w][j - 1]].last_op, p.trajectories[per_generator[w][j]].first_op);
  for (std::int64_t i = 0; i < n; ++i) {
    const RlTrajectory& t = p.trajectories[i];
    if (in_flight && t.batch - lead - 1 >= 0) g.add_dep(p.publish[t.batch - lead - 1], t.first_op);
    if (t.verify_op != kNoOp) g.add_dep(t.last_op, t.verify_op);
    // The learner starts a batch once all of it is verified (only then is the kept set known).
    const OpId ready = t.verify_op != kNoOp ? t.verify_op : t.last_op;
    for (int w = 0; w < L; ++w) g.add_dep(ready, p.learn[t.batch][w]);
    // Queue lengths: waiting for a verifier, then (kept ones) waiting for the learner.
    if (t.verify_op != kNoOp)
      p.holds.push_back({RlLoopProgram::kVerificationQueue, 1, {t.last_op, OpPoint::Done}, {t.verify_op, OpPoint::Start}});
    if (t.verified_kept)
      p.holds.push_back({RlLoopProgram::kLearningQueue, 1, {ready, OpPoint::Done}, {p.learn[t.batch][t.learner], OpPoint::Start}});
  }
  for (int k = 0; k < N; ++k) {
    for (int w = 0; w < L; ++w) g.add_dep(p.learn[k][w], p.publish[k]);
    for (int w = 0; w < G; ++w) {
      if (!in_flight && before_sync[w][k] != kNoOp) g.add_dep(before_sync[w][k], p.publish[k]);
      g.add_dep(p.publish[k], p.generator_syncs[w][k]);
    }
    for (int w = 0; w < L; ++w) g.add_dep(p.publish[k], p.learner_syncs[w][k]);
  }

  const RlLoopProgram* self = &p;
  g.set_namer([self](OpId op) {
    const RlOpInfo& x = self->info[op];
    switch (x.kind) {
      case RlOpKind::Generate: return fmt::format("generate traj {} chunk {} (generator {})", x.sample, x.chunk, x.worker);
      case RlOpKind::Verify: return fmt::format("verify traj {} (verifier {})", x.sample, x.worker);
      case RlOpKind::Learn: return fmt::format("learn batch {} (learner {})", x.batch, x.worker);
      case RlOpKind::Publish: return fmt::format("publish v{}", x.batch + 1);
      case RlOpKind::Sync: return fmt::format("sync v{} ({} {})", x.batch + 1, stage_name(x.stage), x.worker);
    }
    return std::string("?");
  });
  return prog;
}

namespace {

void fill_outcomes(const RlLoopSpec& spec, RlLoopProgram& p, const Timeline& tl) {
  std::vector<std::vector<Time>> sync_end(p.generators.size());
  for (std::size_t w = 0; w < p.generators.size(); ++w) {
    for (OpId op : p.generator_syncs[w]) sync_end[w].push_back(tl.end[op]);
    std::sort(sync_end[w].begin(), sync_end[w].end());
  }
  const auto version_at = [&](int w, Time start) {
    return static_cast<int>(std::upper_bound(sync_end[w].begin(), sync_end[w].end(), start) - sync_end[w].begin());
  };
  for (RlTrajectory& t : p.trajectories) {
    t.start = tl.start[t.first_op];
    t.end = tl.end[t.last_op];
    t.version_first = version_at(t.generator, t.start);
    t.version_last = version_at(t.generator, tl.start[t.last_op]);
    t.interrupted = t.version_last != t.version_first;
    t.learned = t.verified_kept && !(t.interrupted && spec.interrupted == Interrupted::Discard);
    t.staleness = t.batch - t.version_first;
  }
}

RlLoopStats measure(const RlLoopSpec& spec, const RlLoopProgram& p, const Timeline& tl,
                    const std::vector<LevelCurve>& queues) {
  const OpGraph& g = p.graph;
  RlLoopStats s;
  s.makespan = tl.makespan;
  const int N = spec.batches;
  std::vector<Time> done(N, 0);
  for (int k = 0; k < N; ++k)
    for (const auto& syncs : p.learner_syncs) done[k] = std::max(done[k], tl.end[syncs[k]]);
  std::vector<int> learned_in(N, 0);
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

  // Stage utilization: the work of the window's batches over the window's worker time. Work is
  // counted by batch, not clipped by time, so that generation running ahead (or the pipeline
  // draining at the end) does not distort it. Syncs are not a stage's work.
  const int workers[3] = {static_cast<int>(p.generators.size()), static_cast<int>(p.verifiers.size()),
                          static_cast<int>(p.learners.size())};
  Time busy[3] = {0, 0, 0};
  for (OpId op = 0; op < g.op_count(); ++op) {
    const RlOpInfo& x = p.info[op];
    const bool in_window = x.batch > s.window_from && x.batch <= s.window_to;
    if (in_window && (x.kind == RlOpKind::Generate || x.kind == RlOpKind::Verify || x.kind == RlOpKind::Learn))
      busy[x.stage] += g.op_duration(op);
  }
  double best = -1;
  for (int st = 0; st < 3; ++st) {
    if (workers[st] == 0) continue;
    const double u = t1 > t0 ? static_cast<double>(busy[st]) / (static_cast<double>(t1 - t0) * workers[st]) : 0;
    s.stages.push_back({st, workers[st], u});
    if (u > best) { best = u; s.bottleneck = st; }
  }

  if (N >= 2) {
    const Time span = tl.start[p.publish[N - 1]] - tl.start[p.publish[0]];
    s.update_rate_per_s = span > 0 ? (N - 1) / to_s(span) : 0;
  }
  if (spec.updates == WeightUpdates::InFlight && s.generated > 0) {
    // Eight bins of half the mean length; the last one open-ended.
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

}  // namespace stepsim
