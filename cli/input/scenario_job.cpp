// Reader of the `job:` scenario section (see README "Whole-run simulation").
#include <algorithm>

#include <fmt/format.h>

#include "cli/input/budget.hpp"
#include "cli/input/job_scenario.hpp"

#include "models/deadline.hpp"
#include "models/layer_costs.hpp"
#include "models/model_limits.hpp"
#include "models/training_state.hpp"
#include "models/units.hpp"

namespace stepsim::cli {

namespace {

std::vector<Time> duration_list(const Reader& r, const std::string& k) {
  if (!r.has(k)) return {};
  const YAML::Node n = r.node()[k];
  return r.durations(k, n.IsSequence() ? static_cast<int>(n.size()) : 1);
}

// The snapshot a plan saves: its checkpoint bytes, or the recoverable state.
Bytes plan_checkpoint_bytes(const PlanSpec& plan) {
  return plan.checkpoint_bytes.value_or(recoverable_state_bytes(plan.model.parameters, plan.format));
}

CheckpointSpec read_checkpoint(const Reader& c, JobScenario& job, const PlanSpec* plan, Bytes state_bytes) {
  c.only({"every", "every_steps", "compare", "mode", "size", "storage", "copy", "commit", "buffers"},
         {{"interval", "every"}, {"bandwidth", "storage"}});
  CheckpointSpec ck;
  if (c.has("every") && c.has("every_steps"))
    c.fail("every_steps", "give 'every' (a duration) or 'every_steps', not both");
  // `young`: Young's optimum sqrt(2 c M) (models/checkpoint.hpp), set once the step is known.
  job.every_young = c.has("every") && c.node()["every"].IsScalar() && c.node()["every"].Scalar() == "young";
  if (!job.every_young) job.every = c.opt_duration("every");
  job.every_steps = c.opt_integer("every_steps", 1);
  if (job.every && *job.every <= 0) c.fail("every", "must be positive");
  job.compare = duration_list(c, "compare");
  for (Time t : job.compare)
    if (t <= 0) c.fail("compare", "intervals must be positive");
  const std::string mode = c.opt_text("mode").value_or("sync");
  if (mode == "sync")
    ck.mode = SaveMode::Sync;
  else if (mode == "async")
    ck.mode = SaveMode::Async;
  else
    c.fail("mode", fmt::format("unknown mode '{}' (known: sync, async)", mode));
  if (plan) {
    ck.size = c.opt_bytes("size").value_or(plan_checkpoint_bytes(*plan));
    ck.storage_bandwidth = c.opt_bandwidth("storage").value_or(plan->storage_bandwidth);
    if (!job.every && !job.every_steps && plan->interval) job.every = plan->interval;
  }
  if (state_bytes > 0) ck.size = state_bytes;  // the job step's recoverable state, unless `size` says
  if (!c.has("size") && ck.size <= 0) c.fail("size", "missing: the snapshot's size, e.g. 114670295040B or 115GB");
  if (!c.has("storage") && ck.storage_bandwidth <= 0)
    c.fail("storage", "missing: the storage's write bandwidth, e.g. 7GB/s");
  if (c.has("size")) ck.size = c.bytes("size");
  if (c.has("storage")) ck.storage_bandwidth = c.bandwidth("storage");
  ck.copy = c.opt_duration("copy").value_or(0);
  ck.commit = c.opt_duration("commit").value_or(0);
  if (c.has("copy") && ck.mode == SaveMode::Sync) c.fail("copy", "'copy' is the async pause; mode is sync");
  if (c.has("buffers")) {
    if (ck.mode == SaveMode::Sync) c.fail("buffers", "'buffers' apply to async saves; mode is sync");
    ck.buffers = c.count("buffers", 1);
  }
  return ck;
}

InputSpec read_input(const Reader& in, const std::shared_ptr<const Source>& src) {
  in.only({"batch", "draws", "prefetch", "warm", "workers", "rate", "tokens_per_second", "sequence_tokens", "pauses"});
  InputSpec s;
  s.batch = in.integer("batch", 1, kMaxGlobalBatch);
  s.draws = in.opt_integer("draws", 1).value_or(1);
  if (s.draws > s.batch)
    in.fail("draws", fmt::format("more draws ({}) than sequences per step ({})", s.draws, s.batch));
  s.prefetch = in.integer("prefetch", 1, kMaxGlobalBatch);
  const std::int64_t largest_draw = (s.batch + s.draws - 1) / s.draws;
  if (s.prefetch < largest_draw)
    in.fail("prefetch",
            fmt::format("must hold at least one draw ({} sequences), or training can never start", largest_draw));
  s.warm = in.flag("warm", true);
  const std::int64_t workers = in.integer("workers", 1);
  if (workers > kMaxWorkers)
    in.fail("workers", fmt::format("{} is too many: at most {} input workers", workers, kMaxWorkers));
  double rate = 0;
  if (in.has("rate") == in.has("tokens_per_second"))
    in.fail("rate", "give each worker's 'rate' (sequences per second) or 'tokens_per_second' with 'sequence_tokens'");
  if (in.has("rate")) {
    rate = in.number("rate");
    if (in.has("sequence_tokens")) in.fail("sequence_tokens", "only read with 'tokens_per_second'");
  } else {
    const double tokens = in.number("tokens_per_second");
    if (!in.has("sequence_tokens")) in.fail("tokens_per_second", "needs 'sequence_tokens' (tokens per sequence)");
    rate = tokens / static_cast<double>(in.integer("sequence_tokens", 1));
  }
  if (!(rate > 0)) in.fail(in.has("rate") ? "rate" : "tokens_per_second", "must be positive");
  s.workers.assign(static_cast<std::size_t>(workers), InputWorker{period_for_rate(rate), {}});
  if (in.has("pauses")) {
    const YAML::Node list = in.node()["pauses"];
    if (!list.IsSequence()) in.fail("pauses", "expected a list like [{worker: 0, at: 600s, for: 60s}]");
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string k = fmt::format("{}[{}]", in.key("pauses"), i);
      if (!list[i].IsMap()) in.fail_at(list[i], k, "expected {worker: N, at: DURATION, for: DURATION}");
      const Reader p(src, list[i], k);
      p.only({"worker", "at", "for"});
      const std::int64_t w = p.integer("worker", 0);
      if (w >= workers)
        p.fail("worker", fmt::format("worker {} does not exist (workers: {}, counted from 0)", w, workers));
      const InputPause pause{p.duration("at"), p.duration("for")};
      auto& ps = s.workers[static_cast<std::size_t>(w)].pauses;
      for (const auto& q : ps)
        if (pause.start < q.start + q.duration && q.start < pause.start + pause.duration)
          p.fail("at", fmt::format("overlaps another pause of worker {}", w));
      ps.push_back(pause);
      std::sort(ps.begin(), ps.end(), [](const InputPause& a, const InputPause& b) { return a.start < b.start; });
    }
  }
  return s;
}

StragglerSpec read_stragglers(const Reader& r, std::int64_t cards) {
  r.only({"compute", "sigma", "other", "cards_per_machine", "slow", "steps"});
  StragglerSpec s;
  s.cards = cards;
  s.compute = r.duration("compute");
  if (s.compute <= 0) r.fail("compute", "must be positive");
  s.sigma = r.duration("sigma");
  s.other = r.opt_duration("other").value_or(0);
  s.cards_per_machine = r.opt_integer("cards_per_machine", 1).value_or(8);
  s.steps = r.opt_integer("steps", 1).value_or(2000);
  // One draw per card and simulated step, holding no memory: bounded by --max-ops alone.
  check_budget(r, "steps", static_cast<double>(s.steps) * static_cast<double>(std::max<std::int64_t>(cards, 1)), 0, 0);
  // Each card's wait is summed over the steps in int64 ns: steps x (compute + other + 12 sigma,
  // past any draw the normal gives) must stay within 2^62.
  const double per_step =
      static_cast<double>(s.compute) + static_cast<double>(s.other) + 12.0 * static_cast<double>(s.sigma);
  if (static_cast<double>(s.steps) * per_step > 4.6e18)
    r.fail(per_step > 8.64e13 ? "sigma" : "steps",  // past a day a step, the step is at fault
           fmt::format("too large: {} steps of up to compute + other + 12 sigma would exceed 146 years of waits",
                       s.steps));
  if (r.has("slow")) {
    const Reader slow = r.child("slow");
    slow.only({"machines", "fraction", "slowdown"});
    if (slow.has("machines") == slow.has("fraction")) slow.fail("machines", "give 'machines' (a count) or 'fraction'");
    s.slow_machines = slow.opt_integer("machines", 1).value_or(0);
    if (slow.has("fraction")) {
      s.slow_fraction = slow.number("fraction");
      if (!(s.slow_fraction > 0 && s.slow_fraction <= 1)) slow.fail("fraction", "must be in (0, 1]");
    }
    s.slowdown = slow.number("slowdown");
    if (!(s.slowdown > 0)) slow.fail("slowdown", "must be positive (1.05 = 5% slower)");
  }
  return s;
}

// `tokens`: a whole count, at least 1.
std::int64_t job_tokens(const Reader& r) { return r.integer("tokens", 1); }

// With a job_step: the run's steps from `tokens` (or `steps`), at the step's tokens per step.
std::int64_t job_step_steps(const Reader& r, const JobStepSpec& step) {
  if (r.has("tokens") == r.has("steps"))
    r.fail("tokens", "give the run's 'tokens' (trained at the job_step's global batch) or its 'steps', one of them");
  if (r.has("steps")) return r.integer("steps", 1);
  return steps_for(job_tokens(r), step.layout.global_batch * step.model.seq);
}

}  // namespace

