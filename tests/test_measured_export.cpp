// Measured runs written back as a job_step scenario (`stepsim check-against --export`): the model,
// cluster and layout of every row of every validation table read back to themselves, and the
// scenario to the row's step, alone and as variants.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "cli/input/input.hpp"
#include "cli/input/job_step_input.hpp"
#include "cli/input/job_step_yaml.hpp"
#include "cli/input/scenario.hpp"
#include "cli/input/validation_csv.hpp"
#include "cli/reports/measured_export.hpp"

using namespace stepsim;

namespace {

const std::string kSource = STEPSIM_SOURCE_DIR;

std::vector<std::string> validation_files() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(kSource + "/validation"))
    if (e.path().extension() == ".csv") files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

// A calibration no preset has, every value written out (the MoE host time in whole nanoseconds,
// as a scenario holds it).
Efficiency odd_calibration() {
  Efficiency e;
  e.gemm = 0.7123456789012345, e.attention = 0.41, e.memory = 0.93, e.fabric = 0.8765, e.network = 0.3679073895176229;
  e.contention = 0.3925274570244106, e.experts = 0.9, e.fp8 = 0.873, e.fp8_blockwise = 0.593,
  e.moe_host_per_expert = 976e-6;
  return e;
}

cli::PredictedRow predicted(const cli::MeasuredRun& row, const Efficiency& e) {
  JobStepSpec spec = row.spec;
  spec.cluster.accelerator.efficiency = e;
  const JobStepRun run = run_job_step(spec);
  return {&row, e, cli::predicted_metric(row, run.result), run.result.step_time, run.result.memory.total(),
          run.result.capacity};
}

JobStepSpec with_efficiency(const cli::MeasuredRun& row, const Efficiency& e) {
  JobStepSpec spec = row.spec;
  spec.cluster.accelerator.efficiency = e;
  return spec;
}

}  // namespace

TEST_CASE("every measured row exported reads back to its spec and runs to its step", "[validation][export]") {
  const std::vector<std::string> files = validation_files();
  REQUIRE(files.size() >= 11);
  int rows_checked = 0;
  for (const auto& file : files) {
    const auto rows = cli::read_measured_runs(file);
    for (const auto& row : rows) {
      INFO(row.file << ":" << row.line);
      for (const Efficiency& e : {row.spec.cluster.accelerator.efficiency, odd_calibration()}) {
        const cli::PredictedRow p = predicted(row, e);
        const std::string text = cli::measured_rows_scenario({p}, "stepsim check-against", {"a calibration"});
        const cli::Scenario sc = cli::parse_scenario(text, kSource + "/out/row.yaml");
        REQUIRE(sc.job_step);
        const JobStepSpec want = with_efficiency(row, e);
        CHECK(sc.job_step->spec.model == want.model);
        CHECK(sc.job_step->spec.cluster == want.cluster);
        CHECK(sc.job_step->spec.layout == want.layout);
        CHECK(sc.job_step->allow_oom == (p.memory > p.usable));
        CHECK(run_job_step(sc.job_step->spec).result.step_time == p.step);
        ++rows_checked;
      }
    }
  }
  CHECK(rows_checked >= 2 * 192);  // the 192 rows of the 11 tables, at two calibrations
}

TEST_CASE("a table's rows exported together: each variant reads back to its own row", "[validation][export]") {
  for (const auto& file : validation_files()) {
    const auto rows = cli::read_measured_runs(file);
    INFO(file);
    std::vector<cli::PredictedRow> all;
    for (const auto& row : rows) all.push_back(predicted(row, odd_calibration()));
    const std::string text = cli::measured_rows_scenario(all, "stepsim check-against", {"a calibration"});
    const cli::Scenario sc = cli::parse_scenario(text, kSource + "/out/rows.yaml");
    REQUIRE(sc.job_step);
    REQUIRE(sc.job_step->variants.size() == rows.size() - 1);
    for (std::size_t i = 1; i < rows.size(); ++i) {
      const cli::JobStepVariant& v = sc.job_step->variants[i - 1];
      INFO(v.name);
      CHECK(v.name == std::filesystem::path(file).stem().string() + "-" + std::to_string(rows[i].line));
      const JobStepSpec want = with_efficiency(rows[i], odd_calibration());
      CHECK(v.spec.model == want.model);
      CHECK(v.spec.cluster == want.cluster);
      CHECK(v.spec.layout == want.layout);
    }
  }
}

TEST_CASE("rows of two tables and two accelerators, and what a variant cannot take away", "[validation][export]") {
  const auto sc21 = cli::read_measured_runs(kSource + "/validation/megatron_sc21.csv");
  const auto qwen = cli::read_measured_runs(kSource + "/validation/qwen3_235b_moe_modelzoo.csv");
  const Efficiency a100 = sc21[5].spec.cluster.accelerator.efficiency;
  Efficiency h100 = odd_calibration();
  // A dense A100 row first, an MoE H100 row laid over it: preset, calibration, experts and all.
  const std::vector<cli::PredictedRow> rows = {predicted(sc21[5], a100), predicted(qwen[3], h100)};
  const std::string text = cli::measured_rows_scenario(rows, "stepsim check-against", {"one", "two"});
  CHECK(text.find("#   measured 140 TFLOP/s, predicted ") != std::string::npos);
  CHECK(text.find("# at one; two.\n") != std::string::npos);
  CHECK(text.find("name: check-megatron_sc21-16-qwen3_235b_moe_modelzoo-18\n") != std::string::npos);
  const cli::Scenario sc = cli::parse_scenario(text, kSource + "/out/rows.yaml");
  REQUIRE(sc.job_step);
  REQUIRE(sc.job_step->variants.size() == 1);
  const JobStepSpec& v = sc.job_step->variants[0].spec;
  CHECK(v.model == qwen[3].spec.model);
  CHECK(v.cluster == with_efficiency(qwen[3], h100).cluster);
  CHECK(v.layout == qwen[3].spec.layout);
  CHECK(run_job_step(v).result.step_time == rows[1].step);
  // The other way round, the dense row cannot drop the base's experts.
  try {
    (void)cli::measured_rows_scenario({rows[1], rows[0]}, "c", {"c"});
    FAIL("a dense variant of an MoE base written");
  } catch (const cli::InputError& e) {
    CHECK(e.file() == "--rows");
    CHECK(std::string(e.message()).find(":16 has no top_k, expert_ffn where the first row, ") != std::string::npos);
  }
}

