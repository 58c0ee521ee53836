// `stepsim job`: Monte Carlo of a whole training run (failures, checkpoints, input, stragglers).
#include <charconv>
#include <memory>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands/commands.hpp"
#include "cli/commands/diagnostics.hpp"
#include "cli/commands/scenario_kinds.hpp"
#include "cli/input/input_files.hpp"
#include "cli/input/scenario.hpp"
#include "cli/reports/job_pictures.hpp"
#include "cli/reports/job_report.hpp"
#include "cli/reports/output.hpp"

namespace stepsim::cli {

namespace {

struct JobArgs {
  std::string file;
  std::vector<std::string> sets;
  int runs = 0;
  std::int64_t seed = -1;
  int threads = 0;
  bool json = false;
  std::string trace;
  std::string html;
  std::string only_case;
};

void write_job_trace(const std::string& path, const JobAnalysis& an) {
  write_trace_file(path, job_trace, an);
  if (const std::string cut = run0_trace_cut(an); !cut.empty()) note("trace: {}", cut);
}

// A job with its own step time: one analysis.
void run_one_job(const Scenario& sc, const JobArgs& a, int runs, std::uint64_t seed) {
  if (!a.only_case.empty())
    throw InputError("--case", 0, "", "the job does not take its cases from a plan or a job step's variants");
  Progress progress("job", "runs", static_cast<std::size_t>(runs), a.json);
  const JobAnalysis result = analyse_job(sc, runs, seed, a.threads, progress.int_callback());
  const double secs = progress.seconds();
  progress.restart("job");
  note("job: {} of {} in {:.2f} s", counted(runs, "run"), sc.name, secs);
  if (!a.trace.empty()) write_job_trace(a.trace, result);
  if (!a.html.empty()) write_file(a.html, job_html_report(sc.name, sc.description, {&result}));
  if (a.json)
    fmt::print("{}\n", job_json(result).dump(2));
  else
    fmt::print("{}", job_text(result));
}

// A job per case, or the one --case picks: the plan's cases (the step time from the planner) or
// the job step's base and variants (each its own step, cards, steps and checkpoint size).
void run_case_jobs(const Scenario& sc, const JobArgs& a, int runs, std::uint64_t seed) {
  const bool variants = sc.job->per_variant;
  // Checked before anything runs: a wrong case name, or a trace without a case to trace.
  std::vector<std::string> case_names;
  if (variants) {
    case_names.push_back("base");
    for (const auto& v : sc.job_step->variants) case_names.push_back(v.name);
  } else if (sc.plan && sc.plan->spec) {
    for (const auto& c : sc.plan->spec->cases) case_names.push_back(c.name);
  }
  if (!a.only_case.empty()) check_case_name(a.only_case, case_names);
  if (!a.trace.empty() && a.only_case.empty() && case_names.size() > 1)
    throw InputError("--trace", 0, "",
                     fmt::format("a trace shows one case: pick it with --case NAME ({})", fmt::join(case_names, ", ")));
  const std::size_t cases = a.only_case.empty() ? case_names.size() : 1;
  Progress progress("job", "runs", static_cast<std::size_t>(runs), a.json);
  std::size_t started = 0;
  const auto per_case = [&](int done, int total) {  // a case's first run: the next case
    if (done == 1 && cases > 1) progress.restart(fmt::format("job, case {} of {}", ++started, cases));
    if (total > 0) progress.report(static_cast<std::size_t>(done), static_cast<std::size_t>(total));
  };
  std::vector<std::string> names;
  std::vector<JobAnalysis> analyses;
  std::string source;
  std::vector<std::string> skipped;
  auto results = variants ? analyse_variant_jobs(sc, runs, seed, a.threads, a.only_case, per_case, &skipped)
                          : analyse_plan_jobs(sc, runs, seed, a.threads, a.only_case, per_case, &source);
  // Each skipped case's line names it ("ddp: needs 30.4 of 22.0 GiB per GPU").
  if (results.empty())
    throw InputError("--case", 0, "", fmt::format("{}: does not fit, nothing to run", skipped.front()));
  for (const auto& why : skipped) note("skipped {} (does not fit)", why);
  for (auto& [name, an] : results) {
    names.push_back(name);
    analyses.push_back(std::move(an));
  }
  const double secs = progress.seconds();
  progress.restart("job");
  note("job: {} of each of {} of {} in {:.2f} s", counted(runs, "run"),
       counted(static_cast<long long>(analyses.size()), "case"), sc.name, secs);
  if (!a.trace.empty()) write_job_trace(a.trace, analyses.front());
  if (!a.html.empty()) {
    std::vector<const JobAnalysis*> all;
    for (const auto& an : analyses) all.push_back(&an);
    write_file(a.html, job_html_report(sc.name, sc.description, all, names));
  }
  if (a.json) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < analyses.size(); ++i) {
      nlohmann::ordered_json j = job_json(analyses[i]);
      j["case"] = names[i];
      list.push_back(std::move(j));
    }
    fmt::print("{}\n", list.dump(2));
    return;
  }
  for (const auto& an : analyses) fmt::print("{}\n", job_text(an));
  if (variants)
    fmt::print("{}: one job per job_step variant, each on its own simulated step\n{}", sc.name,
               job_cases_text(names, analyses));
  else
    fmt::print("{}: one job per plan case, step time from the planner ({})\n{}", sc.name, source,
               job_cases_text(names, analyses));
}

}  // namespace

void add_job_command(CLI::App& app) {
  auto a = std::make_shared<JobArgs>();
  auto* cmd = app.add_subcommand("job", "simulate whole runs: failures, checkpoints, input pipeline, stragglers");
  cmd->add_option("file", a->file, "scenario YAML file with a 'job' section")->required();
  cmd->add_option("--set", a->sets, "override a key, e.g. --set job.checkpoint.every=900s (repeatable)");
  add_count_option(cmd, "--runs", a->runs, 1, 1'000'000, "Monte Carlo runs (default: job.runs, else 1000)");
  // Read as a count: CLI11 would saturate 2^63 and more to INT64_MAX (every such seed the same runs).
  add_count_option(cmd, "--seed", a->seed, 0, std::numeric_limits<std::int64_t>::max(),
                   "random seed (default: job.seed, else 1)");
  add_jobs_option(cmd, a->threads, "threads (default: every core); results do not depend on it", "-j,--jobs,--threads");
  cmd->add_flag("--json", a->json, "print a JSON summary instead of the tables");
  cmd->add_option("--trace", a->trace,
                  "write run 0 as a trace to this file: Perfetto protobuf if it ends in .pftrace, else Chrome JSON")
      ->check(file_beside_report());
  cmd->add_option("--html", a->html,
                  "also write a self-contained HTML report to this file: histogram of completion times against the "
                  "deadline, overhead split, tables")
      ->check(file_beside_report());
  cmd->add_option("--case", a->only_case,
                  "with cases from the plan or a job step's variants (base, then each by name): simulate only this "
                  "case");
  cmd->callback([a] {
    const Scenario sc = load_scenario(a->file, a->sets);
    check_output_path("--trace", a->trace);
    check_output_path("--html", a->html);
    require_section(sc, "job", "job");
    const int runs = a->runs > 0 ? a->runs : sc.job->runs;
    const std::uint64_t seed = a->seed >= 0 ? static_cast<std::uint64_t>(a->seed) : sc.job->seed;
    sc.blaming("job", [&] {
      if (sc.job->per_plan_case || sc.job->per_variant)
        run_case_jobs(sc, *a, runs, seed);
      else
        run_one_job(sc, *a, runs, seed);
    });
  });
}

}  // namespace stepsim::cli
