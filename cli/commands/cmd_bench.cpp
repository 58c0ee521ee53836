// `stepsim bench SUITE.yaml` and `stepsim bench merge`: schedule-variant regression suites.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <sstream>

#include <optional>

#include <fmt/format.h>

#include "cli/bench/bench_runner.hpp"
#include "cli/commands/commands.hpp"
#include "cli/commands/diagnostics.hpp"
#include "cli/commands/reuse_freed_memory.hpp"
#include "cli/input/budget.hpp"
#include "cli/input/input_files.hpp"
#include "cli/reports/output.hpp"
#include "sim/parallel_for.hpp"

namespace stepsim::cli {

namespace {

struct BenchArgs {
  std::string suite;
  std::string output;
  std::string csv;
  std::string baseline;
  bool write_baseline = false;
  std::string shard;
  unsigned jobs = 0;
  std::vector<std::string> sets;
  bool quiet = false;
};

struct MergeArgs {
  std::vector<std::string> files;
  std::string output;
  std::string csv;
  std::string baseline;
  bool allow_partial = false;
};

std::string csv_path_for(const std::string& json_path) {
  std::filesystem::path p(json_path);
  p.replace_extension(".csv");
  return p.string();
}

// Progress of a suite: the shared progress line (a terminal only) and a warning per failed variant.
class SuiteProgress {
 public:
  SuiteProgress(std::size_t total, bool quiet) : quiet_(quiet), line_("bench", "variants", quiet ? 0 : total) {}
  void update(std::size_t done, const VariantResult& r) {
    if (r.status == VariantStatus::Failed && !quiet_)
      warn("bench: variant {} ({}) failed: {}", r.index, r.key(), r.reason);
    line_.update(done);
  }
  void finish(std::size_t total, unsigned jobs) {
    const double seconds = line_.seconds();
    line_.restart("bench");
    if (!quiet_) note("bench: {} variants in {:.2f} s on {} thread{}", total, seconds, jobs, jobs == 1 ? "" : "s");
  }

