#pragma once
// The one entry point of the fuzz target (stepsim_fuzz, libFuzzer) and of its replay
// (stepsim_fuzz_replay, the fuzz.regressions test): a scenario's bytes through the loader and
// `stepsim validate`'s checks. Bad input must end as one of stepsim's input errors (exit 2 or 3);
// anything else -- another exception, a message over several lines -- aborts, so that libFuzzer
// keeps the input and the replay fails.
#include <cstddef>
#include <cstdint>

namespace stepsim::fuzz {

void run_one(const std::uint8_t* data, std::size_t size);

}  // namespace stepsim::fuzz
