// `stepsim search FILE` and `stepsim search merge`: the layout search (docs/search.md).
#include "cli/commands/search_commands.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands/commands.hpp"
#include "cli/commands/diagnostics.hpp"
#include "cli/commands/reuse_freed_memory.hpp"
#include "cli/input/budget.hpp"
#include "cli/input/input_files.hpp"
#include "cli/input/search_input.hpp"
#include "cli/reports/json_digest.hpp"
#include "cli/reports/output.hpp"
#include "cli/reports/search_export.hpp"
#include "cli/reports/search_report.hpp"
#include "models/model_limits.hpp"
#include "sim/parallel_for.hpp"
#include "sim/time.hpp"

namespace stepsim::cli {

namespace {

// `--export FILE [--pick N | --cards N]`: a listed layout (or the best at N cards) written as a
// job_step scenario.
struct ExportArgs {
  std::string file;
  ExportChoice choice;
};

struct SearchArgs {
  std::string file;
  std::vector<std::string> sets;
  int top = 0;
  std::string rank;
  unsigned jobs = 0;
  bool json = false;
  std::string csv, html, shard, output;
  bool no_bound = false;
  ExportArgs exported;
};

struct MergeArgs {
  std::vector<std::string> files;
  bool json = false;
  std::string csv, html;
  ExportArgs exported;
};

// "I/N", 0 <= I < N.
std::pair<std::size_t, std::size_t> parse_shard_arg(const std::string& s) {
  const auto slash = s.find('/');
  std::size_t i = 0, n = 0;
  try {
    if (slash == std::string::npos) throw std::invalid_argument("");
    std::size_t p1 = 0, p2 = 0;
    i = std::stoul(s.substr(0, slash), &p1);
    n = std::stoul(s.substr(slash + 1), &p2);
    if (p1 != slash || p2 != s.size() - slash - 1) throw std::invalid_argument("");
  } catch (const std::exception&) { throw InputError("--shard", 0, "", fmt::format("'{}' is not I/N (e.g. 0/4)", s)); }
  if (n == 0 || i >= n || n > 100000)
    throw InputError("--shard", 0, "", fmt::format("'{}': need 0 <= I < N <= 100000", s));
  return {i, n};
}

void apply_flags(const SearchArgs& a, SearchSpec& spec) {
  if (a.top > 0) spec.top = a.top;
  if (!a.rank.empty()) {
    if (a.rank == "time")
      spec.rank = SearchRank::Step;
    else if (a.rank == "cost")
      spec.rank = SearchRank::Cost;
    else if (a.rank == "days")
      spec.rank = SearchRank::Days;
    else
      throw InputError("--rank", 0, "", fmt::format("unknown rank '{}' (time, cost or days)", a.rank));
    if (spec.rank == SearchRank::Days && spec.task.tokens <= 0)
      throw InputError("--rank", 0, "", "rank days needs a task section (search.task: tokens, deadline)");
  }
}

void print_outputs(const SearchReportInfo& info, const SearchScenario& sc, const std::vector<std::string>& sets,
                   const SearchResult& r, bool json, const std::string& csv, const std::string& html,
                   const ExportArgs& exported) {
  // The layouts to export first: where the search found none to export (nothing fits, fewer
  // listed), the report says why and nothing is written.
  std::string scenario;
  std::exception_ptr refused;
  if (!exported.file.empty()) {
    try {
      scenario = search_layout_scenario(sc, sets, r, exported.choice, exported.file);
    } catch (const InputError&) { refused = std::current_exception(); }
  }
  if (json)
    fmt::print("{}\n", search_json(info, sc.spec, r).dump(2));
  else
    fmt::print("{}", search_text(info, sc.spec, r));
  if (refused) {
    std::fflush(stdout);
    std::rethrow_exception(refused);
  }
  if (!csv.empty()) write_file(csv, search_csv(sc.spec, r));
  if (!html.empty()) write_file(html, search_html(info, sc.spec, r));
  if (!exported.file.empty()) {
    std::fflush(stdout);  // the report, then the note on stderr saying what was written
    write_file(exported.file, scenario);
    const ExportChoice& c = exported.choice;
    const std::size_t n = c.cards.empty() ? c.picks.size() : c.cards.size();
    const std::string what =
        c.cards.empty()
            ? fmt::format("{} {}", n == 1 ? "layout" : "layouts", fmt::join(c.picks, ", "))
            : fmt::format("the best {} at {} cards", n == 1 ? "layout" : "layouts", fmt::join(c.cards, ", "));
    if (exports_own_layout(r, c))
      note("{} written to {} as a job_step scenario, the job step's own layout its variant `own` (stepsim compare {})",
           what, exported.file, exported.file);
    else if (n == 1)
      note("{} written to {} as a job_step scenario (stepsim run {})", what, exported.file, exported.file);
    else
      note(
          "{} written to {} as a job_step scenario, the first its step and the others its variants (stepsim "
          "compare {})",
          what, exported.file, exported.file);
  }
}

void add_export_options(CLI::App* cmd, ExportArgs& e) {
  auto* file =
      cmd->add_option("--export", e.file,
                      "write a listed layout (the best, --pick N, or the best at --cards N) as a job_step "
                      "scenario to this file; `stepsim run` simulates it alone. Several (--pick 1,2,3 or "
                      "--cards 48,64): the first the scenario's step, the others its variants (stepsim compare)")
          ->check(file_beside_report());
  auto* pick = add_list_option(cmd, "--pick", e.choice.picks,
                               "which listed layouts --export writes, by their number (default 1, the best; a list: "
                               "1,2,3)",
                               CLI::Range(1, 10000))
                   ->needs(file);
  add_list_option(cmd, "--cards", e.choice.cards,
                  "--export the best layout at this card count (the per-card table; a list: 48,64) instead of a "
                  "listed one",
                  CLI::Range(std::int64_t{1}, std::int64_t{kMaxGpus}))
      ->needs(file)
      ->excludes(pick);
}

// Before the search: the files it writes are none it has read and have a folder to go in, and
// the layouts to export can be listed.
void check_outputs(const ExportArgs& exported, const std::string& csv, const std::string& html,
                   const SearchSpec& spec) {
  check_output_path("--export", exported.file);
  check_output_path("--csv", csv);
  check_output_path("--html", html);
  if (!exported.file.empty()) check_export_choice(spec, exported.choice);
}

void run_search_command(const SearchArgs& a) {
  if (!a.shard.empty() && !a.exported.file.empty())
    throw InputError("--export", 0, "", "a shard lists no layouts: export from `stepsim search merge`");
  SearchScenario sc = load_search(a.file, a.sets);
  apply_flags(a, sc.spec);
  check_outputs(a.exported, a.csv, a.html, sc.spec);
  check_output_path("--output", a.output);
  SearchOptions opt;
  opt.jobs = static_cast<int>(a.jobs > 0 ? a.jobs : all_cores());
  opt.prune_bound = !a.no_bound;
  SearchReportInfo info;
  info.name = sc.name;
  info.description = sc.description;
  info.file = a.file;
  info.jobs = opt.jobs;
  if (!a.shard.empty()) {
    const auto [i, n] = parse_shard_arg(a.shard);
    opt.shard_index = i;
    opt.shard_count = n;
    info.shard = fmt::format("{}/{}", i, n);
  }
  // The total comes with each report (the search counts as it goes); 1 here enables the line.
  auto progress = std::make_shared<Progress>("search", "layouts simulated or bounded", 1, a.json);
  opt.progress = [progress](std::size_t done, std::size_t total) { progress->report(done, total); };
  const auto t0 = std::chrono::steady_clock::now();
  const SearchResult r = [&] {
    try {
      return run_search(sc.spec, opt);
    } catch (const SpecError& e) {
      sc.fail_step(e);  // the job step's own layout, searched around
    } catch (const OverflowError& e) { sc.fail_section(e); }
  }();
  opt.progress = {};
  progress.reset();  // the last owner: its line cleared before the report
  info.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (opt.shard_count > 1) {
    // A shard writes everything it simulated, with what `search merge` needs to rebuild the spec.
    auto j = search_json(info, sc.spec, r);
    j["overrides"] = a.sets;
    j["top_flag"] = a.top;
    j["rank_flag"] = a.rank;
    const std::string out =
        !a.output.empty() ? a.output : fmt::format("{}-shard-{}-of-{}.json", sc.name, opt.shard_index, opt.shard_count);
    write_file(out, with_digest(std::move(j)).dump(1) + "\n");
    fmt::print("shard {}: {} layouts considered, {} simulated; results in {}\n", info.shard, r.counts.considered,
               r.counts.simulated, out);
    return;
  }
  print_outputs(info, sc, a.sets, r, a.json, a.csv, a.html, a.exported);
  // Only on a terminal: redirected output stays the same from run to run.
  if (!a.json && isatty(fileno(stderr)) != 0)
    fmt::print(stderr, "search: {:.2f} s on {} thread{}\n", info.seconds, opt.jobs, opt.jobs == 1 ? "" : "s");
}

// A shard file that is not what `search --shard` writes: the library's reason without its tag
// ("[json.exception.out_of_range.403] key 'shard' not found" -> "key 'shard' not found").
[[noreturn]] void not_a_shard(const std::string& file, const std::exception& e) {
  std::string why = e.what();
  if (why.starts_with("[json.exception.")) why = why.substr(std::min(why.size(), why.find("] ") + 2));
  throw InputError(file, 0, "",
                   fmt::format("not a search shard file (`stepsim search FILE --shard I/N -o SHARD.json` writes one): "
                               "{}",
                               why));
}

// What the shards read so far add up to: the scenario (read with the first shard's flags), the
// union of their simulated layouts and counts, and which shards of how many came.
struct Merged {
  std::optional<SearchScenario> sc;
  SearchArgs flags;
  SearchResult r;
  std::set<std::size_t> seen;
  std::size_t count = 0;
  std::string file;
};

// The shard's `shard` (I/N), checked against the others'.
void take_shard_index(const std::string& f, const nlohmann::json& j, Merged& m) {
  const std::string shard = j.at("shard").get<std::string>();
  std::pair<std::size_t, std::size_t> in;
  try {
    in = parse_shard_arg(shard);
  } catch (const InputError& e) {  // blamed on the file, not on the --shard option it mimics
    throw InputError(f, 0, "shard", e.message());
  }
  const auto [i, n] = in;
  if (m.count != 0 && n != m.count)
    throw InputError(f, 0, "shard", fmt::format("shard {} is of {} shards, the others of {}", shard, n, m.count));
  m.count = n;
  if (!m.seen.insert(i).second) throw InputError(f, 0, "shard", fmt::format("shard {} given twice", shard));
}

// The --set, --top and --rank a shard was searched with.
SearchArgs flags_of(const nlohmann::json& j) {
  SearchArgs flags;
  flags.sets = j.at("overrides").get<std::vector<std::string>>();
  flags.top = j.at("top_flag").get<int>();
  flags.rank = j.at("rank_flag").get<std::string>();
  return flags;
}

// A shard searched with other --set, --top or --rank than the first shard: its layouts were
// simulated, or ranked, under other settings, and would be mixed with theirs.
void check_same_flags(const std::string& f, const SearchArgs& these, const SearchArgs& first) {
  const auto& sets = these.sets;
  const auto words = [](const std::vector<std::string>& v) {
    return v.empty() ? std::string("no --set") : fmt::format("--set {}", fmt::join(v, " --set "));
  };
  if (sets != first.sets)
    throw InputError(f, 0, "overrides",
                     fmt::format("this shard was searched with {}, the first one with {}: search every shard alike",
                                 words(sets), words(first.sets)));
  if (these.rank != first.rank || these.top != first.top)
    throw InputError(f, 0, "rank_flag",
                     "this shard was searched with other --rank or --top than the first one: "
                     "search every shard alike");
}

// One shard file into `m`.
void add_shard(const std::string& f, Merged& m) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_input_file(f));
    if (!j.is_object()) throw std::invalid_argument("expected a JSON object");
    if (!digest_holds(j))
      throw InputError(f, 0, "digest",
                       j.contains("digest")
                           ? "the shard was changed after `stepsim search --shard` wrote it (its "
                             "digest does not match its contents): run that shard again"
                           : "no digest: not a shard `stepsim search --shard` wrote, or one cut short");
    take_shard_index(f, j, m);
    const std::string this_file = j.at("file").get<std::string>();
    if (!m.sc) {
      m.file = this_file;
      // The scenario's path as the search was given it: from another folder it is not there.
      if (std::error_code ec; !std::filesystem::exists(m.file, ec))
        throw InputError(f, 0, "file",
                         fmt::format("the search read {}, which is not there from this folder: merge in the folder "
                                     "the search ran in",
                                     m.file));
      m.flags = flags_of(j);
      m.sc = load_search(m.file, m.flags.sets);
      apply_flags(m.flags, m.sc->spec);
    } else if (this_file != m.file) {
      throw InputError(f, 0, "file", fmt::format("this shard searched {}, the first one {}", this_file, m.file));
    } else {
      check_same_flags(f, flags_of(j), m.flags);
    }
    const SearchCounts c = counts_from_json(j.at("counts"));
    SearchCounts& n = m.r.counts;
    n.considered += c.considered;
    n.divisibility += c.divisibility;
    n.schedule += c.schedule;
    n.memory += c.memory;
    n.bound += c.bound;
    n.simulated += c.simulated;
    n.over_memory_simulated += c.over_memory_simulated;
    for (const auto& [cards, why] : j.at("none_why").items())
      m.r.none_why.emplace(std::stoll(cards), why.get<std::string>());
    for (const auto& e : j.at("simulated")) {
      Evaluated ev = evaluated_from_json(e);
      apply_task(m.sc->spec, ev);
      m.r.simulated.push_back(ev);
    }
  } catch (const nlohmann::json::exception& e) {
    not_a_shard(f, e);
  } catch (const std::invalid_argument& e) {  // a value the shard's writer never writes
    not_a_shard(f, e);
  }
}