JobScenario read_job(const Reader& r, std::shared_ptr<const Source> src, const PlanSpec* plan,
                     const JobStepScenario* job_step) {
  r.only({"steps", "tokens", "step_time", "cards", "card_mtbf", "restore", "rollback_every", "failures_at", "deadline",
          "reserved", "runs", "seed", "checkpoint", "input", "stragglers"});
  if (plan && !plan->timed()) plan = nullptr;  // a memory-only plan has no steps to lend
  if (!job_step && r.has("tokens"))
    r.fail("tokens", "counts steps at a job_step's global batch: the scenario has none");
  JobScenario job;
  if (job_step) {
    job.steps = job_step_steps(r, job_step->spec);
    if (r.has("tokens")) {
      job.steps_key = "tokens";
      job.tokens = job_tokens(r);
    }
  } else
    job.steps = plan && !r.has("steps") ? steps_for(plan->tokens, plan->tokens_per_step()) : r.integer("steps", 1);
  job.step_time = r.opt_duration("step_time");
  if (job.step_time && *job.step_time <= 0) r.fail("step_time", "must be positive");
  if (plan && !job.step_time && !r.has("stragglers")) {
    // Cards and step time from each plan case.
    if (r.has("cards"))
      r.fail("cards", "with a plan, cards come from its cases (give step_time too for a job of your own)");
    job.per_plan_case = true;
  }
  if (job_step && !job.step_time) {
    if (r.has("stragglers"))
      r.fail("stragglers", "the job_step's simulated step is the step: give step_time to use stragglers");
    job.step_from_job_step = true;
    job.per_variant = !job_step->variants.empty();
  }
  if (!job.step_time && !r.has("stragglers") && !job.per_plan_case && !job.step_from_job_step)
    r.fail("step_time", "missing: the time of one step (or a 'stragglers' section to simulate it)");
  JobSpec& s = job.run;
  job.cards_given = r.has("cards");
  s.cards = r.opt_integer("cards", 1).value_or(job_step ? job_step->spec.layout.ranks() : 1);
  s.card_mtbf = r.opt_duration("card_mtbf").value_or(plan ? plan->card_mtbf : 0);
  if (r.has("card_mtbf") && s.card_mtbf <= 0) r.fail("card_mtbf", "must be positive (leave it out for no failures)");
  if (s.card_mtbf > 0 && s.card_mtbf / s.cards <= 0)
    r.fail("card_mtbf", "the job's MTBF (card MTBF / cards) rounds to 0");
  s.restore = r.opt_duration("restore").value_or(plan ? plan->restore : 0);
  s.rollback_interval = r.opt_duration("rollback_every").value_or(0);
  if (r.has("rollback_every") && s.rollback_interval <= 0) r.fail("rollback_every", "must be positive");
  s.failures_at = duration_list(r, "failures_at");
  std::sort(s.failures_at.begin(), s.failures_at.end());
  s.deadline = r.opt_duration("deadline").value_or(plan ? plan->deadline : 0);
  s.reserved = r.opt_duration("reserved").value_or(plan ? plan->reserved : 0);
  // As a plan's and a search's: the reserve is taken from the deadline, which must outlast it.
  if (s.deadline > 0 && s.reserved >= s.deadline)
    r.fail(r.has("deadline") && !r.has("reserved") ? "deadline" : "reserved",
           fmt::format("the {} reserved must be shorter than the {} deadline", format_duration(s.reserved),
                       format_duration(s.deadline)));
  job.runs = r.opt_count("runs", 1).value_or(1000);
  job.seed = static_cast<std::uint64_t>(r.opt_integer("seed", 0).value_or(1));
  if (r.has("checkpoint")) {
    const Reader c = r.child("checkpoint");
    const Bytes state =
        job_step && !c.has("size") ? checkpoint_state_bytes(job_step->spec.model, job_step->spec.layout) : 0;
    job.size_from_state = state > 0;
    s.checkpoint = read_checkpoint(c, job, plan, state);
    if (!job.every && !job.every_steps && !job.every_young)
      c.fail("every", "missing: the interval between checkpoints (a duration, or young)");
    if (job.every_young && s.card_mtbf <= 0 && s.rollback_interval <= 0)
      c.fail("every", "young balances saves against interruptions: give card_mtbf (or rollback_every)");
    // Young's interval sqrt(2 x pause x MTBF) is 0 for an async save that does not pause training:
    // a save every step (the runs then stopped at the work guard, blamed at job.cards).
    if (job.every_young && s.checkpoint.mode == SaveMode::Async && s.checkpoint.copy <= 0)
      c.fail(c.has("copy") ? "copy" : "mode",
             "async saves with every: young need copy, the training pause Young's interval sqrt(2 x pause x "
             "MTBF) is set by (e.g. copy: 2s); without one it is 0, a save every step");
  } else if (plan && plan->interval && plan->storage_bandwidth > 0) {
    // The plan's synchronous checkpoint.
    s.checkpoint.size = plan_checkpoint_bytes(*plan);
    s.checkpoint.storage_bandwidth = plan->storage_bandwidth;
    job.every = plan->interval;
  }
  if (r.has("input")) job.input = read_input(r.child("input"), src);
  if (r.has("stragglers")) job.stragglers = read_stragglers(r.child("stragglers"), s.cards);
  return job;
}

}  // namespace stepsim::cli
