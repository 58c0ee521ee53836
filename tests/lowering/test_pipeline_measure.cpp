// measure's per-device peaks (memory, its time, resident micro-batches) against the same holds
// stated one by one and swept by the kernel (sweep_levels): an independent path from the ops the
// lowering recorded. Small steps are measured in one group of devices; larger ones in several,
// each gathered in its own pass over the ops.
#include <catch2/catch.hpp>

#include <random>

#include "random_pipeline_spec.hpp"
#include "schedules/lowering/pipeline/pipeline_spec.hpp"
#include "sim/level.hpp"

using namespace stepsim;

namespace {

// Per device d: memory on counter d (activations from the forward's start to the end of the op
// that frees them, messages from arrival to their consumer's start), resident micro-batches on
// counter devices + d.
std::vector<LevelCurve> swept(const PipelineRun& run) {
  const PipelineProgram& prog = *run.program;
  const OpGraph& g = prog.graph;
  const int p = prog.devices, m = prog.microbatches;
  std::vector<Hold> holds;
  for (int s = 0; s < run.plan.stages; ++s)
    for (int i = 0; i < m; ++i) {
      const auto& a = prog.activations[static_cast<std::size_t>(s) * m + i];
      const auto d = static_cast<std::uint32_t>(run.plan.device_of(s, i));
      holds.push_back({d, prog.activation_bytes[s], {a.from, OpPoint::Start}, {a.until, OpPoint::End}});
      holds.push_back({d + static_cast<std::uint32_t>(p), 1, {a.from, OpPoint::Start}, {a.until, OpPoint::End}});
    }
  for (OpId op = prog.first_send; op < prog.info.size(); ++op)
    if (PipelineProgram::is_send(prog.info.kind(op)))
      holds.push_back({static_cast<std::uint32_t>(prog.info[op].peer()), prog.message_bytes, {op, OpPoint::Done},
                       {prog.consumer_of(op), OpPoint::Start}});
  return sweep_levels(g, run.timeline, holds, 2 * static_cast<std::size_t>(p));
}

void check_against_sweep(const PipelineRun& run) {
  const auto curves = swept(run);
  const int p = run.program->devices;
  REQUIRE(run.stats.devices.size() == static_cast<std::size_t>(p));
  for (int d = 0; d < p; ++d) {
    INFO("device " << d);
    CHECK(run.stats.devices[d].peak_memory == curves[d].peak);
    CHECK(run.stats.devices[d].peak_memory_time == curves[d].peak_time);
    CHECK(run.stats.devices[d].peak_resident == curves[p + d].peak);
  }
}

}  // namespace

TEST_CASE("measure's peaks are those of the holds swept one by one, every schedule", "[schedules][memory]") {
  std::mt19937_64 rng(5);
  for (const std::string schedule :
       {"fill-drain", "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2", "dualpipe", "dualpipe-v"}) {
    for (int trial = 0; trial < 4; ++trial) {
      const PipelineSpec spec = test::spec_with(rng, schedule, 4, 16, schedule == "interleaved-1f1b" ? 2 : 0);
      INFO(schedule << " trial " << trial);
      check_against_sweep(simulate_pipeline(spec));
    }
  }
}

TEST_CASE("measure's peaks in several groups of devices", "[schedules][memory]") {
  // 1F1B at p = 8, m = 16,384: 491,528 ops and 720,896 memory changes, more than one group holds
  // (2^19 times, or half the op count), so the devices are gathered in two passes.
  std::mt19937_64 rng(6);
  const PipelineSpec spec = test::spec_with(rng, "1f1b", 8, 16384, 0);
  const PipelineRun run = simulate_pipeline(spec);
  REQUIRE(run.program->graph.op_count() == 491528);
  check_against_sweep(run);
  CHECK(run.stats.devices[0].peak_resident == 8);  // 1F1B: device d holds p - d micro-batches
  CHECK(run.stats.devices[7].peak_resident == 1);
}
