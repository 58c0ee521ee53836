// Units and scenario errors: every error names the file, the line and the key.
#include <catch2/catch.hpp>

#include "cli/input/input.hpp"
#include "cli/input/scenario.hpp"
#include "models/units.hpp"

using namespace stepsim;
using stepsim::cli::InputError;

TEST_CASE("units parse exactly", "[units]") {
  CHECK(parse_duration("10ms") == 10 * kMillisecond);
  CHECK(parse_duration("1.5us") == 1500);
  CHECK(parse_duration("16.38s") == 16'380'000'000);
  CHECK(parse_duration("2min") == 120 * kSecond);
  // Written out, as `30 days` is.
  CHECK(parse_duration("2 hours") == 7200 * kSecond);
  CHECK(parse_duration("1 hour") == 3600 * kSecond);
  CHECK(parse_duration("90 minutes") == 5400 * kSecond);
  CHECK(parse_duration("1 minute") == 60 * kSecond);
  CHECK(parse_duration("5 seconds") == 5 * kSecond);
  CHECK(parse_duration("1 second") == kSecond);
  CHECK(parse_duration("1 day") == 86400 * kSecond);
  CHECK(parse_bytes("230MiB") == 230LL * 1024 * 1024);
  CHECK(parse_bytes("1.24GB") == 1'240'000'000);
  CHECK(parse_bytes("1e3B") == 1000);
  CHECK(parse_bandwidth("32GB/s") == 32'000'000'000);
  CHECK(parse_bandwidth("200Gbit/s") == 25'000'000'000);
  std::string err;
  CHECK_FALSE(parse_duration("10", &err));
  CHECK(err.find("no unit") != std::string::npos);
  CHECK_FALSE(parse_duration("10 parsecs", &err));
  CHECK(err.find("unknown time unit") != std::string::npos);
  CHECK_FALSE(parse_bandwidth("32GB", &err));
  CHECK(transfer_time(1'000'000, 100'000'000) == 10 * kMillisecond);  // section 7: 1 MB at 1e8 B/s
  // Past int128 on the way (UBSan found 1e30GB = 10^30 x 10^9 overflowing): too large, not wrapped.
  CHECK_FALSE(parse_bytes("1e30GB", &err));
  CHECK(err == "'1e30GB' is too large");
  CHECK_FALSE(parse_bytes("1267650600228229401496703205376e30B", &err));  // 2^100 x 10^30
  CHECK(err == "'1267650600228229401496703205376e30B' is too large");
  CHECK(parse_bytes("0.000000000000000000000000000000000000000001TiB") == 0);  // 10^-42: den past int128
  CHECK(parse_bytes("0.5B") == 1);  // halves round up
  CHECK(parse_bytes("0.49B") == 0);
  CHECK(parse_bytes("9223372036854775807B") == INT64_MAX);
  CHECK_FALSE(parse_bytes("9223372036854775808B", &err));
}

TEST_CASE("counts parse exactly: written out, with an exponent or a suffix K, M, B, T", "[units][counts]") {
  using P = ParsedWhole::Problem;
  const auto value = [](std::string_view t) {
    const ParsedWhole w = parse_whole(t);
    return w.problem == P::None ? w.value : -999;
  };
  const auto problem = [](std::string_view t) { return parse_whole(t).problem; };
  CHECK(value("4096") == 4096);
  CHECK(value("+4") == 4);
  CHECK(value("2.2e12") == 2'200'000'000'000);
  CHECK(value("15T") == 15'000'000'000'000);
  CHECK(value("2.2T") == 2'200'000'000'000);
  CHECK(value("500B") == 500'000'000'000);
  CHECK(value("8K") == 8'000);
  CHECK(value("1.5K") == 1'500);
  CHECK(value("7M") == 7'000'000);
  CHECK(value("0.000001M") == 1);
  CHECK(value("1000.000") == 1000);
  CHECK(value("-1.5K") == -1'500);
  CHECK(value("0e99999") == 0);
  // Exact past a double's 53 bits: 2^53 + 1 is not rounded to 2^53.
  CHECK(value("9007199254740993") == 9'007'199'254'740'993);
  CHECK(value("9223372036854775807") == INT64_MAX);
  CHECK(value("-9223372036854775808") == INT64_MIN);
  CHECK(value("9.223372036854775807e18") == INT64_MAX);
  // Fractions, as 1000.1 is one: 1.0001K is 1000.1.
  for (const char* t : {"1000.1", "1.0001K", "2.5", "1e-3", "0.5K", ".5"}) {
    INFO(t);
    CHECK(problem(t) == (std::string_view(t) == "0.5K" ? P::None : P::NotWhole));
  }
  for (const char* t : {"", "K", "-", "e3", "1e", "1.5KB", "0x10", "1_000", "inf", "nan", "two", "3x", " 5", "1eK"}) {
    INFO(t);
    CHECK(problem(t) == P::NotWhole);
  }
  // An exponent and a suffix together are named as such (the reader says: one or the other).
  for (const char* t : {"1e3K", "1e-3K", "8e+12T"}) {
    INFO(t);
    CHECK(problem(t) == P::Both);
  }
  // Lower case and G are no count's suffixes, and said so.
  for (const char* t : {"15t", "8k", "2m", "500b", "2G", "2g"}) {
    INFO(t);
    CHECK(problem(t) == P::Suffix);
  }
  for (const char* t : {"9999999T", "9223372036854775808", "-9223372036854775809", "1e19", "1e99999", "10000000T"}) {
    INFO(t);
    CHECK(problem(t) == P::OutOfRange);
  }
  CHECK(value("9223372T") == 9'223'372'000'000'000'000);
}

namespace {
const char* kGood = R"(name: t
pipeline:
  stages: 2
  microbatches: 4
  schedule: 1f1b
  time: {forward: 1ms, backward: 2ms}
  link: {latency: 1us}
  memory: {activation: [1MiB, 2MiB], message: 1KiB}
)";

std::string error_of(const std::string& text, const std::vector<std::string>& sets = {}) {
  try {
    auto sc = cli::parse_scenario(text, "s.yaml", sets);
    simulate_pipeline(*sc.pipeline);
  } catch (const InputError& e) { return e.what(); } catch (const SpecError& e) {
    return std::string("spec: ") + e.what();
  }
  return "";
}

std::string replace(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  REQUIRE(at != std::string::npos);
  return text.replace(at, from.size(), to);
}
}  // namespace

TEST_CASE("a good scenario loads", "[scenario]") {
  auto sc = cli::parse_scenario(kGood, "s.yaml");
  REQUIRE(sc.pipeline);
  CHECK(sc.pipeline->backward == std::vector<Time>{2 * kMillisecond, 2 * kMillisecond});
  CHECK(sc.pipeline->activation[1] == 2 * 1024 * 1024);
  CHECK(error_of(kGood).empty());
}

TEST_CASE("each class of bad input gets file, line and key", "[scenario][errors]") {
  CHECK(error_of(replace(kGood, "schedule: 1f1b", "schedule: 1f1c")) ==
        "s.yaml:5: pipeline.schedule: unknown schedule '1f1c'; did you mean '1f1b'?");
  CHECK(error_of(replace(kGood, "schedule: 1f1b", "schedule: banana"))
            .rfind("s.yaml:5: pipeline.schedule: unknown schedule 'banana' (known:", 0) == 0);
  CHECK(error_of(replace(kGood, "forward: 1ms", "forward: 1")) ==
        "s.yaml:6: pipeline.time.forward: '1' has no unit (write it like 10ms or 1.5us)");
  CHECK(error_of(replace(kGood, "forward: 1ms", "forward: -1ms")) ==
        "s.yaml:6: pipeline.time.forward: '-1ms' is negative");
  CHECK(error_of(replace(kGood, "microbatches: 4", "microbatches: 0")) ==
        "s.yaml:4: pipeline.microbatches: must be at least 1 (got 0)");
  CHECK(error_of(replace(kGood, "stages: 2", "stages: two")) ==
        "s.yaml:3: pipeline.stages: 'two' is not a whole number");
  CHECK(error_of(replace(kGood, "[1MiB, 2MiB]", "[1MiB, 2MiB, 3MiB]")) ==
        "s.yaml:8: pipeline.memory.activation: per-stage list has 3 values, expected 2 (one per stage)");
  CHECK(error_of(replace(kGood, "microbatches: 4", "microbatchs: 4")) ==
        "s.yaml:4: pipeline.microbatchs: unknown key; did you mean 'microbatches'?");
  CHECK(error_of(replace(kGood, "  microbatches: 4\n", "")) == "s.yaml:3: pipeline.microbatches: missing (required)");
  CHECK(error_of(replace(kGood, "latency: 1us", "latency: 1 lightyear")).find("unknown time unit 'lightyear'") !=
        std::string::npos);
  CHECK(error_of("pipeline: [1, 2]").find("s.yaml:1: pipeline: expected a map of keys") == 0);
  CHECK(error_of("pipeline: {stages: 2").find("s.yaml:1: not valid YAML") == 0);
  CHECK(error_of("name: x\n").find("no section to simulate") != std::string::npos);
}

TEST_CASE("set overrides any key and errors say so", "[scenario]") {
  auto sc = cli::parse_scenario(kGood, "s.yaml", {"pipeline.microbatches=16", "pipeline.link.latency=2ms"});
  CHECK(sc.pipeline->microbatches == 16);
  CHECK(sc.pipeline->latency == 2 * kMillisecond);
  CHECK(error_of(kGood, {"pipeline.microbatches=-3"}) == "--set: pipeline.microbatches: must be at least 1 (got -3)");
  CHECK(error_of(kGood, {"pipeline.microbatches"}).find("expected key.path=value") != std::string::npos);
}

TEST_CASE("a count key takes 2.2e12 and K, M, B, T, with the plain number's checks", "[scenario][counts]") {
  auto sc = cli::parse_scenario(replace(kGood, "microbatches: 4", "microbatches: 1K"), "s.yaml");
  CHECK(sc.pipeline->microbatches == 1000);
  sc = cli::parse_scenario(kGood, "s.yaml", {"pipeline.microbatches=1.5K"});
  CHECK(sc.pipeline->microbatches == 1500);
  sc = cli::parse_scenario(kGood, "s.yaml", {"pipeline.microbatches=8e1"});
  CHECK(sc.pipeline->microbatches == 80);
  CHECK(error_of(replace(kGood, "microbatches: 4", "microbatches: 1.0001K")) ==
        "s.yaml:4: pipeline.microbatches: '1.0001K' is not a whole number");
  CHECK(error_of(replace(kGood, "microbatches: 4", "microbatches: 1000.1")) ==
        "s.yaml:4: pipeline.microbatches: '1000.1' is not a whole number");
  CHECK(error_of(replace(kGood, "microbatches: 4", "microbatches: 3T")) ==
        "s.yaml:4: pipeline.microbatches: '3T' is too large (at most 2147483647)");
  CHECK(error_of(replace(kGood, "microbatches: 4", "microbatches: 3000000000")) ==
        "s.yaml:4: pipeline.microbatches: '3000000000' is too large (at most 2147483647)");
  CHECK(error_of(replace(kGood, "microbatches: 4", "microbatches: -2K")) ==
        "s.yaml:4: pipeline.microbatches: must be at least 1 (got -2000)");
  CHECK(error_of(kGood, {"pipeline.microbatches=8k"}) ==
        "--set: pipeline.microbatches: '8k' is not a whole number (a count's suffixes are K, M, B and T, in capitals)");
  // A byte size keeps its own units: 1KB is not a count, 1K not a size.
  CHECK(error_of(replace(kGood, "message: 1KiB", "message: 1K")) ==
        "s.yaml:8: pipeline.memory.message: '1K': unknown size unit 'K' (known: B, KB, MB, GB, TB, KiB, MiB, GiB, TiB, "
        "bit, Kbit, Mbit, Gbit, Tbit)");
  std::string error;
  CHECK(cli::whole_number("15T", 1, INT64_MAX, error) == 15'000'000'000'000);
  CHECK_FALSE(cli::whole_number("9999999T", 1, INT64_MAX, error));
  CHECK(error == "'9999999T' is too large (at most 9223372036854775807)");
}

TEST_CASE("a plain --set value becomes the scalar the YAML parser would give", "[scenario]") {
  // Words and numbers skip the parser (cli::is_plain_word); the node must be the one it would make.
  for (const std::string text : {"8", "1f1b", "1ms", "-2.5e-3", "+4", ".5", "zb-h1", "true", "A_b.c", "0x1F"}) {
    INFO(text);
    REQUIRE(cli::is_plain_word(text));
    const YAML::Node parsed = YAML::Load(text);
    CHECK(parsed.IsScalar());
    CHECK(parsed.Scalar() == text);
  }
  // What YAML reads as something else, or may: left to the parser.
  for (const std::string text :
       {"",      "null",  "Null", "NULL", "~",  "-",  "---",  "...", ".inf", "-.inf", "a: b", "[1, 2]", "'x'",
        "\"x\"", "1:2:1", "a b",  "#c",   "&a", "*a", "!t x", "@x",  "`x",   "%x",    "|",    ">"}) {
    INFO(text);
    CHECK_FALSE(cli::is_plain_word(text));
  }
  CHECK_FALSE(cli::is_plain_word(std::string(65, '1')));  // long values go through the parser's checks
  // The same scenario either way, and key paths split on every dot.
  auto sc = cli::parse_scenario(kGood, "s.yaml", {"pipeline.microbatches=16", "pipeline.schedule=zb-h1"});
  CHECK(sc.pipeline->microbatches == 16);
  CHECK(error_of(kGood, {"pipeline.microbatches=null"}).find("pipeline.microbatches") != std::string::npos);
  CHECK(error_of(kGood, {"pipeline..microbatches=4"}) == "--set: pipeline..microbatches: empty part in key path");
  CHECK(error_of(kGood, {".pipeline=4"}) == "--set: .pipeline: empty part in key path");
}

TEST_CASE("custom schedules: missing, duplicate and misplaced actions are named", "[scenario][custom]") {
  const std::string base = R"(pipeline:
  stages: 2
  microbatches: 2
  time: {forward: 1ms, backward: 2ms}
)";
  const std::string ok = base + "  actions: [\"0F0 0F1 0B0 0B1\", \"1F0 1B0 1F1 1B1\"]\n";
  CHECK(error_of(ok).empty());
  const std::string dup = base + "  actions: [\"0F0 0F1 0B0 0B1 0B1\", \"1F0 1B0 1F1 1B1\"]\n";
  CHECK(error_of(dup).find("device 0: 0B1 is listed twice") != std::string::npos);
  const std::string missing = base + "  actions: [\"0F0 0F1 0B0\", \"1F0 1B0 1F1 1B1\"]\n";
  CHECK(error_of(missing).find("0B1 is missing (device 0)") != std::string::npos);
  const std::string wrong = base + "  actions: [\"0F0 0F1 0B0 0B1 1F0\", \"1B0 1F1 1B1\"]\n";
  CHECK(error_of(wrong).find("device 0: 1F0 belongs on device 1") != std::string::npos);
  const std::string bad = base + "  actions: [\"0F0 0X1\", \"1F0\"]\n";
  CHECK(error_of(bad).find("s.yaml:5: pipeline.actions[0]: '0X1': unknown op letter 'X'") == 0);
}

TEST_CASE("a custom order that deadlocks names the stuck ops", "[scenario][custom]") {
  // Device 1 insists on micro-batch 1 first; device 0 will not send it before 0B0, which needs 1B0.
  const std::string text = R"(pipeline:
  stages: 2
  microbatches: 2
  time: {forward: 1ms, backward: 2ms}
  actions: ["0F0 0B0 0F1 0B1", "1F1 1B1 1F0 1B0"]
)";
  auto sc = cli::parse_scenario(text, "s.yaml");
  try {
    simulate_pipeline(*sc.pipeline);
    FAIL("expected a deadlock");
  } catch (const DeadlockError& e) {
    const std::string what = e.what();
    CHECK(what.find("d0 compute stuck at 0B0 waiting on send 1B0 d1->d0") != std::string::npos);
    CHECK(what.find("d1 compute stuck at 1F1 waiting on send 0F1 d0->d1") != std::string::npos);
  }
}
