// stepsim_bench: the simulator's speed (Google Benchmark). Run from the repository root (the
// suite benchmark reads bench/suites/); scripts/bench.sh builds Release and runs everything.
#include <benchmark/benchmark.h>

BENCHMARK_MAIN();
