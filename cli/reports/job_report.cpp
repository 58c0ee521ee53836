#include "cli/reports/job_report.hpp"
#include "cli/reports/quantities.hpp"

#include "cli/input/budget.hpp"
#include "cli/input/plan_source.hpp"
#include "cli/reports/job_step_report.hpp"
#include "cli/reports/plan_report.hpp"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "cli/reports/table.hpp"
#include "models/checkpoint.hpp"
#include "models/deadline.hpp"
#include "models/layer_costs.hpp"
#include "models/units.hpp"
#include "sim/checked.hpp"

namespace stepsim::cli {

using Json = nlohmann::ordered_json;

namespace {
constexpr Time kDay = 86'400 * kSecond;
constexpr std::int64_t kMaxInputSteps = 10'000'000;  // per-step samples are kept in memory

double round6(double x) { return std::round(x * 1e6) / 1e6; }
double round8(double x) { return std::round(x * 1e8) / 1e8; }
// Days for long spans, seconds below a day.
std::string span(Time t) {
  if (std::llabs(t) >= kDay) return fmt::format("{:.2f} d", days(t));
  if (std::llabs(t) >= 3600 * kSecond) return fmt::format("{:.2f} h", to_s(t) / 3600.0);
  return format_duration(t);
}

// The verdict on a deadline from the share of runs that meet it.
std::string verdict(double p) { return p >= 0.9 ? "meets" : p >= 0.5 ? "at risk" : "misses"; }

// Steps whose nominal start (no waits) is at most `t`, plus one.
std::int64_t steps_until(Time t, Time step) { return step > 0 ? t / step + 1 : 1; }
}  // namespace

namespace {

// The per-step input waits (the step profile), the book's estimate of the first pause and the
// simulated minimum prefetch.
void analyse_input(const Scenario& sc, const JobScenario& job, JobAnalysis& a) {
  if (job.steps > kMaxInputSteps)
    sc.fail("job.steps", fmt::format("the input pipeline simulates at most {} steps", kMaxInputSteps));
  try {
    a.input = simulate_input(*job.input, a.step_time, job.steps);
  } catch (const std::invalid_argument& e) { sc.fail("job.input", e.what()); }
  std::vector<Time> durations = a.input->waits();
  for (Time& d : durations) d += a.step_time;
  a.spec.profile = StepProfile(durations);
  // The first pause: the book's estimate, and the simulated minimum prefetch (searched over the
  // steps up to the pause's end plus twice the fluid refill time, after which no step stalls).
  for (std::size_t w = 0; w < job.input->workers.size() && !a.fluid; ++w) {
    if (job.input->workers[w].pauses.empty()) continue;
    const InputPause& p = job.input->workers[w].pauses.front();
    a.fluid = fluid_pause_estimate(*job.input, a.step_time, w, p.duration);
  }
  if (a.fluid && a.fluid->production > a.fluid->consumption) {
    Time last_end = 0;
    for (const auto& w : job.input->workers)
      for (const auto& p : w.pauses) last_end = std::max(last_end, time_add(p.start, p.duration, "an input pause"));
    const Time settle = time_from_ns(2.0 * a.fluid->refill_seconds * 1e9, "the input pipeline's refill");
    const std::int64_t horizon =
        std::min(job.steps, steps_until(time_add(last_end, settle, "the input pipeline's refill"), a.step_time) + 2);
    a.min_prefetch = min_prefetch_without_stall(*job.input, a.step_time, horizon);
  }
}

// A job's events, estimated before any run is simulated: its checkpoint segments (at rate r a
// segment of length L is tried e^(rL) times on average: exponential gaps), the interruptions,
// and the events of one run at the job's interval, of the longest pass (a compared interval is
// shorter: more segments), and of every pass (each run at each interval, and the run recorded).
struct JobEvents {
  double segments = 0, segment_ns = 0, rate = 0, tries = 0, interruptions = 0;
  double per_run = 0, largest = 0, all_passes = 0;
};
JobEvents estimate_job_events(const JobSpec& spec, int runs, const std::vector<std::int64_t>& sweep) {
  JobEvents e;
  const double work = static_cast<double>(spec.profile.total());
  const double steps = static_cast<double>(spec.profile.steps());
  // At least one: an interval longer than the job is one segment of the job's length.
  const auto segments_of = [steps](std::int64_t every) {
    return every > 0 ? std::max(1.0, steps / static_cast<double>(every)) : 1.0;
  };
  if (spec.card_mtbf > 0) e.rate += static_cast<double>(spec.cards) / static_cast<double>(spec.card_mtbf);
  if (spec.rollback_interval > 0) e.rate += 1.0 / static_cast<double>(spec.rollback_interval);
  // A segment (its steps, its save, the restore before it) must pass without an interruption.
  const auto segment_ns_of = [&](double n) {
    return work / n + static_cast<double>(spec.checkpoint.pause() + spec.restore);
  };
  const auto interruptions_of = [&](double n) {
    return std::max(work * e.rate, n * std::expm1(std::min(e.rate * segment_ns_of(n), 700.0)));
  };
  const auto events_of = [&](double n) { return 2 * n + 2 * interruptions_of(n) + 1; };
  e.segments = segments_of(spec.checkpoint.every_steps);
  e.segment_ns = segment_ns_of(e.segments);
  e.tries = e.rate * e.segment_ns;
  e.interruptions = interruptions_of(e.segments);
  e.per_run = e.largest = events_of(e.segments);
  double one_of_each = e.per_run;
  for (const std::int64_t every : sweep) {
    one_of_each += events_of(segments_of(every));
    e.largest = std::max(e.largest, events_of(segments_of(every)));
  }
  e.all_passes = static_cast<double>(runs) * one_of_each + e.per_run;
  return e;
}

// No run would finish: the segments are retried past the budget. Where a save's pause and the
// restore alone outlast the time between interruptions, saving more often does not help: they are
// blamed (the longest of them); else the rate's key, with "save more often".
[[noreturn]] void refuse_unfinished(const Reader& root, const JobSpec& spec, double rate, const std::string& rate_key,
                                    const std::string& retried) {
  const CheckpointSpec& ck = spec.checkpoint;
  // The keys --set changed say which the user is trying: a rate (cards, MTBF, rollbacks) set
  // alone keeps the blame at the rate.
  const auto any = [&root](std::initializer_list<const char*> keys) {
    return std::any_of(keys.begin(), keys.end(), [&root](const char* k) { return root.overridden(k); });
  };
  const bool fixed_set = any(
      {"job.checkpoint.commit", "job.checkpoint.storage", "job.checkpoint.size", "job.checkpoint.copy", "job.restore"});
  const bool rate_set = any({"job.cards", "job.card_mtbf", "job.rollback_every"});
  if (rate * static_cast<double>(ck.pause() + spec.restore) >= 1 && (fixed_set || !rate_set)) {
    const bool sync = ck.mode == SaveMode::Sync;
    const std::string key = spec.restore >= ck.pause()             ? "job.restore"
                            : sync && ck.commit >= ck.write_time() ? "job.checkpoint.commit"
                            : sync                                 ? "job.checkpoint.storage"
                                                                   : "job.checkpoint.copy";
    fail_too_large(root, key,
                   fmt::format("{}: a save's pause ({}) and the restore ({}) alone take longer: no run would finish "
                               "within --max-ops {}; shorten them, or use fewer cards",
                               retried, span(ck.pause()), span(spec.restore), budget().max_ops));
  }
  fail_too_large(root, rate_key,
                 fmt::format("{}: no run would finish within --max-ops {}; save more often or use fewer cards", retried,
                             budget().max_ops));
}

// A run that never finished (JobCannotFinish), blamed where it comes from: a snapshot that
// becomes durable no sooner than the next interruption, else the interruptions' rate.
[[noreturn]] void refuse_cannot_finish(const Scenario& sc, const JobSpec& spec, const JobCannotFinish& e) {
  const Time gap = spec.card_mtbf > 0 ? spec.job_mtbf() : spec.rollback_interval;
  // An async snapshot counts once written and committed: where that takes longer than the time
  // between interruptions none ever counts, and saving more often does not help (the message
  // said so, blamed on the MTBF).
  const CheckpointSpec& ck = spec.checkpoint;
  const Time durable = ck.mode == SaveMode::Async ? time_add(ck.write_time(), ck.commit, "a snapshot's commit") : 0;
  if (durable > 0 && durable >= gap)
    sc.fail(ck.commit >= ck.write_time() ? "job.checkpoint.commit" : "job.checkpoint.storage",
            fmt::format("{}: a snapshot counts once written and committed, {} after its capture, no sooner than "
                        "the {} between interruptions on average: none counts; shorten the commit record (or the "
                        "write), or use fewer cards",
                        e.what(), span(durable), span(gap)));
  const std::string key = spec.card_mtbf > 0 ? "job.card_mtbf" : "job.rollback_every";
  sc.fail(key, fmt::format("{}: interruptions (every {} on average) come faster than checkpoint segments "
                           "complete; save more often or use fewer cards",
                           e.what(), span(spec.card_mtbf > 0 ? spec.job_mtbf() : spec.rollback_interval)));
}

// The events of every run (estimate_job_events), the memory of the one run recorded, and the
// per-run work guard from the same budget: a run that takes far more events than expected
// (failures faster than segments complete) stops at its share.
void check_job_budget(const Scenario& sc, JobSpec& spec, int runs, const std::vector<std::int64_t>& sweep) {
  const JobEvents ev = estimate_job_events(spec, runs, sweep);
  const double segments = ev.segments, segment_ns = ev.segment_ns, rate = ev.rate, tries = ev.tries;
  const double interruptions = ev.interruptions, largest = ev.largest, all_passes = ev.all_passes;
  const std::string key = interruptions <= segments ? "job.steps"
                          : tries > 1               ? (spec.card_mtbf > 0 ? "job.card_mtbf" : "job.rollback_every")
                          : spec.card_mtbf > 0      ? "job.cards"
                                                    : "job.rollback_every";
  // The recorded run (the report's timeline) keeps its events -- a segment's steps and save (an
  // async save: copy, write, commit), each interruption -- and the pending-snapshot curve, up to
  // the record's bounds.
  const double recorded =
      std::min(run0_record_bytes(), (4 * segments + 4 * interruptions + 1) *
                                        static_cast<double>(sizeof(JobEvent) + 2 * sizeof(std::pair<Time, int>)));
  const Reader root(sc.source, sc.source->root, "");
  const double per_run = ev.per_run;
  // Blamed where the rate comes from: the failures (the cards or their MTBF, whichever --set
  // changed, else the MTBF) or the rollbacks, whichever come more often; or a segment --set made
  // long (its interval, its restore) where --set changed no rate.
  const auto& set = sc.source->overridden;
  const double failures =
      spec.card_mtbf > 0 ? static_cast<double>(spec.cards) / static_cast<double>(spec.card_mtbf) : 0;
  std::string rate_key = failures * static_cast<double>(spec.rollback_interval) >= 1 || spec.rollback_interval <= 0
                             ? (set.count("job.cards") && !set.count("job.card_mtbf") ? "job.cards" : "job.card_mtbf")
                             : "job.rollback_every";
  if (!set.count("job.cards") && !set.count("job.card_mtbf") && !set.count("job.rollback_every"))
    for (const char* k : {"job.checkpoint.every", "job.restore"})
      if (set.count(k)) rate_key = k;
  // Said only where segments are retried (tries > 1: a positive rate, so 1 / rate is a time).
  const auto retried = [&] {
    const double each = std::exp(std::min(tries, 700.0));
    return fmt::format(
        "interruptions (every {} on average) come faster than a checkpoint segment of {} completes ({} tries each)",
        span(static_cast<Time>(1 / rate)), span(static_cast<Time>(segment_ns)),
        each < 1e15 ? fmt::format("about {:.1e}", each) : std::string("more than 1e15"));
  };
  // Retried segments past the budget: no run would finish, said before any is simulated (a run
  // used to find out after its share of the work guard, seconds later).
  if (tries > 1 && !over_budget(per_run, recorded, 0).empty()) refuse_unfinished(root, spec, rate, rate_key, retried());
  // Where one run would fit, the runs are what is too many: `--runs` (or `job.runs`), not the job;
  // unless --set made the segments retried (a restore of days: `--set job.restore=2d`), which is
  // then what is blamed, with why.
  if (over_budget(2 * largest, recorded, 0).empty() && !over_budget(all_passes, recorded, 0).empty()) {
    const std::string why = over_budget(all_passes, recorded, 0);
    if (tries > 1 && set.count(rate_key))
      fail_too_large(root, rate_key,
                     fmt::format("too large: {} for the runs: {}; save more often, or fewer runs", why, retried()));
    const std::string message = fmt::format("too large: {}: fewer runs, or raise --max-ops", why);
    if (root.child("job").has("runs") && runs == sc.job->runs) fail_too_large(root, "job.runs", message);
    throw TooLargeError("--runs", 0, "", message);
  }
  check_budget(root, key, all_passes, recorded, 0);
  // Each run's guard: its share of the budget by the estimate of the longest pass (a run at the
  // shortest interval compared), so that a run within its estimate never trips it; past it, a run
  // whose failures outrun the estimate stops.
  spec.max_events = std::max<std::int64_t>(
      1000, static_cast<std::int64_t>(static_cast<double>(budget().max_ops) * largest / all_passes));
}

// The checkpoint interval in steps: given in steps, as a duration, or Young's optimum for this
// job's save pause and restore at its cards' MTBF (and rollbacks), `every: young`.
void set_checkpoint_interval(const JobScenario& job, JobAnalysis& a) {
  if (job.every_steps) {
    a.spec.checkpoint.every_steps = *job.every_steps;
  } else if (job.every) {
    a.spec.checkpoint.every_steps = steps_per_interval(*job.every, a.step_time);
  } else if (job.every_young) {
    Interruptions in;
    in.card_mtbf = a.spec.card_mtbf;
    in.cards = static_cast<int>(std::min<std::int64_t>(a.spec.cards, std::numeric_limits<int>::max()));
    if (a.spec.rollback_interval > 0) in.rollback_every = a.spec.rollback_interval;
    a.young_interval = optimal_checkpoint_interval({a.spec.checkpoint.pause(), a.spec.restore}, in);
    a.spec.checkpoint.every_steps = steps_per_interval(std::max<Time>(*a.young_interval, 1), a.step_time);
  }
}

// The scenario's job step (or its variant `variant`), simulated once: every run's steps take its
// time. A schedule that cannot run it is refused at its layout key.
JobStepResult job_step_or_fail(const Scenario& sc, const JobStepSpec& step, const std::string& variant = "") {
  try {
    return run_job_step(step).result;
  } catch (const SpecError& e) {
    if (variant.empty()) sc.fail("job_step." + e.key(), e.what());
    sc.fail(fmt::format("job_step.variants.{}.{}", variant, e.key()),
            fmt::format("variant '{}': {}", variant, e.what()));
  }
}

// Where a simulated step came from, as the step's own report says it (layout_line).
std::string step_source_of(const JobStepSpec& step) {
  return fmt::format("{} on {} x {}: {}", step.model.shape.name, step.layout.ranks(), step.cluster.accelerator.name,
                     layout_line(step));
}

}  // namespace

JobAnalysis analyse_job(const Scenario& sc, int runs, std::uint64_t seed, int threads,
                        const std::function<void(int, int)>& progress) {
  if (!sc.job) sc.fail("job", "this command needs a 'job' section");
  const JobScenario& job = *sc.job;
  JobAnalysis a;
  a.name = sc.name;
  a.spec = job.run;

  // Step time: given, or E[step] of the straggler simulation.
  if (job.stragglers) {
    a.stragglers = simulate_stragglers(*job.stragglers, seed, threads);
    a.cards_per_machine = job.stragglers->cards_per_machine;
  }
  if (job.step_time) {
    a.step_time = *job.step_time;
  } else if (job.step_from_job_step) {
    a.step_time = job_step_or_fail(sc, sc.job_step->spec).step_time;
    a.step_source = step_source_of(sc.job_step->spec);
  } else {
    a.step_time = static_cast<Time>(std::llround(a.stragglers->step_seconds.mean * 1e9));
  }

  // Work must stay far from int64 overflow (2^61 ns ~ 73 years).
  if (job.steps > (Time{1} << 61) / std::max<Time>(a.step_time, 1))
    sc.fail("job." + job.steps_key, fmt::format("{} steps of {} exceed the 73 years a run can simulate", job.steps,
                                                format_duration(a.step_time)));
  // Input: one failure-free pass over the steps gives each step's input wait.
  if (job.input)
    analyse_input(sc, job, a);
  else
    a.spec.profile = StepProfile(job.steps, a.step_time);

  set_checkpoint_interval(job, a);
  std::vector<std::int64_t> sweep;
  for (Time t : job.compare) sweep.push_back(steps_per_interval(t, a.step_time));

  check_job_budget(sc, a.spec, runs, sweep);
  const int total = runs * (1 + static_cast<int>(sweep.size()));
  std::atomic<int> done{0};
  auto tick = [&](int) {
    const int d = done.fetch_add(1) + 1;
    if (progress) progress(d, total);
  };
  try {
    a.summary = simulate_job(a.spec, runs, seed, threads, tick);
    if (!sweep.empty()) a.sweep = sweep_intervals(a.spec, sweep, runs, seed, threads, tick);
    a.first_run.max_events = kRun0Events;
    a.first_run.max_interruptions = kRun0Interruptions;
    a.first_run.rises = EvenSample(kRun0Rises);
    simulate_run(a.spec, seed, 0, &a.first_run);
  } catch (const JobTooMuchWork& e) {
    fail_too_large(Reader(sc.source, sc.source->root, ""), a.spec.card_mtbf > 0 ? "job.cards" : "job.steps",
                   fmt::format("too large: {} (the work guard: --max-ops {} shared by the runs): make it smaller or "
                               "raise --max-ops",
                               e.what(), budget().max_ops));
  } catch (const JobCannotFinish& e) { refuse_cannot_finish(sc, a.spec, e); }
  if (!sweep.empty()) {
    std::vector<double> taus, overheads;
    for (const auto& p : a.sweep) {
      taus.push_back(to_s(p.interval));
      overheads.push_back(p.overhead.mean);
    }
    a.sweep_optimum_seconds = fit_optimum_interval(taus, overheads);
  }
  return a;
}

double run0_record_bytes() {
  // An EvenSample holds up to twice its capacity (a vector's growth) before it halves.
  return static_cast<double>(kRun0Events * (sizeof(JobEvent) + sizeof(std::pair<Time, int>)) +
                             kRun0Interruptions * sizeof(JobEvent) + 2 * kRun0Rises * sizeof(std::pair<Time, int>));
}

Time checkpoint_interval_of(const JobSpec& spec, std::int64_t every) {
  if (spec.profile.uniform()) return spec.profile.work_until(every);
  const std::int64_t steps = std::max<std::int64_t>(spec.profile.steps(), 1);
  return static_cast<Time>(static_cast<__int128>(spec.profile.total()) * every / steps);
}

std::string histogram_text(const Histogram& h, int width) {
  std::string out;
  const int peak = h.counts.empty() ? 0 : *std::max_element(h.counts.begin(), h.counts.end());
  for (std::size_t b = 0; b < h.counts.size(); ++b) {
    const Time lo = h.low + static_cast<Time>(b) * h.width;
    const int bar = peak > 0 ? (h.counts[b] * width + peak - 1) / peak : 0;
    out += fmt::format("  {:>10} .. {:<10} |{:<{}} {}\n", span(lo), span(lo + h.width),
                       std::string(static_cast<std::size_t>(bar), '#'), width, h.counts[b]);
  }
  return out;
}

std::vector<std::pair<std::string, JobAnalysis>> analyse_plan_jobs(const Scenario& sc, int runs, std::uint64_t seed,
                                                                   int threads, const std::string& only_case,
                                                                   const std::function<void(int, int)>& progress,
                                                                   std::string* source) {
  if (!sc.job || !sc.job->per_plan_case || !sc.plan || !sc.plan->spec)
    sc.fail("job", "this job does not take its cases from a plan");
  const PlanEvaluation plan = evaluate_cases(*sc.plan->spec, plan_step_comm(sc));
  std::vector<std::pair<std::string, JobAnalysis>> out;
  for (const PlanResult& r : plan.results) {
    if (!only_case.empty() && r.name != only_case) continue;
    if (!r.time) sc.fail("plan.task", "the plan has no step time to run a job with");
    if (source) *source = r.time->comm.source.empty() ? "given" : r.time->comm.source;
    Scenario one = sc;
    one.name = fmt::format("{}, {}", sc.name, r.name);
    one.job->run.cards = r.cards;
    one.job->steps = r.time->steps;
    one.job->step_time = r.time->step;
    out.emplace_back(r.name, analyse_job(one, runs, seed, threads, progress));
  }
  if (out.empty()) throw InputError("--case", 0, only_case, "no plan case with this name");
  return out;
}

std::vector<std::pair<std::string, JobAnalysis>> analyse_variant_jobs(const Scenario& sc, int runs, std::uint64_t seed,
                                                                      int threads, const std::string& only_case,
                                                                      const std::function<void(int, int)>& progress,
                                                                      std::vector<std::string>* skipped) {
  if (!sc.job || !sc.job->per_variant || !sc.job_step) sc.fail("job", "this job does not take its cases from variants");
  std::vector<std::pair<std::string, const JobStepSpec*>> rows = {{"base", &sc.job_step->spec}};
  for (const auto& v : sc.job_step->variants) rows.emplace_back(v.name, &v.spec);
  if (!only_case.empty() && std::none_of(rows.begin(), rows.end(), [&](const auto& r) { return r.first == only_case; }))
    throw InputError("--case", 0, only_case, "no variant with this name");
  std::vector<std::pair<std::string, JobAnalysis>> out;
  for (const auto& [name, spec] : rows) {
    if (!only_case.empty() && name != only_case) continue;
    // Simulated once here: its fit decides whether it runs, its time is every run's step.
    const JobStepResult step = job_step_or_fail(sc, *spec, name == "base" ? "" : name);
    // (The base was checked when read, or allow_oom asks for it anyway.)
    if (name != "base" && step.memory.total() > step.capacity) {
      if (skipped)
        skipped->push_back(
            fmt::format("{}: needs {:.1f} of {:.1f} GiB per GPU", name, gib(step.memory.total()), gib(step.capacity)));
      continue;
    }
    Scenario one = sc;
    one.name = fmt::format("{}, {}", sc.name, name);
    one.job_step->spec = *spec;
    JobScenario& job = *one.job;
    job.step_time = step.step_time;
    job.step_from_job_step = false;
    if (!job.cards_given) job.run.cards = spec->layout.ranks();
    if (job.tokens) job.steps = steps_for(*job.tokens, spec->layout.global_batch * spec->model.seq);
    if (job.size_from_state) job.run.checkpoint.size = checkpoint_state_bytes(spec->model, spec->layout);
    JobAnalysis an = analyse_job(one, runs, seed, threads, progress);
    an.step_source = step_source_of(*spec);
    out.emplace_back(name, std::move(an));
  }
  return out;
}

Table job_cases_table(const std::vector<std::string>& cases, const std::vector<const JobAnalysis*>& analyses) {
  Table t({{"case", false},
           {"cards"},
           {"step"},
           {"mean completion"},
           {"P90"},
           {"P99"},
           {"deadline"},
           {"met"},
           {"verdict", false}});
  for (std::size_t i = 0; i < analyses.size(); ++i) {
    const JobAnalysis& a = *analyses[i];
    const JobSummary& m = a.summary;
    const Time mean = static_cast<Time>(std::llround(m.completion.seconds.mean * 1e9));
    t.add_row({cases[i], std::to_string(a.spec.cards), format_duration(a.step_time), span(mean), span(m.completion.p90),
               span(m.completion.p99), a.spec.deadline > 0 ? span(a.spec.deadline) : "-",
               m.meet_probability ? fmt::format("{:.1f}%", 100.0 * *m.meet_probability) : "-",
               m.meet_probability ? verdict(*m.meet_probability) : "-"});
  }
  return t;
}

std::string job_cases_text(const std::vector<std::string>& cases, const std::vector<JobAnalysis>& analyses) {
  std::vector<const JobAnalysis*> all;
  for (const auto& a : analyses) all.push_back(&a);
  return job_cases_table(cases, all).render();
}

std::vector<std::string> job_about(const JobAnalysis& a) {
  const JobSpec& s = a.spec;
  const JobSummary& m = a.summary;
  std::vector<std::string> out;
  out.push_back(fmt::format("{}: {} of {} on {}; {}, seed {}", a.name, counted(s.profile.steps(), "step"),
                            format_duration(a.step_time), counted(s.cards, "card"), counted(m.runs, "run"), m.seed));
  if (!a.step_source.empty()) out.push_back(fmt::format("step: the job_step simulated ({})", a.step_source));
  if (s.card_mtbf > 0)
    out.push_back(fmt::format("failures: card MTBF {} -> job MTBF {} (cards / card MTBF), restore {}",
                              span(s.card_mtbf), span(s.job_mtbf()), format_duration(s.restore)));
  else
    out.push_back(fmt::format("failures: none at random; restore {}", format_duration(s.restore)));
  if (s.rollback_interval > 0)
    out.push_back(fmt::format("loss-spike rollbacks: every {} on average", span(s.rollback_interval)));
  if (!s.failures_at.empty()) {
    std::string list;
    for (Time t : s.failures_at) list += (list.empty() ? "" : ", ") + format_duration(t);
    out.push_back(fmt::format("injected failures at {}", list));
  }
  const CheckpointSpec& ck = s.checkpoint;
  if (ck.every_steps > 0) {
    const std::string commit = ck.commit > 0 ? " + commit " + format_duration(ck.commit) : "";
    out.push_back(fmt::format(
        "checkpoint: {} every {} steps ({} of steps{}), {}", ck.mode == SaveMode::Sync ? "sync" : "async",
        ck.every_steps, format_duration(checkpoint_interval_of(s, ck.every_steps)),
        a.young_interval ? fmt::format("; Young's optimum {}", format_duration(*a.young_interval)) : "",
        ck.mode == SaveMode::Sync ? fmt::format("pause {} (write {}{})", format_duration(ck.pause()),
                                                format_duration(ck.write_time()), commit)
                                  : fmt::format("pause {} (copy), background write {}{}{}", format_duration(ck.copy),
                                                format_duration(ck.write_time()), commit,
                                                ck.buffers > 0 ? fmt::format(", {} host buffers", ck.buffers) : "")));
  } else {
    out.push_back("checkpoint: none (every failure restarts from step 0)");
  }
  return out;
}

CaptionedTable job_completion_table(const JobAnalysis& a) {
  const JobSpec& s = a.spec;
  const JobSummary& m = a.summary;
  Table t({{"mean"}, {"P50"}, {"P90"}, {"P99"}, {"min"}, {"max"}});
  const Time mean = static_cast<Time>(std::llround(m.completion.seconds.mean * 1e9));
  t.add_row({span(mean), span(m.completion.p50), span(m.completion.p90), span(m.completion.p99), span(m.completion.min),
             span(m.completion.max)});
  return {
      fmt::format("completion{} over {}", s.reserved > 0 ? fmt::format(" (with {} reserved)", span(s.reserved)) : "",
                  counted(m.runs, "run")),
      std::move(t),
      m.meet_probability ? fmt::format("deadline {}: met in {:.1f}% of runs -> {}", span(s.deadline),
                                       100.0 * *m.meet_probability, verdict(*m.meet_probability))
                         : ""};
}

CaptionedTable job_overhead_table(const JobAnalysis& a) {
  const JobSpec& s = a.spec;
  const JobSummary& m = a.summary;
  Table o({{"saving"}, {"redo"}, {"restore"}, {"total"}, {"+- se"}, {"failures/run"}, {"rollbacks/run"}});
  o.add_row({percent(m.saving.mean, 3), percent(m.redo.mean, 3), percent(m.restore.mean, 3),
             percent(m.overhead.mean, 3), percent(m.overhead.se, 3), fmt::format("{:.2f}", m.failures.mean),
             fmt::format("{:.2f}", m.rollbacks.mean)});
  return {fmt::format("overhead, % of {} of steps (mean over runs +- standard error)", span(s.profile.total())),
          std::move(o),
          s.checkpoint.mode == SaveMode::Async
              ? fmt::format("most snapshots pending at once (captured, not committed): {}", m.max_pending)
              : ""};
}

std::optional<CaptionedTable> job_interval_table(const JobAnalysis& a) {
  if (a.sweep.empty()) return std::nullopt;
  Table w({{"every (steps)"}, {"interval"}, {"saving"}, {"redo"}, {"restore"}, {"total"}, {"+- se"}});
  for (const auto& p : a.sweep)
    w.add_row({std::to_string(p.every_steps), format_duration(p.interval), percent(p.saving.mean, 3),
               percent(p.redo.mean, 3), percent(p.restore.mean, 3), percent(p.overhead.mean, 3),
               percent(p.overhead.se, 3)});
  return CaptionedTable{
      "checkpoint intervals (the same runs, hence the same failures, for each)", std::move(w),
      a.sweep_optimum_seconds
          ? fmt::format("optimum of a fit a/tau + b*tau + d to these points: {:.0f} s", *a.sweep_optimum_seconds)
          : ""};
}

namespace {

// Run 0's interruptions (what was restored and how much was redone) and, when saving runs in the
// background, its queue of pending snapshots.
std::string run0_text(const JobAnalysis& a) {
  const JobSpec& s = a.spec;
  const CheckpointSpec& ck = s.checkpoint;
  std::string out;
  const JobRecord& rec = a.first_run;
  if (rec.interruption_count > 0) {
    out += fmt::format("\nrun 0: {} interruptions{}\n", rec.interruption_count,
                       rec.interruption_count > 10 ? " (first 10)" : "");
    Table f({{"time"}, {"kind", false}, {"steps done"}, {"restored step"}, {"restored work"}, {"redo"}});
    for (std::size_t i = 0; i < rec.interruptions.size() && i < 10; ++i) {
      const JobEvent& e = rec.interruptions[i];
      f.add_row({span(e.start), job_event_name(e.kind), std::to_string(e.from_step), std::to_string(e.to_step),
                 span(s.profile.work_until(e.to_step)), span(e.lost)});
    }
    out += f.render();
  }
  const EvenSample& peaks = rec.rises;
  if (ck.mode == SaveMode::Async && peaks.total() > 0) {
    // The queue after each capture, sampled to at most 12 rows and the last: every stride-th
    // capture. The record keeps every stride()-th of a long run, so the stride is a multiple of it
    // (ceil(n / 12) while every capture is kept).
    out += "\nrun 0: snapshots pending after each capture\n";
    Table q({{"time"}, {"pending"}});
    const std::int64_t n = peaks.total(), kept = peaks.stride();
    const std::int64_t stride = ((n + 11) / 12 + kept - 1) / kept * kept;
    for (std::int64_t i = 0; i < n; i += stride) {
      const auto& [t, level] = peaks.kept()[static_cast<std::size_t>(i / kept)];
      q.add_row({span(t), std::to_string(level)});
    }
    if ((n - 1) % stride != 0) q.add_row({span(peaks.last().first), std::to_string(peaks.last().second)});
    out += q.render();
  }
  return out;
}

std::string input_text(const JobAnalysis& a) {
  std::string out;
  const InputRun& in = *a.input;
  out += fmt::format("\ninput pipeline (one failure-free pass): input wait {} in all, {} of {} steps stalled, max {}\n",
                     format_duration(in.total_wait), in.stalled_steps, in.steps.size(), format_duration(in.max_wait));
  if (a.fluid) {
    out += fmt::format("  production {:.2f} sequences/s ({:.2f} during the pause), training takes {:.2f}/s\n",
                       a.fluid->production, a.fluid->production_during_pause, a.fluid->consumption);
    out += fmt::format("  minimum prefetch through the first pause: {} simulated; fluid estimate {:.1f}\n",
                       a.min_prefetch ? std::to_string(*a.min_prefetch) : std::string("none suffices"),
                       a.fluid->min_prefetch);
    if (!in.refill.empty())
      out += fmt::format("  queue full again {} after the pause (fluid estimate {})\n",
                         in.refill[0] ? format_duration(*in.refill[0]) : std::string("never within the run"),
                         format_duration(static_cast<Time>(std::llround(a.fluid->refill_seconds * 1e9))));
  }
  return out;
}

std::string stragglers_text(const JobAnalysis& a) {
  const JobSpec& s = a.spec;
  std::string out;
  const StragglerResult& r = *a.stragglers;
  out += fmt::format(
      "\nstragglers: E[step] {:.3f} s +- {:.3f} (slowest card's compute = mu + {:.3f} sigma; "
      "integral for {} independent cards: mu + {:.3f} sigma)\n",
      r.step_seconds.mean, r.step_seconds.se, r.max_excess_sigmas.mean, s.cards,
      expected_max_standard_normal(static_cast<int>(s.cards)));
  if (r.slow_machine_count > 0) out += "  (the integral assumes identical cards; the slow machines add to it)\n";
  if (r.slow_machine_count > 0) out += fmt::format("  persistently slow machines: {}\n", r.slow_machine_count);
  // The cards that wait least at the gradient collective are the slow ones.
  std::vector<std::size_t> order(r.card_wait_seconds.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return r.card_wait_seconds[x] < r.card_wait_seconds[y]; });
  out += "  mean wait at the gradient collective (step compute end - own compute end), least first:\n";
  Table c({{"card"}, {"machine"}, {"wait"}, {"slow", false}});
  const std::size_t shown = std::min<std::size_t>(order.size(), 10);
  for (std::size_t i = 0; i < shown; ++i)
    c.add_row({std::to_string(order[i]), std::to_string(static_cast<std::int64_t>(order[i]) / a.cards_per_machine),
               fmt::format("{:.3f} s", r.card_wait_seconds[order[i]]), r.slow_card[order[i]] ? "yes" : ""});
  if (!order.empty())
    c.add_row({"median", "", fmt::format("{:.3f} s", r.card_wait_seconds[order[order.size() / 2]]), ""});
  out += c.render();
  return out;
}

}  // namespace