TEST_CASE("rows named by line, or by file and line (--rows)", "[validation][export]") {
  const std::string sc21 = kSource + "/validation/megatron_sc21.csv";
  const std::string ks = kSource + "/validation/megatron_korthikanti2022.csv";
  auto rows = cli::read_measured_runs(sc21);
  const auto more = cli::read_measured_runs(ks);
  const std::vector<std::string> one = {sc21};
  CHECK(cli::select_rows(rows, one, {"16", "11"}) == std::vector<std::size_t>{5, 0});
  CHECK(cli::select_rows(rows, one, {"megatron_sc21:32"}) == std::vector<std::size_t>{21});
  rows.insert(rows.end(), more.begin(), more.end());
  const std::vector<std::string> two = {sc21, ks};
  CHECK(cli::select_rows(rows, two, {"megatron_korthikanti2022.csv:7", "megatron_sc21:11"}) ==
        std::vector<std::size_t>{22, 0});
  const auto refused = [&](const std::vector<std::string>& files, const std::vector<std::string>& sel) {
    try {
      (void)cli::select_rows(rows, files, sel);
    } catch (const cli::InputError& e) {
      CHECK(e.file() == "--rows");
      return std::string(e.message());
    }
    return std::string("accepted");
  };
  CHECK(refused(two, {"16"}) == "16: name its file, e.g. megatron_sc21.csv:16 (several files are given)");
  const std::string lines = " (its rows are on lines 11 to 32: name one, a range FIRST-LAST or all)";
  CHECK(refused(one, {"10"}) == "10: " + sc21 + " has no measured row on line '10'" + lines);
  CHECK(refused(one, {"x"}) == "x: " + sc21 + " has no measured row on line 'x'" + lines);
  CHECK(refused(one, {"20-12"}) == "20-12: " + sc21 + " has no measured rows on lines '20-12'" + lines);
  CHECK(refused(one, {"12-40"}) == "12-40: " + sc21 + " has no measured rows on lines '12-40'" + lines);
  CHECK(refused(one, {"16", "megatron_sc21:16"}) == sc21 + ":16 is named twice");
  CHECK(refused(one, {"14-17", "16"}) == sc21 + ":16 is named twice");
  // A range, every row: in line order.
  CHECK(cli::select_rows(rows, one, {"14-17"}) == std::vector<std::size_t>{3, 4, 5, 6});
  CHECK(cli::select_rows(rows, two, {"megatron_korthikanti2022:all"}).size() == more.size());
  CHECK(cli::select_rows(rows, two, {"megatron_sc21:all", "megatron_korthikanti2022:7"}).size() == 23);
  CHECK(refused(one, {"other.csv:16"}).find("'other.csv' is none of the files given") != std::string::npos);
}

TEST_CASE("a model with every key away from its default reads back to itself", "[validation][export]") {
  JobModel m;
  m.shape = {"a: b, c", 61, 7168, 18432, 128, 16, 192, 129280, true, true};
  m.seq = 4096, m.gated_mlp = false, m.dropout = true, m.experts = 256, m.top_k = 8, m.expert_ffn = 2048;
  m.shared_expert_ffn = 2048, m.dense_layers = 3, m.node_limit = 4, m.mtp_layers = 1;
  m.mla = {1536, 512, 128, 64, 128};
  m.routing.kind = MoeRoutingSpec::Kind::Hot, m.routing.hot_fraction = 0.1, m.routing.hot_load = 1.5;
  m.capacity_factor = 1.25;
  const auto src = cli::Source::parse("model: " + cli::format_model_yaml(m), "model.yaml");
  CHECK(cli::read_job_model(cli::Reader(src, src->root, ""), "model") == m);
  // Over a dense model without MLA, every key it adds; over itself, nothing.
  JobModel dense;
  dense.shape = {"dense", 32, 4096, 14336, 32, 8, 128, 128256, false, false};
  CHECK(cli::model_keys_lost_over(m, dense).empty());
  CHECK(cli::model_keys_lost_over(dense, m).size() == 12);  // device_limit 0 is not written
  // Over an MoE model with hot routing and a capacity factor, one with neither: their words.
  JobModel even = m;
  even.routing = {};
  even.capacity_factor.reset();
  CHECK(cli::model_keys_lost_over(even, m).empty());
  CHECK(cli::format_model_yaml_over(even, m) == "{routing: balanced, capacity_factor: none}");
  CHECK(cli::format_model_yaml_over(m, m) == "{}");
}
