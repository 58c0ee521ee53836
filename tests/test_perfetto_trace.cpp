// The Perfetto trace against the Chrome JSON trace of the same run, written by the CLI: the
// protobuf is decoded here by a reader of its own (not the writer's code) into tracks, slices,
// arguments, flows and counters, which must be the JSON's, event for event. And the wire format's
// corner cases: long varints, negative numbers, nested messages past 127 bytes.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/reports/proto_cursor.hpp"
#include "cli/reports/trace_writer.hpp"
#include "test_files.hpp"

using namespace stepsim;

namespace {

// One field of a protobuf message: its number, wire type, and value (varint / I64) or bytes (LEN).
struct Field {
  std::uint32_t number = 0;
  int wire = 0;
  std::uint64_t value = 0;
  std::string_view bytes;
};

std::uint64_t read_varint(std::string_view s, std::size_t& at) {
  std::uint64_t v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    REQUIRE(at < s.size());
    const auto b = static_cast<std::uint8_t>(s[at++]);
    v |= static_cast<std::uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return v;
  }
  FAIL("varint longer than 10 bytes");
  return 0;
}

std::vector<Field> fields(std::string_view s) {
  std::vector<Field> out;
  std::size_t at = 0;
  while (at < s.size()) {
    const std::uint64_t tag = read_varint(s, at);
    Field f;
    f.number = static_cast<std::uint32_t>(tag >> 3);
    f.wire = static_cast<int>(tag & 7);
    switch (f.wire) {
      case 0: f.value = read_varint(s, at); break;
      case 1:
        REQUIRE(at + 8 <= s.size());
        for (int i = 0; i < 8; ++i)
          f.value |= static_cast<std::uint64_t>(static_cast<std::uint8_t>(s[at + i])) << (8 * i);
        at += 8;
        break;
      case 2: {
        const std::uint64_t n = read_varint(s, at);
        REQUIRE(at + n <= s.size());
        f.bytes = s.substr(at, n);
        at += n;
        break;
      }
      default: FAIL("unexpected wire type " << f.wire);
    }
    out.push_back(f);
  }
  return out;
}

