#pragma once
// Bytes on their way to a file, or kept in memory: a writer asks for room, writes through a cursor
// and commits what it wrote. Streamed, the bytes go out once 1 MiB has gathered, so memory does
// not grow with the output: a thread of the buffer's own writes each full MiB while the caller
// fills the next (two buffers), so that the kernel's copy into the page cache, a fifth of a large
// trace's cost, is not on the caller's time (where no thread can be started, the caller writes).
// The room is not zeroed: a trace event asks for a few hundred bytes and uses a third of them.
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

namespace stepsim::cli {

class SpillBuffer {
 public:
  explicit SpillBuffer(std::FILE* out = nullptr);  // null: in memory
  ~SpillBuffer();
  SpillBuffer(const SpillBuffer&) = delete;
  SpillBuffer& operator=(const SpillBuffer&) = delete;
  // Room for `bytes` at the end, valid until the next call.
  char* room(std::size_t bytes) {
    if (size_ + bytes <= capacity_ && !(file_ && size_ >= kSpill)) [[likely]]
      return data_.get() + size_;
    return make_room(bytes);
  }
  // Keeps what was written into the room up to `end`.
  void commit(const char* end) { size_ = static_cast<std::size_t>(end - data_.get()); }
  void append(std::string_view s);
  // In memory: everything written. Streamed: writes the rest, waits for every write and returns
  // ""; throws std::runtime_error if any write failed.
  std::string finish();
  int write_errno() const { return errno_; }  // of the first failed write, 0 if none (after finish)

 private:
  static constexpr std::size_t kSpill = std::size_t{1} << 20;  // streamed: written out from 1 MiB on
  class FileWriter;                                            // the writing thread
  struct Buffer {
    std::unique_ptr<char[]> data;
    std::size_t capacity = 0;
  };
  char* make_room(std::size_t bytes);
  void spill();
  void write_here();  // the buffer, on the caller's thread
  std::unique_ptr<char[]> data_;
  std::size_t size_ = 0, capacity_ = 0;
  std::FILE* file_;
  Buffer spare_;                        // streamed: the buffer being written, or free
  std::unique_ptr<FileWriter> writer_;  // streamed: started at the first spill
  bool no_thread_ = false;              // streamed: none could be started, the caller writes
  int errno_ = 0;
};

}  // namespace stepsim::cli
