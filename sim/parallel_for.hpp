#pragma once
// Independent work on several threads, with results that do not depend on how many.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <system_error>
#include <thread>
#include <vector>

namespace stepsim {

// Threads to use when the user did not say: every core.
inline unsigned all_cores() { return std::max(1u, std::thread::hardware_concurrency()); }

// The most threads one call makes: twice the cores, and never over 1,024. More than the cores
// gain nothing on this work, and each takes a stack out of the address space the work needs
// (`-j 1000000` under `ulimit -v 1500000` left the simulations none).
inline unsigned max_threads() { return std::min(2 * all_cores(), 1024u); }

// The threads parallel_for makes for n pieces of work on up to `jobs`: what a report names.
inline unsigned threads_for_work(std::size_t n, unsigned jobs) {
  return static_cast<unsigned>(std::clamp<std::size_t>(n, 1, std::clamp(jobs, 1u, max_threads())));
}

// Runs work(i) for every i in [0, n) on up to `jobs` threads (the calling thread among them),
// each taking the next unclaimed index; work(i) writes its result at index i, so the results
// are the same whatever the thread count. An exception from work(i) does not end its thread:
// after every index has run, the one of the smallest i is rethrown (again the same whatever the
// thread count).
template <class F>
void parallel_for(std::size_t n, unsigned jobs, F&& work) {
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  const auto loop = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        work(i);
      } catch (...) { errors[i] = std::current_exception(); }
    }
  };
  const unsigned threads = threads_for_work(n, jobs);
  std::vector<std::thread> pool;
  pool.reserve(threads - 1);
  for (unsigned t = 1; t < threads; ++t) {
    // A thread the system will not make (its limits: `-j 100000` under `ulimit -v`) leaves the
    // work to those it made; the results do not depend on how many there are.
    try {
      pool.emplace_back(loop);
    } catch (const std::system_error&) { break; }
  }
  loop();
  for (auto& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace stepsim
