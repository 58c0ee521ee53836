// libFuzzer's entry (built only with -DSTEPSIM_FUZZ=ON, see scripts/fuzz.sh).
#include <cstddef>
#include <cstdint>

#include "fuzz_entry.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  stepsim::fuzz::run_one(data, size);
  return 0;
}