double as_double(std::uint64_t bits) {
  double d = 0;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

// What both formats say, in the JSON's terms: times in ns, args as JSON values.
struct Events {
  std::multiset<std::tuple<std::string, std::string, std::string, std::string, Time, Time, std::string>> slices;
  std::multiset<std::tuple<std::string, std::string, Time, double>> counters;  // process, "name series", ts, value
  // from process, thread, ts, to process, thread, ts, the arrow's name
  std::multiset<std::tuple<std::string, std::string, Time, std::string, std::string, Time, std::string>> flows;
  std::vector<std::pair<std::string, int>> process_order;  // name, sort index
  int arrows_from_slices = 0;                              // Perfetto: arrows a slice's BEGIN starts
};

Time ns_of_us(double us) { return static_cast<Time>(std::llround(us * 1000.0)); }

// A number as both formats can be compared: the protobuf carries doubles unrounded where the
// JSON has three decimals of milliseconds, and the JSON writes a whole double (10.0 s) as 10.
nlohmann::json canonical_number(double v) { return std::round(v * 1000.0) / 1000.0; }

// start_ms and end_ms restate the slice's own times for JSON readers; Perfetto shows them itself
// and the protobuf leaves them out (checked against ts and dur here instead).
std::string canonical_args(const nlohmann::json& args, Time ts, Time dur) {
  nlohmann::json out = nlohmann::json::object();
  for (auto it = args.begin(); it != args.end(); ++it) {
    if (it.key() == "start_ms" || it.key() == "end_ms") {
      const double ms = static_cast<double>(it.key() == "start_ms" ? ts : ts + dur) / 1e6;
      CHECK(std::abs(it->get<double>() - ms) <= 0.0005 + 1e-9);
      continue;
    }
    out[it.key()] = it->is_number() ? canonical_number(it->get<double>()) : *it;
  }
  return out.dump();
}

Events from_json(const std::string& text) {
  const auto doc = nlohmann::json::parse(text);
  std::map<int, std::string> processes;
  std::map<std::pair<int, int>, std::string> threads;
  std::map<int, int> process_rank;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] != "M") continue;
    const int pid = e["pid"], tid = e["tid"];
    if (e["name"] == "process_name") processes[pid] = e["args"]["name"];
    if (e["name"] == "process_sort_index") process_rank[pid] = e["args"]["sort_index"];
    if (e["name"] == "thread_name") threads[{pid, tid}] = e["args"]["name"];
  }
  Events ev;
  std::map<std::uint64_t, std::tuple<std::string, std::string, Time>> flow_start;
  for (const auto& e : doc["traceEvents"]) {
    const std::string ph = e["ph"];
    const int pid = e["pid"];
    const std::string process = processes.count(pid) ? processes[pid] : fmt::format("process {}", pid);
    if (ph == "X") {
      const int tid = e["tid"];
      const std::string thread = threads.count({pid, tid}) ? threads[{pid, tid}] : fmt::format("thread {}", tid);
      const Time ts = ns_of_us(e["ts"]), dur = ns_of_us(e["dur"]);
      ev.slices.insert({process, thread, e["name"], e["cat"], ts, dur, canonical_args(e["args"], ts, dur)});
    } else if (ph == "C") {
      const auto& a = e["args"];
      ev.counters.insert({process, fmt::format("{} {}", e["name"].get<std::string>(), a.begin().key()),
                          ns_of_us(e["ts"]), a.begin()->get<double>()});
    } else if (ph == "s" || ph == "f") {
      const std::string thread = threads[{pid, e["tid"].get<int>()}];
      if (ph == "s") {
        flow_start[e["id"]] = {process, thread, ns_of_us(e["ts"])};
      } else {
        const auto& [p0, t0, ts0] = flow_start.at(e["id"]);
        ev.flows.insert({p0, t0, ts0, process, thread, ns_of_us(e["ts"]), e["name"]});
      }
    }
  }
  for (const auto& [pid, name] : processes) ev.process_order.emplace_back(name, process_rank[pid]);
  return ev;
}

struct Track {
  std::string name;
  std::uint64_t parent = 0;
  std::int64_t rank = 0;
  bool counter = false;
};

nlohmann::json annotation_value(const std::vector<Field>& a) {
  for (const Field& f : a) {
    switch (f.number) {
      case 2: return f.value != 0;                                                               // bool_value
      case 4: return canonical_number(static_cast<double>(static_cast<std::int64_t>(f.value)));  // int_value
      case 5: return canonical_number(as_double(f.value));                                       // double_value
      case 6: return std::string(f.bytes);                                                       // string_value
    }
  }
  FAIL("a debug annotation without a value");
  return nullptr;
}

