// A searched layout written back as a job_step scenario (`stepsim search --export`): the layout's
// YAML reads back to the same layout, key by key, and the scenario to the same step.
#include <catch2/catch.hpp>

#include <filesystem>
#include <map>

#include "cli/input/input.hpp"
#include "cli/input/job_step_input.hpp"
#include "cli/input/job_step_yaml.hpp"
#include "cli/input/scenario.hpp"
#include "cli/input/search_input.hpp"
#include "cli/reports/search_export.hpp"
#include "cli/reports/search_report.hpp"

using namespace stepsim;

namespace {

const std::string kSource = STEPSIM_SOURCE_DIR;

JobLayout read_back(const JobLayout& l) {
  const auto src = cli::Source::parse(cli::format_layout_yaml(l), "layout.yaml");
  return cli::read_layout(cli::Reader(src, src->root, "layout"));
}

}  // namespace

TEST_CASE("a layout written as YAML reads back to itself", "[search][export]") {
  JobLayout plain;
  plain.dp = 8;
  plain.global_batch = 64;
  CHECK(cli::format_layout_yaml(plain) ==
        "{tp: 1, pp: 1, dp: 8, schedule: 1f1b, micro_batch: 1, global_batch: 64, recompute: none}");
  CHECK(read_back(plain) == plain);
  // Every key away from its default at once (a layout no run would take: the reader does not
  // check that the keys agree, check_layout does).
  JobLayout l;
  l.tp = 4, l.pp = 2, l.vpp = 3, l.dp = 16, l.cp = 2, l.ep = 8, l.expert_tp = 2, l.dp_replicate = 2;
  l.schedule = "interleaved-1f1b", l.zero = 2, l.sequence_parallel = true, l.micro_batch = 2, l.global_batch = 512;
  l.recompute = JobRecompute::Full, l.recompute_layers = 3, l.attention = AttentionKernel::Unfused;
  l.overlap_grad_reduce = l.overlap_param_gather = l.overlap_pp = l.overlap_pairs = false;
  l.overlap_tp = l.overlap_ep_a2a = true;
  l.fp8 = true, l.fp8_recipe = Fp8Recipe::Blockwise, l.fp8_activations = false, l.fp8_dispatch = true;
  l.ep_dispatch = EpDispatch::PerNode, l.permute_fusion = true, l.grad_bytes = 2, l.adam_moment_bytes = 2;
  l.dp_bandwidth = 21'300'000'001, l.zero3_fetch = Zero3Fetch::Module, l.keep_gathered = true;
  l.master_weights = MasterWeights::Model, l.cp_balanced = false, l.cp_comm = CpComm::AllToAll;
  l.expert_placement = ExpertPlacement::RoundRobin, l.first_chunk_layers = 5, l.last_chunk_layers = 6;
  l.recompute_modules = kRecomputeLayerNorm | kRecomputeMoeAct;
  REQUIRE(read_back(l) == l);
  // Each key alone: one the writer left out would read back as its default here.
  const JobLayout d;
  const auto alone = [&](auto set) {
    JobLayout x = d;
    x.dp = 1;
    set(x);
    CHECK(read_back(x) == x);
  };
  alone([](JobLayout& x) { x.fp8 = true; });  // fp8_activations follows fp8 unless written
  alone([](JobLayout& x) { x.fp8 = true, x.fp8_activations = false; });
  alone([](JobLayout& x) { x.recompute = JobRecompute::Full, x.recompute_layers = 0; });
  alone([](JobLayout& x) { x.vpp = 2, x.schedule = "interleaved-1f1b"; });
  alone([](JobLayout& x) { x.recompute_modules = 0; });
}

