#include "cli/commands/reuse_freed_memory.hpp"

#include <malloc.h>

namespace stepsim::cli {

void reuse_freed_memory() {
  constexpr int kMiB = 1 << 20;
  mallopt(M_MMAP_THRESHOLD, 32 * kMiB);   // blocks up to 32 MiB come from (and go back to) the heap
  mallopt(M_TRIM_THRESHOLD, 256 * kMiB);  // and the heap keeps up to 256 MiB free at its top
}

}  // namespace stepsim::cli