void run_merge(const MergeArgs& a) {
  Merged m;
  for (const auto& f : a.files) add_shard(f, m);
  if (m.seen.size() != m.count)
    throw InputError(a.files.front(), 0, "shard",
                     fmt::format("{} of {} shards given: every shard is needed", m.seen.size(), m.count));
  check_outputs(a.exported, a.csv, a.html, m.sc->spec);
  try {
    restore_layouts(m.sc->spec, m.r.simulated);
  } catch (const std::runtime_error& e) {
    throw InputError(a.files.front(), 0, "", fmt::format("the shards do not match {}: {}", m.file, e.what()));
  }
  try {
    finish_search(m.sc->spec, m.r);
  } catch (const SpecError& e) { m.sc->fail_step(e); }
  SearchReportInfo info;
  info.name = m.sc->name;
  info.description = m.sc->description;
  info.file = m.file;
  print_outputs(info, *m.sc, m.flags.sets, m.r, a.json, a.csv, a.html, a.exported);
}

}  // namespace

void add_search_command(CLI::App& app) {
  auto a = std::make_shared<SearchArgs>();
  auto m = std::make_shared<MergeArgs>();
  auto* cmd = app.add_subcommand(
      "search", "search parallel layouts of a job: the fastest that fits, the fewest cards that meet a deadline");
  cmd->add_option("file", a->file, "scenario YAML with a search: section");
  cmd->add_option("--set", a->sets, "override a key, e.g. --set search.layout.tp=[4,8] (repeatable)");
  add_count_option(cmd, "--top", a->top, 1, 10'000, "how many layouts to list (default: search.top, or 10)");
  cmd->add_option("--rank", a->rank,
                  "rank by time (step), cost (cards x step time) or days (to finish, with checkpoint and failures)");
  add_jobs_option(cmd, a->jobs, "threads (default: every core); results do not depend on it");
  cmd->add_flag("--json", a->json, "print JSON (every simulated layout) instead of the tables");
  cmd->add_option("--csv", a->csv, "write every simulated layout as CSV to this file")->check(file_beside_report());
  cmd->add_option("--html", a->html, "write an HTML report (scatter of every simulated layout, the front highlighted)")
      ->check(file_beside_report());
  cmd->add_option("--shard", a->shard,
                  "search candidates I, I+N, I+2N, ... only (I/N, I from 0); join with 'search merge'");
  cmd->add_option("-o,--output", a->output, "shard result JSON (default: NAME-shard-I-of-N.json)")->check(file_name());
  cmd->add_flag("--no-bound", a->no_bound,
                "simulate every layout that fits, even those whose compute alone is slower than the best");
  add_export_options(cmd, a->exported);
  auto* merge = cmd->add_subcommand("merge", "join the result files of shards (--shard I/N) into one report");
  merge->add_option("files", m->files, "shard result JSON files")->required();
  merge->add_flag("--json", m->json, "print JSON instead of the tables");
  merge->add_option("--csv", m->csv, "write every simulated layout as CSV to this file")->check(file_beside_report());
  merge->add_option("--html", m->html, "write the HTML report to this file")->check(file_beside_report());
  add_export_options(merge, m->exported);
  merge->callback([m] { run_merge(*m); });
  cmd->callback([a, merge] {
    if (merge->parsed()) return;
    if (a->file.empty()) throw CLI::RequiredError("file");
    reuse_freed_memory();
    run_search_command(*a);
  });
}

}  // namespace stepsim::cli