std::string job_text(const JobAnalysis& a) {
  const JobSpec& s = a.spec;
  const JobSummary& m = a.summary;
  std::string out;
  const auto about = job_about(a);
  for (std::size_t i = 0; i < about.size(); ++i) out += fmt::format("{}{}\n", i ? "  " : "", about[i]);
  out += fmt::format("\n{}", job_completion_table(a).render());
  out += fmt::format("\n{}", job_overhead_table(a).render());
  if (const auto intervals = job_interval_table(a)) out += fmt::format("\n{}", intervals->render());

  out += "\ncompletion times\n" + histogram_text(make_histogram(completion_times(s, m), 12));

  out += run0_text(a);
  if (a.input) out += input_text(a);
  if (a.stragglers) out += stragglers_text(a);
  return out;
}

namespace {

Json est(const MeanEstimate& e) { return Json{{"mean", round8(e.mean)}, {"se", round8(e.se)}}; }

Json input_json(const JobAnalysis& a) {
  Json in = {{"total_wait_s", round6(to_s(a.input->total_wait))},
             {"stalled_steps", a.input->stalled_steps},
             {"max_wait_s", round6(to_s(a.input->max_wait))}};
  if (a.min_prefetch) in["min_prefetch_simulated"] = *a.min_prefetch;
  if (a.fluid) {
    in["fluid"] = {{"consumption_per_s", round6(a.fluid->consumption)},
                   {"production_per_s", round6(a.fluid->production)},
                   {"production_during_pause_per_s", round6(a.fluid->production_during_pause)},
                   {"min_prefetch", round6(a.fluid->min_prefetch)},
                   {"refill_s", round6(a.fluid->refill_seconds)}};
  }
  Json refill = Json::array();
  for (const auto& r : a.input->refill) refill.push_back(r ? Json(round6(to_s(*r))) : Json(nullptr));
  in["refill_s"] = refill;
  return in;
}

Json stragglers_json(const JobAnalysis& a) {
  const JobSpec& s = a.spec;
  const StragglerResult& r = *a.stragglers;
  Json waits = Json::array();
  for (double w : r.card_wait_seconds) waits.push_back(round6(w));
  Json slow = Json::array();
  for (std::size_t c = 0; c < r.slow_card.size(); ++c)
    if (r.slow_card[c]) slow.push_back(c);
  return Json{{"step_s", est(r.step_seconds)},
              {"max_excess_sigmas", est(r.max_excess_sigmas)},
              {"integral_excess_sigmas", round6(expected_max_standard_normal(static_cast<int>(s.cards)))},
              {"slow_machines", r.slow_machine_count},
              {"slow_cards", slow},
              {"card_wait_s", waits}};
}

}  // namespace

