// The trace writer's hand-written number formatting against fmt (what it replaced, byte for
// byte), and streaming: the spill buffer's thread writes every byte in order, a trace written to
// a file equals the one built in memory, and a failed write leaves no file behind and names the
// reason. And a comparison's rows in one trace (compare --trace).
#include <catch2/catch.hpp>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/input/scenario.hpp"
#include "cli/reports/chrome_trace.hpp"
#include "cli/reports/pipeline_report.hpp"
#include "cli/reports/spill_buffer.hpp"
#include "cli/reports/trace_rows.hpp"
#include "cli/reports/trace_writer.hpp"

using namespace stepsim;

TEST_CASE("the trace cursor prints milliseconds as fmt's {:.3f} of to_ms, microseconds exactly", "[trace]") {
  std::mt19937_64 rng(3);
  std::vector<Time> times = {0,
                             1,
                             499,
                             500,
                             501,
                             999,
                             1000,
                             1500,
                             2500,
                             999'999'500,
                             123'456'789'500,
                             99'999'999'999'999,
                             100'000'000'000'000,
                             4'000'000'000'000'500,
                             -1500,
                             -7};
  for (int i = 0; i < 200'000; ++i) {
    const Time scale = Time{1} << (rng() % 62);
    Time t = static_cast<Time>(rng() % static_cast<std::uint64_t>(scale));
    if (i % 4 == 0) t = t / 1000 * 1000 + 500;  // exact halves: the fallback path
    times.push_back(t);
  }
  const auto ms3 = [](Time t) {
    char buf[64];
    cli::TextCursor c(buf);
    c.millis3(t);
    return std::string(buf, c.end());
  };
  const auto us3 = [](Time t) {
    char buf[64];
    cli::TextCursor c(buf);
    c.micros3(t);
    return std::string(buf, c.end());
  };
  int mismatches = 0;
  for (Time t : times) {
    const std::string ours = ms3(t), theirs = fmt::format("{:.3f}", to_ms(t));
    if (ours != theirs && ++mismatches < 5) CHECK(ours == theirs);
    // Microseconds: the integer division, exactly, whatever the size.
    const Time a = t < 0 ? -t : t;
    const std::string us = fmt::format("{}{}.{:03}", t < 0 ? "-" : "", a / 1000, a % 1000);
    if (us3(t) != us && ++mismatches < 5) CHECK(us3(t) == us);
  }
  CHECK(mismatches == 0);
  CHECK(ms3(1'234'567) == "1.235");
  CHECK(us3(1'234'567) == "1234.567");
  CHECK(us3(5) == "0.005");
  // Escaping: plain runs copied, quotes, backslashes and control characters escaped.
  CHECK(cli::json_escape("F mb0") == "F mb0");
  CHECK(cli::json_escape("a\"b\\c\nd\te\x01") == "a\\\"b\\\\c\\nd\\te\\u0001");
}

TEST_CASE("a trace streamed to a file equals the one built in memory, in either format", "[trace][perfetto]") {
  // 2,000 micro-batches: about 8 MB of JSON and 3 MB of Perfetto, so the buffer spills to its
  // writing thread several times.
  auto sc = cli::load_scenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/book-pipeline.yaml",
                               {"pipeline.microbatches=2000"});
  const auto run = simulate_pipeline(*sc.pipeline);
  for (const char* name : {"stepsim_test_trace.json", "stepsim_test_trace.pftrace"}) {
    INFO(name);
    const auto path = (std::filesystem::temp_directory_path() / name).string();
    const auto in_memory = cli::make_trace_writer(cli::trace_format_of(path), nullptr);
    cli::pipeline_trace(*in_memory, run);
    const std::string bytes = in_memory->finish();
    REQUIRE(bytes.size() > 2'500'000);
    cli::write_trace_file(path, cli::pipeline_trace, run);
    std::ifstream in(path, std::ios::binary);
    std::stringstream back;
    back << in.rdbuf();
    CHECK(back.str() == bytes);
    std::filesystem::remove(path);
  }
}

namespace {
// A file that is slow to write (2 ms a call, glibc's fopencookie), so that the buffer is filled
// faster than its thread writes it: each hand-over then waits for the write before it.
struct SlowFile {
  std::string bytes;
  int writes = 0;
};
ssize_t slow_write(void* cookie, const char* data, std::size_t size) {
  auto* f = static_cast<SlowFile*>(cookie);
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  f->bytes.append(data, size);
  ++f->writes;
  return static_cast<ssize_t>(size);
}
}  // namespace