Events from_perfetto(const std::string& bytes) {
  std::map<std::uint64_t, Track> tracks;
  std::map<std::uint64_t, std::string> categories, event_names, keys;
  std::map<std::uint64_t, std::vector<std::tuple<Time, std::string, std::string, std::string>>> open;  // per track
  std::map<std::uint64_t, std::pair<std::uint64_t, Time>> flow_start;
  Events ev;
  const auto group_of = [&](std::uint64_t track) { return tracks.at(tracks.at(track).parent).name; };
  bool first = true;
  for (const Field& packet : fields(bytes)) {
    REQUIRE(packet.number == 1);
    std::map<std::uint32_t, std::vector<Field>> p;
    for (const Field& f : fields(packet.bytes)) p[f.number].push_back(f);
    REQUIRE(p[10].size() == 1);  // trusted_packet_sequence_id
    CHECK(p[10][0].value == 1);
    if (first) {
      REQUIRE(p[13].size() == 1);
      CHECK((p[13][0].value & 1) == 1);  // SEQ_INCREMENTAL_STATE_CLEARED
      first = false;
      continue;
    }
    for (const Field& interned : p[12]) {
      for (const Field& entry : fields(interned.bytes)) {
        std::map<std::uint32_t, Field> e;
        for (const Field& f : fields(entry.bytes)) e[f.number] = f;
        auto& table = entry.number == 1 ? categories : entry.number == 2 ? event_names : keys;
        REQUIRE((entry.number >= 1 && entry.number <= 3));
        CHECK(table.count(e[1].value) == 0);
        table[e[1].value] = std::string(e[2].bytes);
      }
    }
    for (const Field& d : p[60]) {
      std::map<std::uint32_t, Field> t;
      for (const Field& f : fields(d.bytes)) t[f.number] = f;
      CHECK(tracks.count(t[1].value) == 0);
      tracks[t[1].value] = {std::string(t[2].bytes), t[5].value, static_cast<std::int64_t>(t[12].value),
                            t.count(8) != 0};
    }
    for (const Field& event : p[11]) {
      std::map<std::uint32_t, std::vector<Field>> e;
      for (const Field& f : fields(event.bytes)) e[f.number].push_back(f);
      const std::uint64_t type = e[9].at(0).value, track = e[11].at(0).value;
      REQUIRE(tracks.count(track) == 1);
      const Time ts = static_cast<Time>(p[8].at(0).value);
      if (type != 2 && type != 4) {  // events with a category use interned ids: the flag says so
        REQUIRE(p[13].size() == 1);
        CHECK((p[13][0].value & 2) == 2);
      }
      if (type == 1 && !e[47].empty()) {  // an arrow starting on this slice's BEGIN
        flow_start[e[47][0].value] = {track, ts};
        ++ev.arrows_from_slices;
      }
      if (type == 1) {
        nlohmann::json args = nlohmann::json::object();
        for (const Field& a : e[4]) {
          const auto fs = fields(a.bytes);
          REQUIRE(fs.at(0).number == 1);
          args[keys.at(fs[0].value)] = annotation_value(fs);
        }
        open[track].emplace_back(ts, std::string(e[23].at(0).bytes), categories.at(e[3].at(0).value), args.dump());
      } else if (type == 2) {
        REQUIRE(!open[track].empty());
        const auto [start, name, cat, args] = open[track].back();
        open[track].pop_back();
        ev.slices.insert({group_of(track), tracks[track].name, name, cat, start, ts - start, args});
      } else if (type == 3) {
        if (!e[47].empty()) flow_start[e[47][0].value] = {track, ts};
        if (!e[48].empty()) {
          const auto [from, ts0] = flow_start.at(e[48][0].value);
          // The name inline (23) or interned (10).
          const std::string name = !e[23].empty() ? std::string(e[23][0].bytes) : event_names.at(e[10].at(0).value);
          ev.flows.insert({group_of(from), tracks[from].name, ts0, group_of(track), tracks[track].name, ts, name});
        }
      } else if (type == 4) {
        CHECK(tracks[track].counter);
        ev.counters.insert({group_of(track), tracks[track].name, ts, as_double(e[44].at(0).value)});
      }
    }
  }
  for (const auto& [track, stack] : open) CHECK(stack.empty());
  for (const auto& [uuid, t] : tracks)
    if (t.parent == 1) ev.process_order.emplace_back(t.name, static_cast<int>(t.rank));
  return ev;
}

std::string run_cli(const std::string& args, const std::string& out) {
  const std::string cmd = fmt::format("{} {} --trace {} > /dev/null 2>&1", STEPSIM_BINARY, args, out);
  REQUIRE(std::system(cmd.c_str()) == 0);
  return test::read_file(out);
}

}  // namespace

