// Fuzz target: http::ResponseParser, the bytes a server under test sends back (status line,
// fields, Content-Length, chunked bodies with extensions and trailers, interim 1xx responses,
// close-delimited bodies, pipelined responses).
//
// Input: byte 0 picks the framing (bit 0: the request was HEAD) and the split (bits 1-7: feed
// in pieces of 1..128 bytes); the rest is the byte stream of one connection. The stream is
// parsed twice, whole and in pieces, response after response until an error or the end, then
// on_eof(). Checks (abort on failure):
//   - feed() never consumes more than it was given, and a completed response consumed >= 1 byte;
//   - how the bytes are split changes nothing: the same responses (state, status, body bytes,
//     keep-alive, error text, and where in the stream each ended) and the same final state; the
//     one-step paths of whole input are held to the byte loop of split input this way;
//   - a completed status is 100..999, and a response completes only with a final state.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "http/response_parser.h"

namespace {

using knee::http::ResponseParser;

struct Outcome {
  ResponseParser::State state;
  int status;
  uint64_t body_bytes;
  bool keep_alive;
  std::string_view error;  // a static string of the parser's
  size_t at;               // stream bytes consumed when it ended
  bool operator==(const Outcome&) const = default;
};

void check(bool ok) {
  if (!ok) std::abort();
}

// Parses `stream` as one connection's responses, feeding at most `piece` bytes per call.
std::vector<Outcome> parse_stream(std::string_view stream, bool head, size_t piece) {
  std::vector<Outcome> out;
  ResponseParser parser;
  parser.reset(head);
  size_t pos = 0;
  while (pos < stream.size()) {
    const size_t len = std::min(piece, stream.size() - pos);
    const size_t used = parser.feed(stream.data() + pos, len);
    check(used <= len);
    pos += used;
    const ResponseParser::State s = parser.state();
    if (s == ResponseParser::State::kNeedMore) {
      check(used == len);
      continue;
    }
    out.push_back(
        {s, parser.status_code(), parser.body_bytes(), parser.keep_alive(), parser.error(), pos});
    if (s == ResponseParser::State::kError) return out;
    check(used >= 1);
    check(parser.status_code() >= 100 && parser.status_code() <= 999);
    if (!parser.keep_alive()) return out;  // the connection ends here; the rest is not HTTP
    parser.reset(head);
  }
  const ResponseParser::State s = parser.on_eof();
  check(s != ResponseParser::State::kNeedMore);
  out.push_back(
      {s, parser.status_code(), parser.body_bytes(), parser.keep_alive(), parser.error(), pos});
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const bool head = (data[0] & 1) != 0;
  const size_t piece = 1 + (data[0] >> 1);
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);
  const std::vector<Outcome> whole = parse_stream(stream, head, stream.size() + 1);
  const std::vector<Outcome> pieces = parse_stream(stream, head, piece);
  check(whole == pieces);
  return 0;
}
