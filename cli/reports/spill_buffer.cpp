#include "cli/reports/spill_buffer.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>

#include <fmt/format.h>

namespace stepsim::cli {

SpillBuffer::SpillBuffer(std::FILE* out) : file_(out) {}

void SpillBuffer::spill() {
  if (std::fwrite(data_.get(), 1, size_, file_) != size_ && !failed_) {
    failed_ = true;
    errno_ = errno;
  }
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
  spill();
  if (failed_) throw std::runtime_error(fmt::format("cannot write the trace: {}", std::strerror(errno_)));
  return {};
}

}  // namespace stepsim::cli