TEST_CASE("a Perfetto trace says what the Chrome JSON trace of the same run says", "[trace][perfetto]") {
  const auto dir = std::filesystem::temp_directory_path() / fmt::format("stepsim-perfetto-{}", ::getpid());
  std::filesystem::create_directories(dir);
  const std::vector<std::string> runs = {
      "run scenarios/book-pipeline.yaml --schedule interleaved-1f1b --set pipeline.virtual_stages=2",
      "run scenarios/book-pipeline.yaml --schedule zb-h1",
      "run scenarios/book-pipeline.yaml --set pipeline.link.latency=0ms",  // arrows whose ends have one time
      "run scenarios/dp-buckets.yaml",
      "run scenarios/zero3-design-48.yaml",
      "run scenarios/rl-sync-async.yaml",
      "run scenarios/rl-weight-distribution.yaml",
      "run scenarios/rl-shared-card.yaml",
      "run scenarios/moe-two-experts.yaml",
      "run scenarios/job-fsdp-8.yaml",
      "job scenarios/job-async-save.yaml",
      "job scenarios/job-input.yaml",
      // compare --trace: every row's run, a process group each
      "compare scenarios/book-pipeline.yaml --schedules 1f1b,zb-h1,interleaved-1f1b",
      "compare scenarios/dp-buckets.yaml",
      "compare scenarios/moe-two-experts.yaml",
      "compare scenarios/job-llama70b-64xh100.yaml",
  };
  for (const auto& args : runs) {
    INFO(args);
    const Events json = from_json(run_cli(args, (dir / "t.json").string()));
    const std::string bytes = run_cli(args, (dir / "t.pftrace").string());
    const Events proto = from_perfetto(bytes);
    CHECK(!json.slices.empty());
    CHECK(proto.slices == json.slices);
    CHECK(proto.counters == json.counters);
    CHECK(proto.flows == json.flows);
    // A pipeline's messages start on their sends' slices, each ending at an instant.
    if (args.find("book-pipeline") != std::string::npos) {
      CHECK(proto.flows.size() > 40);
      CHECK(proto.arrows_from_slices == static_cast<int>(proto.flows.size()));
    }
    CHECK(proto.process_order == json.process_order);
    CHECK(bytes.size() < run_cli(args, (dir / "t.json").string()).size());
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("the trace format follows the file name", "[trace][perfetto]") {
  CHECK(cli::trace_format_of("step.pftrace") == cli::TraceFormat::Perfetto);
  CHECK(cli::trace_format_of("a/b.perfetto-trace") == cli::TraceFormat::Perfetto);
  CHECK(cli::trace_format_of("x.pb") == cli::TraceFormat::Perfetto);
  CHECK(cli::trace_format_of("x.json") == cli::TraceFormat::ChromeJson);
  CHECK(cli::trace_format_of(".pftrace.json") == cli::TraceFormat::ChromeJson);
  CHECK(cli::trace_format_of("-") == cli::TraceFormat::ChromeJson);
}

TEST_CASE("protobuf wire format: varints, negatives, doubles, nested lengths past 127 bytes", "[trace][perfetto]") {
  std::string room(4096, '\0');
  cli::ProtoCursor c(room.data());
  c.uint(1, 0);
  c.uint(2, 127);
  c.uint(3, 128);
  c.uint(4, ~std::uint64_t{0});
  c.int64(5, -1);
  c.real(6, 0.1);
  c.fixed64(7, 0x0102030405060708ull);
  char* outer = c.open(8);
  char* inner = c.open(1);
  c.bytes(2, std::string(300, 'x'));
  c.close(inner);
  c.bytes(3, "after");
  c.close(outer);
  c.bytes(9, "end");
  const std::string_view s(room.data(), static_cast<std::size_t>(c.end() - room.data()));
  // Reference bytes of the first fields (protobuf.dev encoding guide: 150 -> 96 01).
  CHECK(s.substr(0, 7) == std::string_view("\x08\x00\x10\x7f\x18\x80\x01", 7));
  const auto f = fields(s);
  REQUIRE(f.size() == 9);
  CHECK(f[0].value == 0);
  CHECK(f[1].value == 127);
  CHECK(f[2].value == 128);
  CHECK(f[3].value == ~std::uint64_t{0});
  CHECK(static_cast<std::int64_t>(f[4].value) == -1);
  CHECK(as_double(f[5].value) == 0.1);
  CHECK(f[6].value == 0x0102030405060708ull);
  const auto nested = fields(f[7].bytes);
  REQUIRE(nested.size() == 2);
  const auto innermost = fields(nested[0].bytes);
  REQUIRE(innermost.size() == 1);
  CHECK(innermost[0].bytes == std::string(300, 'x'));
  CHECK(nested[1].bytes == "after");
  CHECK(f[8].bytes == "end");
}