TEST_CASE("a searched layout exported as a job_step scenario runs to the search's step", "[search][export]") {
  const std::vector<std::string> sets = {"search.layout.recompute_layers=auto"};
  const auto sc = cli::load_search(kSource + "/scenarios/search-moe-256xh100.yaml", sets);
  SearchOptions opt;
  opt.jobs = 2;
  const SearchResult r = run_search(sc.spec, opt);
  REQUIRE(r.top.size() >= 2);
  // Every simulated layout reads back from its YAML (recompute_layers: auto resolved to its count).
  for (const Evaluated& e : r.simulated) {
    JobLayout want = e.c.layout;
    want.fewest_recompute = false;
    CHECK(read_back(e.c.layout) == want);
  }
  // Written beside the checkout's scenarios/ (out/), the model's `file:`, if any, would be
  // rebased; this search gives its model inline and a preset.
  const std::string out = kSource + "/out/exported.yaml";
  const std::string text = cli::search_layout_scenario(sc, sets, r, {2, 0}, out);
  CHECK(text.rfind("# Layout 2 of the 8 listed (rank: time) of\n#   stepsim search ", 0) == 0);
  CHECK(text.find("--set 'search.layout.recompute_layers=auto'") != std::string::npos);
  CHECK(text.find("name: search-moe-256xh100-2\n") != std::string::npos);
  CHECK(text.find("hardware: {preset: h100-sxm, gpus: 256}") != std::string::npos);
  const cli::Scenario run = cli::parse_scenario(text, out);
  // ... and the scenario holds the search's model, cluster and layout: the same spec.
  REQUIRE(run.job_step);
  const cli::JobStepScenario* job = &*run.job_step;
  JobLayout want = r.top[1].c.layout;
  want.fewest_recompute = false;
  CHECK(job->spec.layout == want);
  CHECK(job->spec.model.shape.layers == sc.spec.model.shape.layers);
  CHECK(job->spec.cluster.accelerator.name == sc.spec.cluster.accelerator.name);
  CHECK(run_job_step(job->spec).result.step_time == r.top[1].step);
  // A pick past the listed layouts, at --pick.
  try {
    (void)cli::search_layout_scenario(sc, sets, r, {9, 0}, out);
    FAIL("--pick 9 of 8 accepted");
  } catch (const cli::InputError& e) {
    CHECK(e.key() == "");
    CHECK(e.file() == "--pick");
    CHECK(e.message() == "9 is not one of the 8 layouts listed (1 to 8; --top lists more)");
  }
}

TEST_CASE("shards' layouts, read back from their JSON, are whole again: the search's own", "[search][export]") {
  const std::vector<std::string> sets = {"search.layout.recompute_layers=auto", "search.layout.tp=[2,4]"};
  const auto sc = cli::load_search(kSource + "/scenarios/search-moe-256xh100.yaml", sets);
  const SearchResult whole = run_search(sc.spec);
  std::map<std::int64_t, JobLayout> searched;
  for (const Evaluated& e : whole.simulated) searched[e.c.index] = e.c.layout;
  std::vector<Evaluated> merged;
  for (std::size_t i = 0; i < 2; ++i) {
    SearchOptions opt;
    opt.shard_index = i;
    opt.shard_count = 2;
    const SearchResult part = run_search(sc.spec, opt);
    const nlohmann::json shard =
        nlohmann::json::parse(cli::search_json({sc.name, sc.description, sc.file}, sc.spec, part).dump());
    for (const auto& j : shard.at("simulated")) merged.push_back(cli::evaluated_from_json(j));
  }
  REQUIRE(merged.size() >= 4);
  // From the JSON alone a layout has lost its base's keys (the first and last chunks' layers here).
  CHECK(merged.front().c.layout.first_chunk_layers == -1);
  restore_layouts(sc.spec, merged);
  for (const Evaluated& e : merged) {
    INFO("layout " << e.c.index << ": " << layout_label(e.c));
    REQUIRE(searched.count(e.c.index) == 1);
    CHECK(e.c.layout == searched[e.c.index]);
  }
  // A shard of another scenario is refused: tp listed the other way round numbers its layouts apart.
  const auto other = cli::load_search(kSource + "/scenarios/search-moe-256xh100.yaml",
                                      {"search.layout.recompute_layers=auto", "search.layout.tp=[4,2]"});
  CHECK_THROWS_WITH(restore_layouts(other.spec, merged), Catch::Contains("in the shard but"));
}

TEST_CASE("a search's task exported as a job: section, durations exact", "[search][export]") {
  const std::vector<std::string> sets = {"search.checkpoint={bandwidth: 7GB/s, interval: 1801s, card_mtbf: 337d}",
                                         "search.hardware.gpus=[48]"};
  const auto sc = cli::load_search(kSource + "/scenarios/search-design-desk.yaml", sets);
  const SearchResult r = run_search(sc.spec);
  const std::string text = cli::search_layout_scenario(sc, sets, r, {0, 48}, kSource + "/out/desk.yaml");
  CHECK(text.rfind("# The best layout at 48 cards (the per-card table) of\n", 0) == 0);
  CHECK(text.find("\njob:\n  tokens: 100000000000\n  deadline: 30d\n  reserved: 5d\n  card_mtbf: 337d\n"
                  "  restore: 0s\n  checkpoint: {every: 1801s, storage: 7000000000B/s}\n") != std::string::npos);
  const cli::Scenario back = cli::parse_scenario(text, kSource + "/out/desk.yaml");
  REQUIRE(back.job);
  REQUIRE(back.job_step);
  CHECK(back.job_step->spec.layout.dp == 48);
}
