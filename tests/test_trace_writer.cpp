// The trace writer's hand-written number formatting against fmt (what it replaced, byte for
// byte), and streaming: the spill buffer's thread writes every byte in order, a trace written to
// a file equals the one built in memory, and a failed write leaves no file behind and names the
// reason.
#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "cli/input/scenario.hpp"
#include "cli/reports/chrome_trace.hpp"
#include "cli/reports/perfetto_trace.hpp"
#include "cli/reports/pipeline_report.hpp"
#include "cli/reports/spill_buffer.hpp"

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

TEST_CASE("a trace streamed to a file equals the one built in memory", "[trace]") {
  auto sc = cli::load_scenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/book-pipeline.yaml",
                               {"pipeline.microbatches=600"});  // about 2.5 MB: the buffer spills
  const auto run = simulate_pipeline(*sc.pipeline);
  const std::string text = cli::chrome_trace_text(cli::pipeline_trace, run);
  REQUIRE(text.size() > 2'000'000);
  const auto path = (std::filesystem::temp_directory_path() / "stepsim_test_trace.json").string();
  cli::write_trace_file(path, cli::pipeline_trace, run);
  std::ifstream in(path, std::ios::binary);
  std::stringstream back;
  back << in.rdbuf();
  CHECK(back.str() == text);
  std::filesystem::remove(path);
}

TEST_CASE("a spill buffer streamed through its writing thread writes every byte in order", "[trace]") {
  // Pieces of 1 byte to 3 MiB (room grown past a spill, pieces crossing it), 9 MiB in all: each
  // byte says where it is, so a piece lost, repeated or written out of order shows.
  std::mt19937_64 rng(11);
  std::string expected;
  std::FILE* const f = std::tmpfile();
  REQUIRE(f != nullptr);
  {
    cli::SpillBuffer out(f);
    while (expected.size() < 9'000'000) {
      const std::size_t n = rng() % 8 == 0 ? 1 + rng() % 3'000'000 : 1 + rng() % 300;
      std::string piece(n, '\0');
      for (std::size_t i = 0; i < n; ++i) piece[i] = static_cast<char>((expected.size() + i) * 131 % 251);
      out.append(piece);
      expected += piece;
    }
    CHECK(out.finish().empty());
    CHECK(out.write_errno() == 0);
  }
  std::rewind(f);
  std::string back(expected.size() + 1, '\0');
  back.resize(std::fread(back.data(), 1, back.size(), f));
  std::fclose(f);
  CHECK(back.size() == expected.size());
  CHECK(back == expected);
}

TEST_CASE("a Perfetto trace streamed to a file equals the one built in memory", "[trace][perfetto]") {
  auto sc = cli::load_scenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/book-pipeline.yaml",
                               {"pipeline.microbatches=2000"});  // about 3 MB: the buffer spills twice
  const auto run = simulate_pipeline(*sc.pipeline);
  cli::PerfettoTrace in_memory;
  cli::pipeline_trace(in_memory, run);
  const std::string bytes = in_memory.finish();
  REQUIRE(bytes.size() > 2'500'000);
  const auto path = (std::filesystem::temp_directory_path() / "stepsim_test_trace.pftrace").string();
  cli::write_trace_file(path, cli::pipeline_trace, run);
  std::ifstream in(path, std::ios::binary);
  std::stringstream back;
  back << in.rdbuf();
  CHECK(back.str() == bytes);
  std::filesystem::remove(path);
}

TEST_CASE("a trace that cannot be written says why and leaves no file", "[trace]") {
  auto sc = cli::load_scenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/book-pipeline.yaml");
  const auto run = simulate_pipeline(*sc.pipeline);
  try {
    cli::write_trace_file("/nonexistent-dir/trace.json", cli::pipeline_trace, run);
    FAIL("no error");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "cannot write /nonexistent-dir/trace.json: No such file or directory");
  }
}

TEST_CASE("a trace to a full device fails with the system's reason", "[trace]") {
  if (!std::filesystem::exists("/dev/full")) return;
  // Small (written at the end) and large (spilled by the writing thread, the first failure kept).
  for (const char* microbatches : {"pipeline.microbatches=8", "pipeline.microbatches=2000"}) {
    INFO(microbatches);
    auto sc = cli::load_scenario(std::string(STEPSIM_SOURCE_DIR) + "/scenarios/book-pipeline.yaml", {microbatches});
    const auto run = simulate_pipeline(*sc.pipeline);
    try {
      cli::write_trace_file("/dev/full", cli::pipeline_trace, run);
      FAIL("no error");
    } catch (const std::runtime_error& e) {
      CHECK(std::string(e.what()) == "cannot write /dev/full: No space left on device");
    }
  }
}
