#pragma once
// Protocol Buffers' wire format written through a cursor into room the caller made large enough
// (protobuf.dev/programming-guides/encoding): varints, tags, 64-bit fixed fields, length-delimited
// bytes and nested messages. A nested message's length is known only at its end: open() leaves
// one byte for it and close() widens that in place when the message outgrew 127 bytes (the
// caller's room must then hold 9 bytes more per open message).
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace stepsim::cli {

class ProtoCursor {
 public:
  static constexpr std::size_t kVarint = 10;  // the longest varint (a 64-bit value)

  explicit ProtoCursor(char* at) : p_(at) {}

  [[gnu::always_inline]] void varint(std::uint64_t v) {
    while (v >= 0x80) {
      *p_++ = static_cast<char>(static_cast<std::uint8_t>(v) | 0x80);
      v >>= 7;
    }
    *p_++ = static_cast<char>(v);
  }
  // Field `field` of wire type VARINT (int32/int64 as two's complement, uint64, bool, enum).
  [[gnu::always_inline]] void uint(std::uint32_t field, std::uint64_t v) {
    tag(field, kVarintWire);
    varint(v);
  }
  void int64(std::uint32_t field, std::int64_t v) { uint(field, static_cast<std::uint64_t>(v)); }
  // Wire type I64: fixed64 and double, little-endian.
  void fixed64(std::uint32_t field, std::uint64_t v) {
    tag(field, kI64Wire);
    for (int i = 0; i < 8; ++i) *p_++ = static_cast<char>(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  void real(std::uint32_t field, double v) {
    std::uint64_t bits = 0;
    static_assert(sizeof bits == sizeof v);
    std::memcpy(&bits, &v, sizeof bits);
    fixed64(field, bits);
  }
  // Wire type LEN: a string or bytes.
  [[gnu::always_inline]] void bytes(std::uint32_t field, std::string_view s) {
    tag(field, kLenWire);
    varint(s.size());
    std::memcpy(p_, s.data(), s.size());
    p_ += s.size();
  }
  // A nested message: open() returns where its length goes, close() writes it.
  [[gnu::always_inline]] char* open(std::uint32_t field) {
    tag(field, kLenWire);
    return p_++;
  }
  [[gnu::always_inline]] void close(char* length_at) {
    const auto size = static_cast<std::uint64_t>(p_ - (length_at + 1));
    if (size < 0x80) [[likely]] {
      *length_at = static_cast<char>(size);
      return;
    }
    widen(length_at, size);
  }

  char* end() const { return p_; }

 private:
  static constexpr std::uint32_t kVarintWire = 0, kI64Wire = 1, kLenWire = 2;
  [[gnu::always_inline]] void tag(std::uint32_t field, std::uint32_t wire) {
    varint((static_cast<std::uint64_t>(field) << 3) | wire);
  }
  // A message of 128 bytes or more: its length takes more than the one byte open() left.
  [[gnu::noinline]] void widen(char* length_at, std::uint64_t size) {
    char* const body = length_at + 1;
    std::size_t width = 1;
    for (std::uint64_t v = size; v >= 0x80; v >>= 7) ++width;
    std::memmove(body + width - 1, body, size);
    p_ = length_at;
    varint(size);
    p_ += size;
  }

  char* p_;
};

}  // namespace stepsim::cli