TEST_CASE("a spill buffer streamed through its writing thread writes every byte in order", "[trace]") {
  // Pieces of 1 byte to 3 MiB (room grown past a spill, pieces crossing it), 12 MB in all: each
  // byte says where it is, so a piece lost, repeated or written out of order shows.
  std::string expected(12'000'000, '\0');
  for (std::size_t i = 0; i < expected.size(); ++i) expected[i] = static_cast<char>(i * 131 % 251);
  SlowFile slow;
  std::FILE* const f = fopencookie(&slow, "w", cookie_io_functions_t{nullptr, slow_write, nullptr, nullptr});
  REQUIRE(f != nullptr);
  std::setvbuf(f, nullptr, _IONBF, 0);  // each of the buffer's writes one call
  {
    cli::SpillBuffer out(f);
    std::mt19937_64 cut(5);
    for (std::size_t at = 0; at < expected.size();) {
      const std::size_t n = std::min(expected.size() - at, cut() % 8 == 0 ? 1 + cut() % 3'000'000 : 1 + cut() % 300);
      out.append(std::string_view(expected).substr(at, n));
      at += n;
    }
    CHECK(out.finish().empty());
    CHECK(out.write_errno() == 0);
  }
  std::fclose(f);
  CHECK(slow.writes >= 5);  // a MiB or more a write (a piece larger than that grows the room)
  CHECK(slow.bytes.size() == expected.size());
  CHECK(slow.bytes == expected);
}

namespace {
// What writing the book pipeline's trace (with `set`) to `path` throws, "" if nothing.
std::string trace_error(const std::string& path, const std::vector<std::string>& set = {}) {
  auto sc = cli::load_scenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/book-pipeline.yaml", set);
  const auto run = simulate_pipeline(*sc.pipeline);
  try {
    cli::write_trace_file(path, cli::pipeline_trace, run);
  } catch (const std::runtime_error& e) { return e.what(); }
  return "";
}
}  // namespace

TEST_CASE("a trace that cannot be written says why and leaves no file", "[trace]") {
  CHECK(trace_error("/nonexistent-dir/trace.json") ==
        "/nonexistent-dir/trace.json: no folder /nonexistent-dir to write it in");
  CHECK(!std::filesystem::exists("/nonexistent-dir"));
}

TEST_CASE("a trace to a full device fails with the system's reason", "[trace]") {
  if (!std::filesystem::exists("/dev/full")) return;
  // Small (written at the end) and large (spilled by the writing thread, the first failure kept).
  CHECK(trace_error("/dev/full", {"pipeline.microbatches=8"}) == "cannot write /dev/full: No space left on device");
  CHECK(trace_error("/dev/full", {"pipeline.microbatches=2000"}) == "cannot write /dev/full: No space left on device");
}

TEST_CASE("rows of a comparison in one trace: each run's processes under its row, apart", "[trace]") {
  // Two rows describing the same small run: a process of two tracks, a slice starting arrow 1
  // that ends on the other track, a counter.
  const auto describe = [](std::size_t, cli::TraceWriter& w) {
    w.process(0, "device 0", 0);
    w.process(5, "device 1", 1);
    w.thread(0, 1, "compute", 0);
    w.thread(5, 1, "compute", 0);
    w.slice(0, 1, "F0", "forward", 0, 1000, cli::TraceArgs(), 1);
    w.slice(5, 1, "F0", "forward", 2000, 1000, cli::TraceArgs());
    w.flow(1, "activation", 0, 1, 1000, 5, 1, 2000);
    w.counter(5, "memory", 0, "bytes", 42);
  };
  const nlohmann::json trace =
      nlohmann::json::parse(cli::chrome_trace_text(cli::trace_of_rows({"1f1b", "zb-h1"}, describe)));
  std::map<int, std::string> process;
  std::map<int, int> order;
  std::set<std::uint64_t> flows;
  int slices = 0, counters = 0;
  for (const auto& e : trace.at("traceEvents")) {
    const std::string ph = e.at("ph");
    if (ph == "M" && e.at("name") == "process_name") process[e.at("pid")] = e.at("args").at("name");
    if (ph == "M" && e.at("name") == "process_sort_index") order[e.at("pid")] = e.at("args").at("sort_index");
    if (ph == "X") ++slices;
    if (ph == "C") ++counters;
    if (ph == "s" || ph == "f") flows.insert(e.at("id").get<std::uint64_t>());
  }
  // Pids dense across the rows in the order they appear; each row's processes listed after the
  // last row's (65,536 places a row); each row's arrow 1 an arrow of its own.
  CHECK(process == std::map<int, std::string>{
                       {0, "1f1b: device 0"}, {1, "1f1b: device 1"}, {2, "zb-h1: device 0"}, {3, "zb-h1: device 1"}});
  CHECK(order == std::map<int, int>{{0, 0}, {1, 1}, {2, 65536}, {3, 65537}});
  CHECK(flows == std::set<std::uint64_t>{1, (std::uint64_t{1} << 40) + 1});
  CHECK(slices == 4);
  CHECK(counters == 2);
}
