// `stepsim job`: Monte Carlo of a whole training run (failures, checkpoints, input, stragglers).
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>

#include <fmt/format.h>
#include <unistd.h>

#include "cli/commands/commands.hpp"
#include "cli/reports/job_pictures.hpp"
#include "cli/reports/job_report.hpp"
#include "cli/reports/output.hpp"
#include "cli/input/scenario.hpp"

namespace stepsim::cli {

void add_job_command(CLI::App& app) {
  struct Args {
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
  auto a = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("job", "simulate whole runs: failures, checkpoints, input pipeline, stragglers");
  cmd->add_option("file", a->file, "scenario YAML file with a 'job' section")->required();
  cmd->add_option("--set", a->sets, "override a key, e.g. --set job.checkpoint.every=900s (repeatable)");
  cmd->add_option("--runs", a->runs, "Monte Carlo runs (default: job.runs, else 1000)")->check(CLI::Range(1, 1'000'000));
  cmd->add_option("--seed", a->seed, "random seed (default: job.seed, else 1)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--threads", a->threads, "worker threads (default: all cores)")->check(CLI::Range(0, 1024));
  cmd->add_flag("--json", a->json, "print a JSON summary instead of the tables");
  cmd->add_option("--trace", a->trace, "write run 0 as a Chrome trace (Perfetto / chrome://tracing) to this file");
  cmd->add_option("--html", a->html,
                  "also write a self-contained HTML report to this file: histogram of completion times against the "
                  "deadline, overhead split, tables");
  cmd->add_option("--case", a->only_case, "with cases from the plan: simulate only this case");
  cmd->callback([a] {
    const Scenario sc = load_scenario(a->file, a->sets);
    if (!sc.job) sc.fail("job", "this command needs a 'job' section");
    const int runs = a->runs > 0 ? a->runs : sc.job->runs;
    const std::uint64_t seed = a->seed >= 0 ? static_cast<std::uint64_t>(a->seed) : sc.job->seed;
    // Progress on stderr: a rewritten line on a terminal, nothing but the final line otherwise.
    const bool tty = isatty(fileno(stderr)) != 0;
    std::mutex mutex;
    int shown = -1;
    const auto started = std::chrono::steady_clock::now();
    auto progress = [&](int done, int total) {
      if (!tty) return;
      const int percent = static_cast<int>(100LL * done / total);
      std::lock_guard<std::mutex> lock(mutex);
      if (percent <= shown) return;
      shown = percent;
      fmt::print(stderr, "\rjob: {}/{} runs ({}%)", done, total, percent);
    };
    if (!sc.job->per_plan_case) {
      if (!a->only_case.empty()) throw InputError("--case", 0, "", "the job does not take its cases from a plan");
      const JobAnalysis result = analyse_job(sc, runs, seed, a->threads, progress);
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      fmt::print(stderr, "{}job: {} runs of {} in {:.2f} s\n", tty ? "\r" : "", runs, sc.name, secs);
      if (!a->trace.empty()) write_file(a->trace, job_trace(result));
      if (!a->html.empty()) write_file(a->html, job_html_report(sc.name, sc.description, {&result}));
      if (a->json) fmt::print("{}\n", job_json(result).dump(2));
      else fmt::print("{}", job_text(result));
      return;
    }
    std::vector<std::string> names;
    std::vector<JobAnalysis> analyses;
    std::string source;
    for (auto& [name, an] : analyse_plan_jobs(sc, runs, seed, a->threads, a->only_case, progress, &source)) {
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      fmt::print(stderr, "{}job: {} runs of {} in {:.2f} s\n", tty ? "\r" : "", runs, an.name, secs);
      shown = -1;
      names.push_back(name);
      analyses.push_back(std::move(an));
    }
    if (!a->trace.empty()) {
      if (analyses.size() > 1) throw InputError("--trace", 0, "", "pick the case to trace with --case NAME");
      write_file(a->trace, job_trace(analyses.front()));
    }
    if (!a->html.empty()) {
      std::vector<const JobAnalysis*> all;
      for (const auto& an : analyses) all.push_back(&an);
      write_file(a->html, job_html_report(sc.name, sc.description, all, names));
    }
    if (a->json) {
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
    fmt::print("{}: one job per plan case, step time from the planner ({})\n{}", sc.name, source,
               job_cases_text(names, analyses));
  });
}

}  // namespace stepsim::cli
