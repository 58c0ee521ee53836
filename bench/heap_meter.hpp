#pragma once
// Heap accounting for the benchmarks: this executable replaces the global operator new/delete
// with counting versions (heap_meter.cpp), so a benchmark can read how many bytes were live at
// the peak of a region. Counts malloc's usable size, i.e. what the allocator really hands out.
#include <cstddef>

namespace stepsim::bench {

// Bytes currently allocated through operator new.
std::size_t heap_live();
// Starts a region: the peak is reset to the current live bytes.
void heap_reset_peak();
// Highest live bytes since the last heap_reset_peak().
std::size_t heap_peak();

}  // namespace stepsim::bench
