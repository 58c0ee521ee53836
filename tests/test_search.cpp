// Layout search (schedules/lowering/search/, docs/search.md): SC21 Table 1 picks vs the paper,
// the design desk's card count, impossible requests, pruning counts, determinism, shards.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "cli/input/search_input.hpp"
#include "cli/input/validation_csv.hpp"
#include "cli/reports/search_report.hpp"
#include "models/layout.hpp"

using namespace stepsim;

namespace {

const std::string kSource = STEPSIM_SOURCE_DIR;

// The A100 efficiencies `stepsim check-against validation/megatron_sc21.csv` fitted on the
// table's fit=1 rows (job branch d5bf1c7): fixed here so the check does not move with a refit.
Efficiency sc21_efficiency() {
  Efficiency e;
  e.gemm = 0.631;
  e.attention = 0.783;
  e.memory = 1.0;
  e.fabric = 1.0;
  e.network = 0.674;
  return e;
}

bool same_layout(const JobLayout& a, const JobLayout& b) {
  return a.tp == b.tp && a.pp == b.pp && a.vpp == b.vpp && a.dp == b.dp && a.micro_batch == b.micro_batch &&
         a.recompute == b.recompute && a.zero == b.zero && (a.pp == 1 || a.schedule == b.schedule);
}

// The search the SC21 check runs for a row: tp, pp, v, micro-batch and recompute searched, the
// schedules Megatron-LM had in 2021 (1f1b, interleaved), no ZeRO (the paper's DDP).
SearchSpec sc21_search(const cli::MeasuredRun& row) {
  SearchSpec s;
  s.model = row.spec.model;
  s.cluster = row.spec.cluster;
  s.cluster.accelerator.efficiency = sc21_efficiency();
  s.base = row.spec.layout;
  s.axes.cards = {row.spec.layout.ranks()};
  s.axes.tp = {};  // auto
  s.axes.pp = {};
  s.axes.vpp = {};
  s.axes.cp = {1};
  s.axes.ep = {1};
  s.axes.zero = {0};
  s.axes.micro_batch = {};
  s.axes.schedule = {"1f1b", "interleaved-1f1b"};
  s.axes.recompute = {JobRecompute::None, JobRecompute::Selective, JobRecompute::Full};
  s.axes.sequence_parallel = {0};
  s.top = 5;
  return s;
}

// One Table 1 row: the search's best vs the paper's layout. `recompute`: the values searched.
struct Sc21Pick {
  std::string label;
  Time paper_step = 0, best_step = 0;
  int rank = 0;  // of the paper's layout among the simulated (0: not simulated)
  std::string best;
};

Sc21Pick sc21_pick(const cli::MeasuredRun& row, std::vector<JobRecompute> recompute) {
  SearchSpec spec = sc21_search(row);
  spec.axes.recompute = std::move(recompute);
  SearchOptions opt;
  opt.jobs = 2;
  const SearchResult r = run_search(spec, opt);
  JobStepSpec paper = row.spec;
  paper.cluster.accelerator.efficiency = sc21_efficiency();
  Sc21Pick p;
  p.label = row.label;
  p.paper_step = run_job_step(paper).result.step_time;
  REQUIRE(r.top.size() == 5);
  p.best_step = r.top.front().step;
  p.best = layout_label(r.top.front().c);
  for (std::size_t i = 0; i < r.simulated.size(); ++i)
    if (same_layout(r.simulated[i].c.layout, row.spec.layout)) p.rank = static_cast<int>(i) + 1;
  // The paper's layout is in the space the search covers: it divides, its schedule runs it and it
  // fits; when it was not simulated, the bound pruned it: its compute alone is slower than the
  // 5th best step found, so five faster layouts exist.
  CHECK_FALSE(check_layout(paper.model, paper.layout, paper.layout.ranks()));
  CHECK_FALSE(schedule_problem(paper.layout));
  CHECK(job_memory(paper.model, paper.layout, chunk_costs(paper.model, paper.layout, paper.cluster), -1).total() <=
        paper.cluster.accelerator.usable_memory);
  if (p.rank == 0) CHECK(compute_bound(paper) > r.top.back().step);
  if (std::getenv("STEPSIM_SEARCH_VERBOSE"))
    std::fprintf(stderr, "%s | paper %.3f s rank %d/%zu | best %s %.3f s (%.1f%% faster) | %lld/%lld/%lld/%lld/%lld/%lld\n",
                 row.label.c_str(), to_s(p.paper_step), p.rank, r.simulated.size(), p.best.c_str(), to_s(p.best_step),
                 100.0 * (1.0 - to_s(p.best_step) / to_s(p.paper_step)), (long long)r.counts.considered,
                 (long long)r.counts.divisibility, (long long)r.counts.schedule, (long long)r.counts.memory,
                 (long long)r.counts.bound, (long long)r.counts.simulated);
  return p;
}

}  // namespace

TEST_CASE("search: SC21 Table 1, the paper's layout is in the top 5 or the search predicts a faster one", "[search][sc21]") {
  const auto rows = cli::read_measured_runs(kSource + "/validation/megatron_sc21.csv");
  std::vector<Sc21Pick> picks;
  for (const auto& row : rows)
    if (row.table == "Table 1") picks.push_back(sc21_pick(row, {JobRecompute::None, JobRecompute::Selective, JobRecompute::Full}));
  REQUIRE(picks.size() == 10);
  int faster = 0;
  for (const auto& p : picks) {
    INFO(p.label << ": paper " << to_s(p.paper_step) << " s, rank " << p.rank << ", best " << p.best << " " << to_s(p.best_step));
    CHECK(p.best_step <= p.paper_step);
    const bool in_top5 = p.rank >= 1 && p.rank <= 5;
    CHECK((in_top5 || p.best_step < p.paper_step));
    if (p.best_step < p.paper_step) ++faster;
  }
  // Recompute opened, every row finds a faster layout (the paper recomputed everything; selective
  // or no recompute saves the extra forward: Korthikanti et al. 2022, Table 5).
  CHECK(faster == 10);
  // Figures (docs/search.md): GPT-1.7B on 32 GPUs, paper 3.57 s vs tp 2 dp 16 mbs 4 no recompute 2.98 s.
  CHECK(to_s(picks[0].paper_step) == Approx(3.570).epsilon(0.01));
  CHECK(to_s(picks[0].best_step) == Approx(2.976).epsilon(0.01));
  CHECK(to_s(picks[9].best_step) == Approx(105.5).epsilon(0.01));
}

TEST_CASE("search: SC21 Table 1 with the paper's full recompute", "[search][sc21]") {
  const auto rows = cli::read_measured_runs(kSource + "/validation/megatron_sc21.csv");
  int in_top5 = 0, checked = 0;
  for (const auto& row : rows) {
    if (row.table != "Table 1") continue;
    const Sc21Pick p = sc21_pick(row, {JobRecompute::Full});
    INFO(p.label << ": paper " << to_s(p.paper_step) << " s, rank " << p.rank << ", best " << p.best);
    const bool top5 = p.rank >= 1 && p.rank <= 5;
    CHECK((top5 || p.best_step < p.paper_step));
    if (top5) ++in_top5;
    ++checked;
  }
  CHECK(checked == 10);
  WARN("paper layouts in the full-recompute top 5: " << in_top5 << " of 10");
}
