#include "cli/reports/spill_buffer.hpp"

#include <algorithm>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <utility>

#include <fmt/format.h>

namespace stepsim::cli {

// Writes one buffer at a time, in the order handed over; the caller waits only when it hands a
// buffer over before the last one is written.
class SpillBuffer::FileWriter {
 public:
  explicit FileWriter(std::FILE* file) : file_(file), thread_([this] { loop(); }) {}
  ~FileWriter() {
    {
      const std::lock_guard lock(mutex_);
      stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  // Waits until the last buffer handed over is written (its memory is then free again).
  void wait_idle() {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return pending_ == nullptr; });
  }
  // Waits until the last buffer handed over is written, then hands `data` over.
  void hand(const char* data, std::size_t size) {
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return pending_ == nullptr; });
      pending_ = data;
      pending_size_ = size;
    }
    changed_.notify_all();
  }
  int error() {  // errno of the first failed write, 0 if none
    const std::lock_guard lock(mutex_);
    return errno_;
  }

 private:
  void loop() {
    std::unique_lock lock(mutex_);
    for (;;) {
      changed_.wait(lock, [&] { return pending_ != nullptr || stop_; });
      if (pending_ == nullptr) return;  // stopped with nothing left
      const char* const data = pending_;
      const std::size_t size = pending_size_;
      lock.unlock();
      const bool ok = std::fwrite(data, 1, size, file_) == size;
      const int err = ok ? 0 : errno;
      lock.lock();
      if (!ok && errno_ == 0) errno_ = err != 0 ? err : EIO;
      pending_ = nullptr;
      changed_.notify_all();
    }
  }

  std::FILE* file_;
  std::mutex mutex_;
  std::condition_variable changed_;
  const char* pending_ = nullptr;
  std::size_t pending_size_ = 0;
  bool stop_ = false;
  int errno_ = 0;
  std::thread thread_;  // last: starts once the rest is made
};

SpillBuffer::SpillBuffer(std::FILE* out) : file_(out) {}

SpillBuffer::~SpillBuffer() = default;

// Hands the full buffer to the writer and carries on in the spare one: hand() returns once the
// writer has finished with the spare (the buffer handed over before), so it is free to fill.
// Where no thread can be started (a process or address-space limit), the caller writes it.
void SpillBuffer::spill() {
  if (!writer_ && !no_thread_) {
    try {
      writer_ = std::make_unique<FileWriter>(file_);
    } catch (const std::system_error&) { no_thread_ = true; }
  }
  if (!writer_) {
    write_here();
    return;
  }
  Buffer full{std::move(data_), capacity_};
  data_ = std::move(spare_.data);
  capacity_ = spare_.capacity;
  spare_ = std::move(full);
  writer_->hand(spare_.data.get(), size_);
  size_ = 0;
}

void SpillBuffer::write_here() {
  if (size_ != 0 && std::fwrite(data_.get(), 1, size_, file_) != size_ && errno_ == 0)
    errno_ = errno != 0 ? errno : EIO;
  size_ = 0;
}

char* SpillBuffer::make_room(std::size_t bytes) {
  if (file_ && size_ >= kSpill) spill();
  if (size_ + bytes > capacity_) {
    const std::size_t capacity = std::max({size_ + bytes, 2 * capacity_, kSpill + 4096});
    std::unique_ptr<char[]> grown(new char[capacity]);  // not zeroed
    if (size_ != 0) std::memcpy(grown.get(), data_.get(), size_);
    data_ = std::move(grown);
    capacity_ = capacity;
  }
  return data_.get() + size_;
}

void SpillBuffer::append(std::string_view s) {
  char* at = room(s.size());
  std::memcpy(at, s.data(), s.size());
  commit(at + s.size());
}

std::string SpillBuffer::finish() {
  if (!file_) {
    std::string out(data_.get(), size_);
    size_ = 0;
    return out;
  }
  if (writer_) {
    if (size_ != 0) spill();
    writer_->wait_idle();
    if (errno_ == 0) errno_ = writer_->error();
    writer_.reset();
  } else {
    write_here();  // under 1 MiB in all (no thread started), or no thread to be had
  }
  if (errno_ != 0) throw std::runtime_error(fmt::format("cannot write the trace: {}", std::strerror(errno_)));
  return {};
}

}  // namespace stepsim::cli
