#include "cli/bench/bench_runner.hpp"

#include <algorithm>
#include <mutex>
#include <numeric>
#include <string>
#include <unordered_map>

#include <fmt/format.h>

#include "sim/parallel_for.hpp"

namespace stepsim::cli {

VariantResult simulate_variant(const BenchVariant& variant, const PipelineSpec& spec) {
  VariantResult r;
  r.index = variant.index;
  r.settings = variant.settings;
  try {
    const PipelineRun run = simulate_pipeline(spec);
    const PipelineStats& st = run.stats;
    r.step_time = st.step_time;
    r.bubble_fraction = st.bubble_fraction;
    r.forward_messages = st.forward_messages;
    r.backward_messages = st.backward_messages;
    for (const auto& d : st.devices) {
      r.peak_memory.push_back(d.peak_memory);
      r.peak_resident.push_back(d.peak_resident);
    }
  } catch (const SpecError& e) {
    r.status = VariantStatus::Skipped;
    r.reason = e.what();
  } catch (const DeadlockError& e) {
    r.status = VariantStatus::Failed;
    r.reason = fmt::format("cannot finish: {}", e.what());
  } catch (const GraphError& e) {
    r.status = VariantStatus::Failed;
    r.reason = fmt::format("cannot run: {}", e.what());
  } catch (const OpLimitError& e) {
    r.status = VariantStatus::Failed;
    r.reason = fmt::format("too large: {} (--max-ops / --max-memory)", e.what());
  } catch (const std::exception& e) {
    r.status = VariantStatus::Failed;
    r.reason = fmt::format("internal error: {}", e.what());
  }
  return r;
}

std::vector<PreparedVariant> prepare_variants(const BenchSuite& suite, const std::vector<std::size_t>& indices,
                                              const std::vector<std::string>& sets, unsigned jobs) {
  const std::size_t n = indices.size();
  std::vector<PreparedVariant> out(n);
  parallel_for(n, jobs, [&](std::size_t i) { out[i].variant = variant_at(suite, indices[i]); });
  // Variants that differ only in their time ratio have the same overrides, so the same
  // scenario: it is read once, by the first variant with those overrides (a failing read then
  // names the variant a read of each would have named first), and copied to the others.
  std::vector<std::size_t> reader(n);
  std::unordered_map<std::string, std::size_t> first;
  for (std::size_t i = 0; i < n; ++i) {
    std::string key;
    for (const auto& o : out[i].variant.overrides) (key += o) += '\0';
    reader[i] = first.try_emplace(std::move(key), i).first->second;
  }
  std::vector<PipelineSpec> read(n);
  parallel_for(n, jobs, [&](std::size_t i) {
    if (reader[i] == i) read[i] = variant_scenario(suite, out[i].variant, sets);
  });
  parallel_for(n, jobs, [&](std::size_t i) {
    out[i].spec = read[reader[i]];
    if (out[i].variant.time_ratio) apply_time_ratio(out[i].spec, *out[i].variant.time_ratio);
  });
  return out;
}

std::vector<VariantResult> run_variants(const std::vector<PreparedVariant>& variants, unsigned jobs,
                                        const BenchProgress& progress, const BenchFinish& finish) {
  std::vector<VariantResult> results(variants.size());
  // Largest first (stages x micro-batches x chunks, ties by index), so that the last variants a
  // worker takes are small ones and the workers finish together: a suite lists its largest
  // variants last (the axes' values grow), and one of them left alone at the end ran on one core.
  const auto size = [&](std::size_t i) {  // in double: three counts up to 2^31 each (a hostile suite)
    const PipelineSpec& s = variants[i].spec;
    return static_cast<double>(s.stages) * s.microbatches * std::max(1, s.virtual_stages);
  };
  std::vector<std::size_t> order(variants.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return size(a) > size(b); });
  std::mutex report;
  std::size_t done = 0;
  parallel_for(variants.size(), jobs, [&](std::size_t k) {
    const std::size_t i = order[k];
    results[i] = simulate_variant(variants[i].variant, variants[i].spec);
    if (finish) finish(i, results[i]);
    if (progress) {
      std::lock_guard lock(report);
      progress(++done, results[i]);
    }
  });
  return results;
}

}  // namespace stepsim::cli
