#pragma once
// `stepsim job`: resolving a scenario's job section into a run model (step time from the
// stragglers if not given, input waits per step from the input pipeline, checkpoint intervals in
// steps), running it, and showing the results as a table, JSON, a Chrome trace and a histogram.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/input/scenario.hpp"
#include "cli/reports/table.hpp"
#include "cli/reports/trace_writer.hpp"
#include "models/input_pipeline.hpp"
#include "models/job.hpp"
#include "models/monte_carlo.hpp"
#include "models/stragglers_sim.hpp"

namespace stepsim::cli {

// What a report keeps of run 0 (JobAnalysis::first_run), however long the run: the first events
// and pending-curve points (the trace), the first interruptions (the JSON's list; the text shows
// 10) and the captures the queue table samples (evenly over the whole run). A run of hundreds of
// millions of steps saving every few kept every event: gigabytes.
inline constexpr std::size_t kRun0Events = 100'000;
inline constexpr std::size_t kRun0Interruptions = 1'000;
inline constexpr std::size_t kRun0Rises = 1'024;
// The bytes of such a record at most.
double run0_record_bytes();

struct JobAnalysis {
  std::string name;
  JobSpec spec;    // resolved: profile and checkpoint interval in steps
  Time step_time;  // before input waits
  // Where the step time came from, when simulated from the scenario's job_step: its model, GPUs
  // and layout, as the step's own report says them (layout_line).
  std::string step_source;
  std::optional<Time> young_interval;  // `every: young`: Young's optimum the interval was set to
  std::optional<StragglerResult> stragglers;
  std::int64_t cards_per_machine = 8;
  std::optional<InputRun> input;
  std::optional<std::int64_t> min_prefetch;  // without a stall, with the scenario's pauses
  std::optional<FluidPauseEstimate> fluid;   // the book's estimate for the first pause
  JobSummary summary;
  std::vector<IntervalResult> sweep;            // checkpoint.compare (and the chosen interval)
  std::optional<double> sweep_optimum_seconds;  // fitted from the sweep
  JobRecord first_run;                          // run 0's timeline
};

// Runs everything the job section asks for. `progress(done, total)` is called from worker threads.
JobAnalysis analyse_job(const Scenario& sc, int runs, std::uint64_t seed, int threads,
                        const std::function<void(int, int)>& progress = {});

// A job whose cards and step time come from the scenario's plan (JobScenario::per_plan_case):
// one analysis per plan case (or only `only_case`), named after it, with the case's cards, steps
// and step time as the planner evaluates them (simulated where the scenario has a data_parallel
// section; `source` says which). Throws InputError for an unknown case.
std::vector<std::pair<std::string, JobAnalysis>> analyse_plan_jobs(const Scenario& sc, int runs, std::uint64_t seed,
                                                                   int threads, const std::string& only_case,
                                                                   const std::function<void(int, int)>& progress = {},
                                                                   std::string* source = nullptr);

// A job whose step has variants (JobScenario::per_variant): one analysis per row of `stepsim
// compare`, "base" first and then each variant by its name (or only `only_case`), each with its
// own simulated step, cards (its GPUs; the job's `cards`, where given, in every case), steps (the
// run's tokens at its global batch) and
// checkpoint size (its recoverable state, unless the job gives a size). A variant whose step does
// not fit its GPUs' memory is not run: `skipped` gets "NAME: needs X of Y GiB". Throws InputError
// for an unknown case.
std::vector<std::pair<std::string, JobAnalysis>> analyse_variant_jobs(const Scenario& sc, int runs, std::uint64_t seed,
                                                                      int threads, const std::string& only_case,
                                                                      const std::function<void(int, int)>& progress,
                                                                      std::vector<std::string>* skipped);

// Pieces of job_text, shown by the HTML report (cli/job_pictures.hpp) too: what was simulated
// (one line each), the completion-time distribution with the deadline verdict, the mean
// overhead split, and the checkpoint intervals compared (if the scenario asks).
std::vector<std::string> job_about(const JobAnalysis& a);
CaptionedTable job_completion_table(const JobAnalysis& a);
CaptionedTable job_overhead_table(const JobAnalysis& a);
std::optional<CaptionedTable> job_interval_table(const JobAnalysis& a);

std::string job_text(const JobAnalysis& a);
// One row per plan case (`stepsim job` on a scenario whose job takes its cases from the plan):
// cards, step time, completion distribution, share meeting the deadline, verdict.
Table job_cases_table(const std::vector<std::string>& cases, const std::vector<const JobAnalysis*>& analyses);
std::string job_cases_text(const std::vector<std::string>& cases, const std::vector<JobAnalysis>& analyses);
nlohmann::ordered_json job_json(const JobAnalysis& a);
// Run 0 as a trace: collapsed step segments, saves, copies, writes and commits, failures,
// restores, the pending-snapshot queue and (failure-free) input queue levels.
void job_trace(TraceWriter& out, const JobAnalysis& a);
// "" when the trace holds all of run 0, else what it holds (run 0's record keeps kRun0Events).
std::string run0_trace_cut(const JobAnalysis& a);
// The work between checkpoints `every` steps apart: W(every) for a uniform profile, else every x
// the mean step.
Time checkpoint_interval_of(const JobSpec& spec, std::int64_t every);
// A text histogram of completion times (the HTML report draws make_histogram as a chart).
std::string histogram_text(const Histogram& h, int width = 40);

}  // namespace stepsim::cli