Json job_json(const JobAnalysis& a) {
  const JobSpec& s = a.spec;
  const JobSummary& m = a.summary;
  Json j;
  j["scenario"] = a.name;
  j["runs"] = m.runs;
  j["seed"] = m.seed;
  j["steps"] = s.profile.steps();
  j["step_time_s"] = round6(to_s(a.step_time));
  if (!a.step_source.empty()) j["step_source"] = "job_step: " + a.step_source;  // absent: given or from stragglers
  j["work_s"] = round3(to_s(s.profile.total()));
  j["cards"] = s.cards;
  if (s.card_mtbf > 0) j["job_mtbf_s"] = round3(to_s(s.job_mtbf()));
  j["restore_s"] = round3(to_s(s.restore));
  if (s.rollback_interval > 0) j["rollback_interval_s"] = round3(to_s(s.rollback_interval));
  const CheckpointSpec& ck = s.checkpoint;
  if (ck.every_steps > 0) {
    j["checkpoint"] = {{"mode", ck.mode == SaveMode::Sync ? "sync" : "async"},
                       {"every_steps", ck.every_steps},
                       {"interval_s", round3(to_s(checkpoint_interval_of(s, ck.every_steps)))},
                       {"pause_s", round6(to_s(ck.pause()))},
                       {"write_s", round6(to_s(ck.write_time()))}};
    if (a.young_interval) j["checkpoint"]["young_interval_s"] = round3(to_s(*a.young_interval));
  }
  j["completion_s"] = {{"mean", round3(m.completion.seconds.mean)}, {"se", round3(m.completion.seconds.se)},
                       {"p50", round3(to_s(m.completion.p50))},     {"p90", round3(to_s(m.completion.p90))},
                       {"p99", round3(to_s(m.completion.p99))},     {"min", round3(to_s(m.completion.min))},
                       {"max", round3(to_s(m.completion.max))}};
  j["reserved_s"] = round3(to_s(s.reserved));
  if (m.meet_probability) {
    j["deadline_s"] = round3(to_s(s.deadline));
    j["meet_probability"] = round6(*m.meet_probability);
    j["verdict"] = verdict(*m.meet_probability);
  }
  j["overhead"] = {
      {"total", est(m.overhead)}, {"saving", est(m.saving)}, {"redo", est(m.redo)}, {"restore", est(m.restore)}};
  j["failures_per_run"] = round6(m.failures.mean);
  j["rollbacks_per_run"] = round6(m.rollbacks.mean);
  if (ck.mode == SaveMode::Async) j["max_pending_snapshots"] = m.max_pending;
  const Histogram h = make_histogram(completion_times(s, m), 12);
  j["histogram"] = {{"low_s", round3(to_s(h.low))}, {"width_s", round3(to_s(h.width))}, {"counts", h.counts}};
  if (!a.sweep.empty()) {
    Json list = Json::array();
    for (const auto& p : a.sweep)
      list.push_back({{"every_steps", p.every_steps},
                      {"interval_s", round3(to_s(p.interval))},
                      {"overhead", est(p.overhead)},
                      {"saving", est(p.saving)},
                      {"redo", est(p.redo)},
                      {"restore", est(p.restore)}});
    j["intervals"] = list;
    if (a.sweep_optimum_seconds) j["fitted_optimum_interval_s"] = round3(*a.sweep_optimum_seconds);
  }
  Json interruptions = Json::array();
  for (const auto& e : a.first_run.interruptions)
    interruptions.push_back({{"time_s", round6(to_s(e.start))},
                             {"kind", job_event_name(e.kind)},
                             {"steps_done", e.from_step},
                             {"restored_step", e.to_step},
                             {"redo_s", round6(to_s(e.lost))}});
  j["run0_interruptions"] = interruptions;
  // The first kRun0Interruptions of a long run; the rest counted (the key only when some are).
  const auto unlisted = a.first_run.interruption_count - static_cast<std::int64_t>(a.first_run.interruptions.size());
  if (unlisted > 0) j["run0_interruptions_not_listed"] = unlisted;
  if (a.input) j["input"] = input_json(a);
  if (a.stragglers) j["stragglers"] = stragglers_json(a);
  return j;
}

