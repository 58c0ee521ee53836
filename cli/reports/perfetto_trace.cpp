#include "cli/reports/perfetto_trace.hpp"

#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

namespace stepsim::cli {

namespace {

// Field numbers of perfetto.protos messages (protos/perfetto/trace/trace.proto,
// trace_packet.proto, track_event/track_descriptor.proto, track_event/track_event.proto,
// track_event/debug_annotation.proto, interned_data/interned_data.proto).
namespace trace {
constexpr std::uint32_t kPacket = 1;
}
namespace packet {
constexpr std::uint32_t kTimestamp = 8, kSequenceId = 10, kTrackEvent = 11, kInternedData = 12, kSequenceFlags = 13,
                        kPreviousPacketDropped = 42, kTrackDescriptor = 60, kFirstPacketOnSequence = 87;
constexpr std::uint64_t kIncrementalStateCleared = 1, kNeedsIncrementalState = 2;  // sequence_flags bits
}  // namespace packet
namespace track_descriptor {
constexpr std::uint32_t kUuid = 1, kName = 2, kParentUuid = 5, kCounter = 8, kChildOrdering = 11,
                        kSiblingOrderRank = 12;
constexpr std::uint64_t kExplicit = 3;  // ChildTracksOrdering
}  // namespace track_descriptor
namespace track_event {
constexpr std::uint32_t kCategoryIids = 3, kDebugAnnotations = 4, kType = 9, kNameIid = 10, kTrackUuid = 11, kName = 23,
                        kDoubleCounterValue = 44, kFlowIds = 47, kTerminatingFlowIds = 48;
constexpr std::uint64_t kSliceBegin = 1, kSliceEnd = 2, kInstant = 3, kCounter = 4;  // Type
}  // namespace track_event
namespace debug_annotation {
constexpr std::uint32_t kNameIid = 1, kBoolValue = 2, kIntValue = 4, kDoubleValue = 5, kStringValue = 6;
}
namespace interned_data {
constexpr std::uint32_t kEventCategories = 1, kEventNames = 2, kDebugAnnotationNames = 3;
constexpr std::uint32_t kIid = 1, kName = 2;  // EventCategory, EventName, DebugAnnotationName
}  // namespace interned_data

constexpr std::uint64_t kSequence = 1;  // every packet is on one sequence
constexpr std::uint64_t kRootUuid = 1;
// Tracks are looked up in tables indexed by pid and tid: reports number them from 0 or 1.
constexpr int kMaxPid = 1 << 24, kMaxTid = 1 << 20;
// Counters of a process are listed after its threads.
constexpr int kCounterRank = 1 << 30;
// Bytes a packet needs beyond its strings: tags, numbers, and the widening of nested lengths.
constexpr std::size_t kPacketRoom = 96;
constexpr std::size_t kPerArgRoom = 48;

[[gnu::always_inline]] inline void packet_header(ProtoCursor& c, Time ts, bool interned) {
  c.uint(packet::kTimestamp, static_cast<std::uint64_t>(ts));
  c.uint(packet::kSequenceId, kSequence);
  if (interned) c.uint(packet::kSequenceFlags, packet::kNeedsIncrementalState);
}

// One entry of InternedData: an EventCategory, EventName or DebugAnnotationName (all iid 1, name 2).
void interned_entry(ProtoCursor& c, std::uint32_t field, std::uint64_t iid, std::string_view name) {
  char* const e = c.open(field);
  c.uint(interned_data::kIid, iid);
  c.bytes(interned_data::kName, name);
  c.close(e);
}

// The head of a named TrackEvent: its type, track, category and name.
[[gnu::always_inline]] inline void event_head(ProtoCursor& c, std::uint64_t type, std::uint64_t track,
                                              std::uint64_t category, std::string_view name) {
  c.uint(track_event::kType, type);
  c.uint(track_event::kTrackUuid, track);
  c.uint(track_event::kCategoryIids, category);
  c.bytes(track_event::kName, name);
}

void check_track(int pid, int tid) {
  if (pid < 0 || pid > kMaxPid || tid < 0 || tid > kMaxTid)
    throw std::logic_error(fmt::format("Perfetto trace: track pid {} tid {} out of range", pid, tid));
}

// A string of at most 7 bytes as one word: its bytes, and its length in the top byte (so "F"
// and "F\0" differ).
std::uint64_t short_word(std::string_view s) {
  std::uint64_t w = static_cast<std::uint64_t>(s.size()) << 56;
  for (std::size_t i = 0; i < s.size(); ++i)
    w |= static_cast<std::uint64_t>(static_cast<unsigned char>(s[i])) << (8 * i);
  return w;
}
}  // namespace

std::pair<std::uint64_t, bool> PerfettoTrace::Interned::id(std::string_view s) {
  if (s.size() < 8) {
    const std::uint64_t w = short_word(s);
    for (const auto& [word, id] : short_)
      if (word == w) return {id, false};
  } else {
    for (std::size_t i = 0; i < strings_.size(); ++i)
      if (strings_[i] == s) return {i + 1, false};
  }
  strings_.emplace_back(s);
  if (s.size() < 8) short_.emplace_back(short_word(s), strings_.size());
  return {strings_.size(), true};  // iid 0 is not valid
}

std::pair<std::uint64_t, bool> PerfettoTrace::Interned::id_of_literal(std::string_view s) {
  // Fibonacci hashing of the address: literals a few bytes apart land in different slots.
  const auto h = (static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(s.data())) * 0x9e3779b97f4a7c15ull) >> 56;
  Slot& slot = by_address_[h];
  if (slot.data == s.data() && slot.size == s.size()) return {slot.id, false};
  const auto found = id(s);
  slot = {s.data(), s.size(), found.first};
  return found;
}

