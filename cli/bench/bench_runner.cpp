#include "cli/bench/bench_runner.hpp"

#include <atomic>
#include <exception>
#include <mutex>
#include <thread>

#include <fmt/format.h>

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

namespace {
// Runs work(i) for i in [0, n) on `jobs` threads, each taking the next unclaimed index.
template <class F>
void parallel_for(std::size_t n, unsigned jobs, F&& work) {
  std::atomic<std::size_t> next{0};
  const auto loop = [&] {
    for (std::size_t i = next++; i < n; i = next++) work(i);
  };
  const unsigned t = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(std::max<std::size_t>(1, n))));
  std::vector<std::thread> threads;
  for (unsigned k = 1; k < t; ++k) threads.emplace_back(loop);
  loop();
  for (auto& th : threads) th.join();
}
}  // namespace

std::vector<PreparedVariant> prepare_variants(const BenchSuite& suite, const std::vector<std::size_t>& indices,
                                              const std::vector<std::string>& sets, unsigned jobs) {
  std::vector<PreparedVariant> out(indices.size());
  std::vector<std::exception_ptr> errors(indices.size());
  parallel_for(indices.size(), jobs, [&](std::size_t i) {
    try {
      BenchVariant v = variant_at(suite, indices[i]);
      PipelineSpec spec = variant_spec(suite, v, sets);
      out[i] = {std::move(v), std::move(spec)};
    } catch (...) { errors[i] = std::current_exception(); }
  });
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return out;
}

std::vector<VariantResult> run_variants(const std::vector<PreparedVariant>& variants, unsigned jobs,
                                        const BenchProgress& progress) {
  std::vector<VariantResult> results(variants.size());
  std::atomic<std::size_t> next{0};
  std::mutex report;
  std::size_t done = 0;
  // Each worker takes the next unclaimed variant and writes only its own slot.
  const auto work = [&] {
    for (std::size_t i = next++; i < variants.size(); i = next++) {
      results[i] = simulate_variant(variants[i].variant, variants[i].spec);
      if (progress) {
        std::lock_guard lock(report);
        progress(++done, results[i]);
      }
    }
  };
  const unsigned n = std::max(1u, std::min<unsigned>(jobs, static_cast<unsigned>(variants.size())));
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < n; ++t) threads.emplace_back(work);
  work();
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace stepsim::cli