std::string run0_trace_cut(const JobAnalysis& a) {
  const JobRecord& r = a.first_run;
  if (!r.events_cut() && r.pending_count <= static_cast<std::int64_t>(r.pending.size())) return "";
  return fmt::format("run 0's first {} of {} events and {} of {} pending-snapshot levels (a run's record is bounded)",
                     r.events.size(), r.event_count, r.pending.size(), r.pending_count);
}

void job_trace(TraceWriter& t, const JobAnalysis& a) {
  const int run_pid = 1, input_pid = 2;
  enum Track { Training = 1, Interruptions = 2, Storage = 3 };
  t.process(run_pid, "run 0", 0);
  t.thread(run_pid, Training, "training", 0);
  t.thread(run_pid, Interruptions, "failures and restores", 1);
  t.thread(run_pid, Storage, "storage (background writes)", 2);
  for (const JobEvent& e : a.first_run.events) {
    TraceArgs args;
    args.integer("from_step", e.from_step).integer("to_step", e.to_step).boolean("completed", e.completed);
    switch (e.kind) {
      case JobEventKind::Steps:
        t.slice(run_pid, Training, fmt::format("steps {}-{}", e.from_step, e.to_step), "steps", e.start,
                e.end - e.start, args);
        break;
      case JobEventKind::Save:
      case JobEventKind::Copy:
      case JobEventKind::BufferWait:
        t.slice(run_pid, Training, fmt::format("{} @{}", job_event_name(e.kind), e.to_step), "checkpoint", e.start,
                e.end - e.start, args);
        break;
      case JobEventKind::Write:
      case JobEventKind::Commit:
        t.slice(run_pid, Storage, fmt::format("{} @{}", job_event_name(e.kind), e.to_step), "checkpoint", e.start,
                e.end - e.start, args);
        break;
      case JobEventKind::Failure:
      case JobEventKind::Rollback:
        t.slice(run_pid, Interruptions, job_event_name(e.kind), "interruption", e.start, 0,
                args.real("redo_s", to_s(e.lost)));
        break;
      case JobEventKind::Restore:
        t.slice(run_pid, Interruptions, fmt::format("restore @{}", e.to_step), "restore", e.start, e.end - e.start,
                args);
        break;
    }
  }
  for (const auto& [time, level] : a.first_run.pending)
    t.counter(run_pid, "pending snapshots", time, "snapshots", level);
  if (const std::string cut = run0_trace_cut(a); !cut.empty()) {
    // Marked where the kept events end, so the gap after it is not read as idle time.
    Time end = 0;
    for (const JobEvent& e : a.first_run.events) end = std::max(end, e.end);
    t.slice(run_pid, Training, cut, "note", end, 0, TraceArgs{});
  }
  if (a.input) {
    t.process(input_pid, "input pipeline (failure-free pass)", 1);
    for (const auto& st : a.input->steps) {
      t.counter(input_pid, "ready sequences at step start", st.start, "ready", static_cast<double>(st.ready));
      t.counter(input_pid, "input wait", st.start, "seconds", to_s(st.wait));
    }
  }
}

}  // namespace stepsim::cli