PerfettoTrace::PerfettoTrace() : PerfettoTrace(nullptr) {}

PerfettoTrace::PerfettoTrace(std::FILE* out) : out_(out), next_uuid_(kRootUuid) {
  // The sequence starts with cleared incremental state, so that interned ids can be defined.
  ProtoCursor c(out_.room(kPacketRoom));
  char* const at = c.open(trace::kPacket);
  c.uint(packet::kSequenceId, kSequence);
  c.uint(packet::kSequenceFlags, packet::kIncrementalStateCleared);
  c.uint(packet::kPreviousPacketDropped, 1);
  c.uint(packet::kFirstPacketOnSequence, 1);
  c.close(at);
  out_.commit(c.end());
  track(0, "stepsim", 0, true, false);
}

std::uint64_t PerfettoTrace::track(std::uint64_t parent, std::string_view name, int rank, bool group, bool counter) {
  const std::uint64_t uuid = next_uuid_++;
  ProtoCursor c(out_.room(kPacketRoom + name.size()));
  char* const p = c.open(trace::kPacket);
  c.uint(packet::kSequenceId, kSequence);
  char* const d = c.open(packet::kTrackDescriptor);
  c.uint(track_descriptor::kUuid, uuid);
  c.bytes(track_descriptor::kName, name);
  if (parent != 0) {
    c.uint(track_descriptor::kParentUuid, parent);
    c.int64(track_descriptor::kSiblingOrderRank, rank);
  }
  if (group) c.uint(track_descriptor::kChildOrdering, track_descriptor::kExplicit);
  if (counter) c.close(c.open(track_descriptor::kCounter));  // an empty CounterDescriptor
  c.close(d);
  c.close(p);
  out_.commit(c.end());
  return uuid;
}

void PerfettoTrace::process(int pid, std::string_view name, int sort_index) {
  check_track(pid, 0);
  if (static_cast<std::size_t>(pid) >= process_uuids_.size()) process_uuids_.resize(pid + 1, 0);
  if (process_uuids_[pid] != 0) return;  // named before: the first name stays
  process_uuids_[pid] = static_cast<std::uint32_t>(track(kRootUuid, name, sort_index, true, false));
}

