#pragma once
// Perfetto's own trace format (a protobuf `Trace`: TracePacket messages with TrackDescriptor and
// TrackEvent; protos/perfetto/trace/ in github.com/google/perfetto), which ui.perfetto.dev and
// trace_processor open. About 40 % of the Chrome JSON's bytes for the same events.
//
// The tracks form one tree under a root "stepsim" track: a group per process, the threads and
// counters of a process under it, each level in the callers' sort order (child_ordering
// EXPLICIT with sibling_order_rank: Perfetto ignores ranks under a process descriptor, so
// processes are plain named tracks). A slice is a BEGIN and an END event; its arguments are
// debug annotations (not those that restate its own start and end: TraceArg::Kind::SliceTime),
// categories and argument names interned on the one packet sequence. A flow arrow starts on the
// BEGIN event of the slice that names it (its flow_ids) and ends at an instant event on its other
// track, inside the slice it reaches (terminating_flow_ids).
#include <cstdint>
#include <cstdio>
#include <map>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli/reports/proto_cursor.hpp"
#include "cli/reports/spill_buffer.hpp"
#include "cli/reports/trace_writer.hpp"

namespace stepsim::cli {

class PerfettoTrace final : public TraceWriter {
 public:
  PerfettoTrace();                         // in memory
  explicit PerfettoTrace(std::FILE* out);  // streamed to `out` (not closed here)
  void process(int pid, std::string_view name, int sort_index) override;
  void thread(int pid, int tid, std::string_view name, int sort_index) override;
  using TraceWriter::slice;
  void slice(int pid, int tid, std::string_view name, std::string_view category, Time start, Time duration,
             const TraceArgs& args, std::uint64_t starts_flow) override;
  void flow(std::uint64_t id, std::string_view name, int from_pid, int from_tid, Time from_ts, int to_pid, int to_tid,
            Time to_ts) override;
  void counter(int pid, std::string_view name, Time ts, std::string_view series, double value) override;
  std::string finish() override;
  int write_errno() const override { return out_.write_errno(); }

 private:
  // Interned strings of one kind (categories, argument names; a trace has a few dozen): id by
  // content; keys of arguments (string literals) are also remembered by address, which is most
  // lookups.
  class Interned {
   public:
    // The id of `s`, and whether it is new (to be written in this packet's interned_data).
    std::pair<std::uint64_t, bool> id(std::string_view s);
    std::pair<std::uint64_t, bool> id_of_literal(std::string_view s);

   private:
    std::vector<std::string> strings_;  // id - 1 -> string
    // Strings of up to 7 bytes (most categories) also as one word each, compared at once.
    std::vector<std::pair<std::uint64_t, std::size_t>> short_;  // (word, id) of short strings
    struct Slot {
      const char* data = nullptr;
      std::size_t size = 0;
      std::uint64_t id = 0;
    };
    std::vector<Slot> by_address_ = std::vector<Slot>(256);  // indexed by an 8-bit hash
  };

  // Track uuids are numbered densely from 2 (1 is the root), so that events carry short ones.
  std::uint64_t process_uuid(int pid);
  std::uint64_t thread_uuid(int pid, int tid) {  // every slice asks: a declared track is found inline
    if (static_cast<std::size_t>(pid) < thread_uuids_.size()) {
      const auto& tids = thread_uuids_[static_cast<std::size_t>(pid)];
      if (static_cast<std::size_t>(tid) < tids.size() && tids[static_cast<std::size_t>(tid)] != 0) [[likely]]
        return tids[static_cast<std::size_t>(tid)];
    }
    return new_thread_uuid(pid, tid);
  }
  std::uint64_t new_thread_uuid(int pid, int tid);  // checked, named "thread N" if no one named it
  std::uint64_t counter_uuid(int pid, std::string_view name, std::string_view series);
  // Writes a track descriptor; returns its uuid.
  std::uint64_t track(std::uint64_t parent, std::string_view name, int rank, bool group, bool counter);

  // The argument keys of the last slice and their ids: slices of one kind come in runs with the
  // same literals, whose ids are then not looked up again.
  struct LastKeys {
    std::size_t count = TraceArgs::kMax + 1;  // none yet
    std::string_view keys[TraceArgs::kMax];
    bool skipped[TraceArgs::kMax] = {};  // SliceTime: not written
    std::uint64_t iids[TraceArgs::kMax] = {};
    bool same(std::span<const TraceArg> items) const {
      if (items.size() != count) return false;
      for (std::size_t i = 0; i < count; ++i)
        if (items[i].key.data() != keys[i].data() || items[i].key.size() != keys[i].size() ||
            (items[i].kind == TraceArg::Kind::SliceTime) != skipped[i])
          return false;
      return true;
    }
  };

  SpillBuffer out_;
  Interned categories_, names_, event_names_;  // names_: of arguments; event_names_: of arrows
  LastKeys last_keys_;
  std::vector<std::vector<std::uint32_t>> thread_uuids_;  // [pid][tid], 0: not declared yet
  std::vector<std::uint32_t> process_uuids_;              // [pid], 0: not declared yet
  std::uint64_t next_uuid_;
  std::map<std::pair<int, std::string>, std::uint64_t> counters_;
  std::uint64_t last_counter_uuid_ = 0;
  int last_counter_pid_ = -1;
  std::string last_counter_name_;
};

}  // namespace stepsim::cli