 private:
  bool quiet_;
  Progress line_;
};

// Writes the result file (and, if `json_copy` is not "", the same text there: a baseline kept
// apart from -o) and the CSV from each variant's rows, and returns the winners' table ("" without
// `with_wins` or when no setting compares schedules); the three are made side by side on `jobs`
// threads. Each file is written whole or not at all.
std::string write_results(const BenchResults& results, std::span<const ResultRows> rows, const std::string& json_path,
                          const std::string& json_copy, const std::string& csv_path, unsigned jobs, bool with_wins) {
  const std::vector<Win> wins = schedule_wins(results);
  std::string table;
  parallel_for(3, jobs, [&](std::size_t task) {
    if (task == 0) {
      const std::string text = results_json_text(results, rows, wins);
      write_file(json_path, text);
      if (!json_copy.empty()) write_file(json_copy, text);
    }
    if (task == 1) write_file(csv_path, results_csv(results, rows));
    if (task == 2 && with_wins) table = wins_text(wins);
  });
  return table;
}

std::string counts_line(const BenchResults& r) {
  std::size_t ok = 0, skipped = 0, failed = 0;
  for (const auto& v : r.results) {
    if (v.status == VariantStatus::Ok)
      ++ok;
    else if (v.status == VariantStatus::Skipped)
      ++skipped;
    else
      ++failed;
  }
  return fmt::format("{}: {} variants ({} ran, {} skipped, {} failed)", r.suite.name, r.results.size(), ok, skipped,
                     failed);
}

// --baseline's results, read and checked against the suite before anything runs or is written: a
// baseline that cannot serve refuses the command, with no result files left behind.
std::optional<BenchResults> read_baseline(const std::string& baseline_file, const std::string& suite_name) {
  if (baseline_file.empty()) return std::nullopt;
  BenchResults baseline = results_from_json(read_input_file(baseline_file), baseline_file);
  if (baseline.suite.name != suite_name)
    throw InputError(
        baseline_file, 0, "suite.name",
        fmt::format("the baseline is from suite '{}', these results are from '{}'", baseline.suite.name, suite_name));
  return baseline;
}

// Prints the comparison; exit 4 if anything regressed.
// A baseline none of whose variants these are compares nothing, and would pass any regression
// gate: refused before the run (an emptied or another suite's results).
void check_shares_variants(const BenchResults& baseline, const std::string& baseline_file,
                           const std::vector<PreparedVariant>& prepared) {
  if (prepared.empty()) return;
  std::set<std::string> names;
  for (const auto& r : baseline.results) names.insert(r.key());
  for (const auto& p : prepared)
    if (names.count(settings_key(p.variant.settings))) return;
  throw InputError(baseline_file, 0, "results",
                   fmt::format("the baseline holds none of the {} variants run here ({} results): nothing would be "
                               "compared; give this suite's baseline, or write one with --write-baseline",
                               prepared.size(), baseline.results.size()));
}

void check_baseline(const BenchResults& current, const BenchResults& baseline, const std::string& baseline_file,
                    const Tolerances& tol) {
  const Comparison c = compare_results(baseline, current, tol);
  fmt::print("\n{}", comparison_text(c, baseline_file));
  if (!c.regressions.empty()) {
    std::fflush(stdout);
    throw CLI::RuntimeError(4);
  }
}

void fail_if_any_failed(const BenchResults& r) {
  for (const auto& v : r.results)
    if (v.status == VariantStatus::Failed) {
      fmt::print(stderr, "error: some variants cannot finish (status 'failed' in the results)\n");
      throw CLI::RuntimeError(3);
    }
}

void run_bench(const BenchArgs& a) {
  if (a.suite.empty()) throw InputError("bench", 0, "", "missing the suite file (stepsim bench SUITE.yaml)");
  const BenchSuite suite = load_suite(a.suite);
  Shard shard;
  if (!a.shard.empty()) {
    std::string err;
    auto s = parse_shard(a.shard, &err);
    if (!s) throw InputError("--shard", 0, "", err);
    shard = *s;
  }
  const bool sharded = shard.count > 1;
  if (a.write_baseline && sharded)
    throw InputError("--write-baseline", 0, "",
                     "a baseline needs every variant: run without --shard (or merge shards)");
  if (a.write_baseline && !suite.baseline_path)
    throw InputError(suite.file, 0, "baseline", "--write-baseline needs the suite to name its baseline file");

  // Every variant's scenario is read before anything runs, so a bad axis value fails fast (on
  // all workers: the base scenario is parsed once, each variant copies it).
  const unsigned jobs = a.jobs > 0 ? a.jobs : all_cores();
  // The budget before a variant is listed: each holds its scenario and result (about 4 KB) and
  // simulates at least a few dozen ops.
  const double variants = static_cast<double>(
      shard.index < suite.variant_count() ? (suite.variant_count() - shard.index + shard.count - 1) / shard.count : 0);
  check_budget(suite.file, suite.axes.empty() ? 0 : suite.axes.front().line - 1, "axes", 64 * variants,
               4096 * variants);
  const std::vector<PreparedVariant> prepared =
      prepare_variants(suite, shard_indices(suite.variant_count(), shard), a.sets, jobs);
  const std::string stem = sharded ? fmt::format("{}-shard-{}-of-{}", suite.name, shard.index, shard.count)
                                   : fmt::format("{}-results", suite.name);
  // With --write-baseline the baseline is the result file, unless -o asks for another copy.
  const std::string json_path = !a.output.empty() ? a.output : a.write_baseline ? *suite.baseline_path : stem + ".json";
  const std::string csv_path = a.csv.empty() ? csv_path_for(json_path) : a.csv;
  const std::string baseline_copy = a.write_baseline && json_path != *suite.baseline_path ? *suite.baseline_path : "";
  // None of them a file the suite read (itself, its base scenario, the baseline), before anything runs.
  const std::optional<BenchResults> baseline = read_baseline(a.baseline, suite.identity().name);
  if (baseline) check_shares_variants(*baseline, a.baseline, prepared);
  check_output_path(a.output.empty() && a.write_baseline ? "--write-baseline" : "--output", json_path);
  check_output_path("--csv", csv_path);
  check_output_path("baseline", baseline_copy);
  SuiteProgress progress(prepared.size(), a.quiet || verbosity() == Verbosity::Quiet);
  BenchResults results;
  results.suite = suite.identity();
  results.shard = sharded ? fmt::format("{}/{}", shard.index, shard.count) : "all";
  std::vector<ResultRows> rows(prepared.size());
  results.results = run_variants(
      prepared, jobs, [&](std::size_t done, const VariantResult& r) { progress.update(done, r); },
      [&](std::size_t i, const VariantResult& r) { rows[i] = result_rows(r); });
  // The threads parallel_for made (it caps them at twice the cores), not those asked for.
  progress.finish(prepared.size(), threads_for_work(prepared.size(), jobs));

  const std::string wins = write_results(results, rows, json_path, baseline_copy, csv_path, jobs, !sharded);
  if (!wins.empty()) fmt::print("{}\n", wins);
  fmt::print("{}; results in {} and {}\n", counts_line(results), json_path, csv_path);
  if (a.write_baseline) fmt::print("baseline written to {}\n", *suite.baseline_path);
  if (baseline) check_baseline(results, *baseline, a.baseline, suite.tolerance);
  fail_if_any_failed(results);
}

// Nothing is written unless the merge succeeds: a missing shard (without --allow-partial) fails
// before any file is written, so no half result lies around looking like a whole one.
void run_merge(const MergeArgs& a) {
  std::vector<BenchResults> parts;
  for (const auto& f : a.files) parts.push_back(results_from_json(read_input_file(f), f));
  const BenchResults merged = merge_results(parts, a.files);
  const std::optional<BenchResults> baseline = read_baseline(a.baseline, merged.suite.name);
  if (merged.shard != "all") {
    if (!a.allow_partial) {
      fmt::print(stderr,
                 "error: the files hold {} of the suite's {} variants (a shard is missing); nothing written "
                 "(--allow-partial writes what there is)\n",
                 merged.results.size(), merged.suite.variants);
      throw CLI::RuntimeError(4);
    }
    warn("the files hold {} of the suite's {} variants (a shard is missing)", merged.results.size(),
         merged.suite.variants);
  }
  const std::string csv_path = a.csv.empty() ? csv_path_for(a.output) : a.csv;
  check_output_path("--output", a.output);
  check_output_path("--csv", csv_path);
  const std::string wins = write_results(merged, result_rows(merged), a.output, "", csv_path, 1, merged.shard == "all");
  if (!wins.empty()) fmt::print("{}\n", wins);
  fmt::print("{} merged from {} files; results in {} and {}\n", counts_line(merged), a.files.size(), a.output,
             csv_path);
  if (baseline) check_baseline(merged, *baseline, a.baseline, merged.suite.tolerance);
  fail_if_any_failed(merged);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto a = std::make_shared<BenchArgs>();
  auto* cmd =
      app.add_subcommand("bench", "run a schedule-variant suite (cross product of axes) and compare to a baseline");
  cmd->require_subcommand(0, 1);
  cmd->add_option("suite", a->suite, "suite YAML file (base scenario + axes), e.g. bench/suites/pipeline.yaml");
  cmd->add_option("-o,--output", a->output, "result JSON (default: NAME-results.json, or NAME-shard-I-of-N.json)")
      ->check(file_name());
  cmd->add_option("--csv", a->csv, "result CSV (default: the JSON path with .csv)")->check(file_name());
  cmd->add_option("--baseline", a->baseline, "compare with an earlier result JSON; exit 4 listing regressions")
      ->check(file_name());
  cmd->add_flag("--write-baseline", a->write_baseline,
                "write the results to the suite's 'baseline' file (and its CSV next to it) to accept them");
  cmd->add_option("--shard", a->shard, "run variants I, I+N, I+2N, ... only (I/N, I from 0); join with 'bench merge'");
  add_jobs_option(cmd, a->jobs, "worker threads (default: all cores)");
  cmd->add_option("--set", a->sets, "override a base-scenario key for every variant (repeatable)");
  cmd->add_flag("-q,--quiet", a->quiet, "no progress on stderr");

  auto m = std::make_shared<MergeArgs>();
  auto* merge = cmd->add_subcommand("merge", "join the result files of shards (--shard I/N) into one");
  merge->add_option("files", m->files, "shard result JSON files")->required();
  merge->add_option("-o,--output", m->output, "merged result JSON")->required()->check(file_name());
  merge->add_option("--csv", m->csv, "merged result CSV (default: the JSON path with .csv)")->check(file_name());
  merge->add_option("--baseline", m->baseline, "compare the merged results with a baseline; exit 4 on regressions")
      ->check(file_name());
  merge->add_flag("--allow-partial", m->allow_partial, "write and succeed even if some variants are missing");
  merge->callback([m] { run_merge(*m); });

  cmd->callback([a, merge] {
    if (merge->parsed()) return;
    reuse_freed_memory();
    run_bench(*a);
  });
}

}  // namespace stepsim::cli