void PerfettoTrace::thread(int pid, int tid, std::string_view name, int sort_index) {
  const std::uint64_t parent = process_uuid(pid);
  if (static_cast<std::size_t>(pid) >= thread_uuids_.size()) thread_uuids_.resize(pid + 1);
  auto& tids = thread_uuids_[pid];
  if (static_cast<std::size_t>(tid) >= tids.size()) tids.resize(tid + 1, 0);
  if (tids[tid] != 0) return;  // named before: the first name stays
  tids[tid] = static_cast<std::uint32_t>(track(parent, name, sort_index, false, false));
}

std::uint64_t PerfettoTrace::process_uuid(int pid) {
  check_track(pid, 0);
  if (static_cast<std::size_t>(pid) >= process_uuids_.size() || process_uuids_[pid] == 0)
    process(pid, fmt::format("process {}", pid), pid);  // a process no one named (as Chrome JSON allows)
  return process_uuids_[pid];
}

std::uint64_t PerfettoTrace::new_thread_uuid(int pid, int tid) {
  check_track(pid, tid);
  thread(pid, tid, fmt::format("thread {}", tid), tid);  // a thread no one named
  return thread_uuids_[pid][tid];
}

std::uint64_t PerfettoTrace::counter_uuid(int pid, std::string_view name, std::string_view series) {
  if (pid == last_counter_pid_ && name == last_counter_name_) return last_counter_uuid_;
  auto it = counters_.find(std::pair<int, std::string>(pid, name));  // after a change of counter only
  if (it == counters_.end()) {
    // Named as Perfetto names a Chrome JSON counter's series: "memory MiB".
    const std::uint64_t uuid = track(process_uuid(pid), fmt::format("{} {}", name, series),
                                     kCounterRank + static_cast<int>(counters_.size()), false, true);
    it = counters_.emplace(std::pair<int, std::string>(pid, name), uuid).first;
  }
  last_counter_pid_ = pid;
  last_counter_name_ = name;
  last_counter_uuid_ = it->second;
  return it->second;
}

void PerfettoTrace::slice(int pid, int tid, std::string_view name, std::string_view category, Time start, Time duration,
                          const TraceArgs& args, std::uint64_t starts_flow) {
  const std::uint64_t track = thread_uuid(pid, tid);
  std::size_t room = 2 * kPacketRoom + name.size() + 2 * category.size() + 10;  // 10: a flow id
  for (const TraceArg& a : args.items()) room += kPerArgRoom + 2 * a.key.size() + a.text.size();
  ProtoCursor c(out_.room(room));
  char* const p = c.open(trace::kPacket);
  packet_header(c, start, true);
  // New interned strings go in this packet, before the event that uses them.
  const auto [category_iid, new_category] = categories_.id(category);
  const std::span<const TraceArg> items = args.items();
  const std::uint64_t* key_iids = last_keys_.iids;
  bool new_key[TraceArgs::kMax] = {};
  bool any_new_key = false;
  if (!last_keys_.same(items)) {
    last_keys_.count = items.size();
    for (std::size_t i = 0; i < items.size(); ++i) {
      last_keys_.keys[i] = items[i].key;
      last_keys_.skipped[i] = items[i].kind == TraceArg::Kind::SliceTime;  // Perfetto shows the slice's times
      last_keys_.iids[i] = 0;
      if (last_keys_.skipped[i]) continue;
      std::tie(last_keys_.iids[i], new_key[i]) = names_.id_of_literal(items[i].key);
      any_new_key = any_new_key || new_key[i];
    }
  }
  if (new_category || any_new_key) {
    char* const in = c.open(packet::kInternedData);
    if (new_category) interned_entry(c, interned_data::kEventCategories, category_iid, category);
    for (std::size_t i = 0; i < items.size(); ++i)
      if (new_key[i]) interned_entry(c, interned_data::kDebugAnnotationNames, key_iids[i], items[i].key);
    c.close(in);
  }
  char* const e = c.open(packet::kTrackEvent);
  event_head(c, track_event::kSliceBegin, track, category_iid, name);
  for (std::size_t i = 0; i < args.items().size(); ++i) {
    const TraceArg& a = args.items()[i];
    if (a.kind == TraceArg::Kind::SliceTime) continue;
    char* const d = c.open(track_event::kDebugAnnotations);
    c.uint(debug_annotation::kNameIid, key_iids[i]);
    switch (a.kind) {
      case TraceArg::Kind::Int: c.int64(debug_annotation::kIntValue, a.number); break;
      case TraceArg::Kind::Bool: c.uint(debug_annotation::kBoolValue, a.number != 0 ? 1 : 0); break;
      case TraceArg::Kind::Real:
      case TraceArg::Kind::Real4: c.real(debug_annotation::kDoubleValue, a.real); break;
      case TraceArg::Kind::Millis: c.real(debug_annotation::kDoubleValue, to_ms(a.number)); break;
      case TraceArg::Kind::Text: c.bytes(debug_annotation::kStringValue, a.text); break;
      case TraceArg::Kind::SliceTime: break;
    }
    c.close(d);
  }
  if (starts_flow != 0) c.fixed64(track_event::kFlowIds, starts_flow);
  c.close(e);
  c.close(p);
  // The END: same track, no interned strings.
  char* const q = c.open(trace::kPacket);
  packet_header(c, start + duration, false);
  char* const f = c.open(packet::kTrackEvent);
  c.uint(track_event::kType, track_event::kSliceEnd);
  c.uint(track_event::kTrackUuid, track);
  c.close(f);
  c.close(q);
  out_.commit(c.end());
}

