// A searched layout written back as a job_step scenario (`stepsim search --export`): the layout's
// YAML reads back to the same layout, key by key, and the scenario to the same step.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <map>
#include <stdexcept>

#include <yaml-cpp/yaml.h>

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

// `over` (format_layout_yaml_over's map) laid over `base`'s YAML as a variant's layout is over
// its scenario's, then read.
JobLayout read_over(const JobLayout& base, const std::string& over) {
  YAML::Emitter out;
  out << cli::laid_over(YAML::Load(cli::format_layout_yaml(base)), YAML::Load(over));
  const auto src = cli::Source::parse(out.c_str(), "variant.yaml");
  return cli::read_layout(cli::Reader(src, src->root, "layout"));
}

// A layout with every key away from its default (a layout no run would take: the reader does not
// check that the keys agree, check_layout does).
JobLayout every_key_changed() {
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
  return l;
}

}  // namespace

TEST_CASE("a layout written as YAML reads back to itself", "[search][export]") {
  JobLayout plain;
  plain.dp = 8;
  plain.global_batch = 64;
  CHECK(cli::format_layout_yaml(plain) ==
        "{tp: 1, pp: 1, dp: 8, schedule: 1f1b, micro_batch: 1, global_batch: 64, recompute: none}");
  CHECK(read_back(plain) == plain);
  // Every key away from its default at once.
  const JobLayout l = every_key_changed();
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

TEST_CASE("a layout written over another reads back to itself laid over it", "[search][export]") {
  const JobLayout changed = every_key_changed();
  // The defaults over a layout without them: spelled out where no absent key would give them back
  // (recompute_layers: all, expert_tp: tp, first_chunk_layers: even, dp_bandwidth: none).
  JobLayout plain;
  plain.dp = 8, plain.global_batch = 64;
  const std::string back = cli::format_layout_yaml_over(plain, changed);
  CHECK(back.find("recompute_layers: all") != std::string::npos);
  CHECK(back.find("expert_tp: tp") != std::string::npos);
  CHECK(back.find("first_chunk_layers: even, last_chunk_layers: even") != std::string::npos);
  CHECK(back.find("dp_bandwidth: none") != std::string::npos);
  CHECK(
      back.find("overlap: {grad_reduce: true, param_gather: true, pp: true, pairs: true, tp: false, ep_a2a: false}") !=
      std::string::npos);
  CHECK(read_over(changed, back) == plain);
  // fp8 on with FP8 activations off over fp8 off: both false, but only the base's is the default
  // (which follows fp8), so the variant writes its own.
  const std::string fp8_over = cli::format_layout_yaml_over(changed, plain);
  CHECK(fp8_over.find("fp8_activations: false") != std::string::npos);
  CHECK(read_over(plain, fp8_over) == changed);
  CHECK(cli::format_layout_yaml_over(changed, changed) == "{}");
  // Each key alone back to its default (or over it): only that key is written.
  const auto alone = [&](auto set) {
    JobLayout x = changed;
    set(x);
    const std::string over = cli::format_layout_yaml_over(x, changed);
    INFO(over);
    CHECK(std::count(over.begin(), over.end(), ':') == 1 + (over.find("overlap") != std::string::npos));
    CHECK(read_over(changed, over) == x);
    CHECK(read_over(x, cli::format_layout_yaml_over(changed, x)) == changed);
  };
  alone([](JobLayout& x) { x.recompute_layers = -1; });
  alone([](JobLayout& x) { x.expert_tp = 0; });
  alone([](JobLayout& x) { x.vpp = 1; });
  alone([](JobLayout& x) { x.overlap_tp = false; });
  alone([](JobLayout& x) { x.fp8_activations = true; });  // fp8's default, written: the base says false
  alone([](JobLayout& x) { x.cp_balanced = true; });
  alone([](JobLayout& x) { x.recompute_modules = JobLayout{}.recompute_modules; });
  alone([](JobLayout& x) { x.keep_gathered = false; });
  alone([](JobLayout& x) { x.first_chunk_layers = -1; });  // `even`
  alone([](JobLayout& x) { x.last_chunk_layers = -1; });
  alone([](JobLayout& x) { x.dp_bandwidth = 0; });  // `none`: the network's
  // Every key back to its default at once.
  CHECK(read_over(changed, cli::format_layout_yaml_over(JobLayout{}, changed)) == JobLayout{});
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
  const std::string text = cli::search_layout_scenario(sc, sets, r, {{2}, {}}, out);
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
  // Several picks: the first the step, the others its variants, each running to its own step.
  const std::string several = cli::search_layout_scenario(sc, sets, r, {{3, 1, 2}, {}}, out);
  CHECK(several.rfind("# Layouts 3, 1 and 2 of the 8 listed (rank: time) of\n", 0) == 0);
  CHECK(several.find("name: search-moe-256xh100-3-1-2\n") != std::string::npos);
  const cli::Scenario compared = cli::parse_scenario(several, out);
  REQUIRE(compared.job_step);
  REQUIRE(compared.job_step->variants.size() == 2);
  const std::pair<std::string, const JobStepSpec*> rows[] = {{"base", &compared.job_step->spec},
                                                             {"layout-1", &compared.job_step->variants[0].spec},
                                                             {"layout-2", &compared.job_step->variants[1].spec}};
  for (std::size_t i = 0; i < 3; ++i) {
    const Evaluated& e = r.top[i == 0 ? 2 : i - 1];
    INFO(rows[i].first);
    if (i > 0) CHECK(compared.job_step->variants[i - 1].name == rows[i].first);
    JobLayout w = e.c.layout;
    w.fewest_recompute = false;
    CHECK(rows[i].second->layout == w);
    CHECK(run_job_step(*rows[i].second).result.step_time == e.step);
  }
  // A pick named twice.
  CHECK_THROWS_WITH(cli::search_layout_scenario(sc, sets, r, {{1, 2, 1}, {}}, out),
                    Catch::Contains("1 is named twice"));
  // A pick past the listed layouts, at --pick.
  try {
    (void)cli::search_layout_scenario(sc, sets, r, {{9}, {}}, out);
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
  // The JSON carries what the table shows (the pipeline's ends too); the base's other keys are the
  // space's, restored by index.
  CHECK(merged.front().c.layout.first_chunk_layers == 23);
  CHECK(merged.front().c.layout.last_chunk_layers == 23);
  restore_layouts(sc.spec, merged);
  for (const Evaluated& e : merged) {
    INFO("layout " << e.c.index << ": " << layout_label(e.c, sc.spec.model.shape.layers));
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
  const std::string text = cli::search_layout_scenario(sc, sets, r, {{}, {48}}, kSource + "/out/desk.yaml");
  CHECK(text.rfind("# The best layout at 48 cards (the per-card table) of\n", 0) == 0);
  CHECK(text.find("\njob:\n  tokens: 100000000000\n  deadline: 30d\n  reserved: 5d\n  card_mtbf: 337d\n"
                  "  restore: 0s\n  checkpoint: {every: 1801s, storage: 7GB/s}\n") != std::string::npos);
  const cli::Scenario back = cli::parse_scenario(text, kSource + "/out/desk.yaml");
  REQUIRE(back.job);
  REQUIRE(back.job_step);
  CHECK(back.job_step->spec.layout.dp == 48);
}