// The arrow's start is on the slice that named it (slice's starts_flow): here only its end, an
// instant on the track it reaches.
void PerfettoTrace::flow(std::uint64_t id, std::string_view name, int, int, Time, int to_pid, int to_tid, Time to_ts) {
  constexpr std::string_view kFlowCategory = "flow";
  const std::uint64_t track = thread_uuid(to_pid, to_tid);
  ProtoCursor c(out_.room(kPacketRoom + name.size() + kFlowCategory.size()));
  char* const p = c.open(trace::kPacket);
  packet_header(c, to_ts, true);
  // An arrow's name is one of a few (a pipeline's are all "message"): interned, as its category.
  const auto [category_iid, new_category] = categories_.id_of_literal(kFlowCategory);
  const auto [name_iid, new_name] = event_names_.id(name);
  if (new_category || new_name) {
    char* const in = c.open(packet::kInternedData);
    if (new_category) interned_entry(c, interned_data::kEventCategories, category_iid, kFlowCategory);
    if (new_name) interned_entry(c, interned_data::kEventNames, name_iid, name);
    c.close(in);
  }
  char* const e = c.open(packet::kTrackEvent);
  c.uint(track_event::kType, track_event::kInstant);
  c.uint(track_event::kTrackUuid, track);
  c.uint(track_event::kCategoryIids, category_iid);
  c.uint(track_event::kNameIid, name_iid);
  c.fixed64(track_event::kTerminatingFlowIds, id);
  c.close(e);
  c.close(p);
  out_.commit(c.end());
}

void PerfettoTrace::counter(int pid, std::string_view name, Time ts, std::string_view series, double value) {
  const std::uint64_t track = counter_uuid(pid, name, series);
  ProtoCursor c(out_.room(kPacketRoom));
  char* const p = c.open(trace::kPacket);
  packet_header(c, ts, false);
  char* const e = c.open(packet::kTrackEvent);
  c.uint(track_event::kType, track_event::kCounter);
  c.uint(track_event::kTrackUuid, track);
  c.real(track_event::kDoubleCounterValue, value);
  c.close(e);
  c.close(p);
  out_.commit(c.end());
}

std::string PerfettoTrace::finish() { return out_.finish(); }

}  // namespace stepsim::cli
