#include "http/response_parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace knee::http {
namespace {

using State = ResponseParser::State;

struct Outcome {
  State state = State::kNeedMore;
  size_t consumed = 0;
  int status = 0;
  uint64_t body_bytes = 0;
  bool keep_alive = false;
  std::string error;
};

std::ostream& operator<<(std::ostream& os, const Outcome& o) {
  return os << "{state " << static_cast<int>(o.state) << ", consumed " << o.consumed << ", status "
            << o.status << ", body " << o.body_bytes << ", keep_alive " << o.keep_alive
            << ", error \"" << o.error << "\"}";
}

bool operator==(const Outcome& a, const Outcome& b) {
  return a.state == b.state && a.consumed == b.consumed && a.status == b.status &&
         a.body_bytes == b.body_bytes && a.keep_alive == b.keep_alive && a.error == b.error;
}

// Feeds `data` to `p` in pieces ending at `cuts` (ascending offsets), each piece in its own heap
// buffer of exact size so the sanitizer catches a read past a piece. Stops when the parser stops.
// With `eof`, calls on_eof() after the last piece if the parser still needs more.
Outcome run(ResponseParser& p, std::string_view data, const std::vector<size_t>& cuts,
            bool eof = false) {
  Outcome o;
  size_t start = 0;
  std::vector<size_t> ends = cuts;
  ends.push_back(data.size());
  for (size_t end : ends) {
    if (end <= start) continue;
    const std::vector<char> piece(data.begin() + static_cast<std::ptrdiff_t>(start),
                                  data.begin() + static_cast<std::ptrdiff_t>(end));
    const size_t n = p.feed(piece.data(), piece.size());
    EXPECT_LE(n, piece.size());
    o.consumed += n;
    if (p.state() != State::kNeedMore) break;
    EXPECT_EQ(n, piece.size()) << "an incomplete response consumes everything";
    start = end;
  }
  if (eof) p.on_eof();
  o.state = p.state();
  o.status = p.status_code();
  o.body_bytes = p.body_bytes();
  o.keep_alive = p.keep_alive();
  o.error = std::string(p.error());
  return o;
}

Outcome parse(std::string_view data, const std::vector<size_t>& cuts = {}, bool head = false,
              bool eof = false) {
  ResponseParser p;
  p.reset(head);
  return run(p, data, cuts, eof);
}

// Cuts at every offset of `data`: fed byte by byte.
std::vector<size_t> every_offset(std::string_view data) {
  std::vector<size_t> cuts(data.size());
  for (size_t i = 0; i < data.size(); ++i) cuts[i] = i;
  return cuts;
}

// Parses `data` whole, split at every single offset, and byte by byte; all must give `expected`.
void expect_every_split(std::string_view data, const Outcome& expected, bool head = false,
                        bool eof = false) {
  EXPECT_EQ(parse(data, {}, head, eof), expected) << "whole";
  for (size_t cut = 1; cut < data.size(); ++cut) {
    EXPECT_EQ(parse(data, {cut}, head, eof), expected) << "split at " << cut;
  }
  EXPECT_EQ(parse(data, every_offset(data), head, eof), expected) << "byte by byte";
}

Outcome complete(size_t consumed, int status, uint64_t body, bool keep_alive) {
  return {State::kComplete, consumed, status, body, keep_alive, ""};
}

Outcome error(std::string_view data, const std::vector<size_t>& cuts = {}, bool head = false,
              bool eof = false) {
  Outcome o = parse(data, cuts, head, eof);
  EXPECT_EQ(o.state, State::kError) << data;
  EXPECT_FALSE(o.error.empty());
  return o;
}

const std::string kContentLength =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/plain\r\n"
    "Content-Length: 12\r\n"
    "\r\n"
    "hello world\n";

const std::string kChunked =
    "HTTP/1.1 200 OK\r\n"
    "Transfer-Encoding: chunked\r\n"
    "\r\n"
    "5;name=value;flag\r\n"
    "hello\r\n"
    "1A ; ext=\"quoted;text\"\r\n"
    "abcdefghijklmnopqrstuvwxyz\r\n"
    "0\r\n"
    "Expires: never\r\n"
    "X-Checksum: 1234\r\n"
    "\r\n";

const std::string kCloseDelimited =
    "HTTP/1.1 200 OK\r\n"
    "Content-Type: text/plain\r\n"
    "\r\n"
    "body until the server closes";

TEST(ResponseParser, ContentLengthAtEverySplit) {
  expect_every_split(kContentLength, complete(kContentLength.size(), 200, 12, true));
}

TEST(ResponseParser, ChunkedWithExtensionsAndTrailersAtEverySplit) {
  expect_every_split(kChunked, complete(kChunked.size(), 200, 5 + 26, true));
}

TEST(ResponseParser, CloseDelimitedCompletesAtEofAtEverySplit) {
  expect_every_split(kCloseDelimited, complete(kCloseDelimited.size(), 200, 28, false),
                     /*head=*/false, /*eof=*/true);
  const Outcome open = parse(kCloseDelimited);
  EXPECT_EQ(open.state, State::kNeedMore);
  EXPECT_EQ(open.body_bytes, 28u);
}

TEST(ResponseParser, ZeroContentLengthCompletesAtTheHeadEnd) {
  const std::string r = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
  expect_every_split(r, complete(r.size(), 200, 0, true));
}

TEST(ResponseParser, AcceptsBareLfLineEnds) {
  const std::string r = "HTTP/1.1 200 OK\nContent-Length: 2\n\nok";
  expect_every_split(r, complete(r.size(), 200, 2, true));
  const std::string c = "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n2\nok\n0\n\n";
  expect_every_split(c, complete(c.size(), 200, 2, true));
}

TEST(ResponseParser, StatusLineWithoutReasonPhrase) {
  const std::string r = "HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n";
  expect_every_split(r, complete(r.size(), 404, 0, true));
  const std::string empty_reason = "HTTP/1.1 503 \r\nContent-Length: 0\r\n\r\n";
  EXPECT_EQ(parse(empty_reason), complete(empty_reason.size(), 503, 0, true));
}

TEST(ResponseParser, PipelinedResponsesStopAtTheBoundary) {
  const std::string both = kContentLength + kChunked;
  ResponseParser p;
  p.reset();
  const size_t first = p.feed(both.data(), both.size());
  EXPECT_EQ(p.state(), State::kComplete);
  EXPECT_EQ(first, kContentLength.size());
  EXPECT_EQ(p.body_bytes(), 12u);
  EXPECT_EQ(p.feed(both.data() + first, both.size() - first), 0u) << "complete until reset";

  p.reset();
  EXPECT_FALSE(p.received_any());
  const size_t second = p.feed(both.data() + first, both.size() - first);
  EXPECT_EQ(p.state(), State::kComplete);
  EXPECT_EQ(second, kChunked.size());
  EXPECT_EQ(p.body_bytes(), 31u);
}

TEST(ResponseParser, PipelinedChunkedThenLengthAtEverySplitOfTheFirst) {
  const std::string both = kChunked + kContentLength;
  for (size_t cut = 1; cut < kChunked.size(); ++cut) {
    EXPECT_EQ(parse(both, {cut}), complete(kChunked.size(), 200, 31, true)) << cut;
  }
}

TEST(ResponseParser, SkipsInterimResponses) {
  const std::string r =
      "HTTP/1.1 100 Continue\r\n"
      "\r\n"
      "HTTP/1.1 103 Early Hints\r\n"
      "Link: </style.css>; rel=preload\r\n"
      "Connection: close\r\n"
      "\r\n"
      "HTTP/1.1 201 Created\r\n"
      "Content-Length: 3\r\n"
      "\r\n"
      "new";
  // The interim response's "Connection: close" does not carry over to the final response.
  expect_every_split(r, complete(r.size(), 201, 3, true));
}

TEST(ResponseParser, SwitchingProtocolsIsFinalWithoutBody) {
  const std::string r =
      "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n";
  const std::string next = "\x81\x05hello";
  EXPECT_EQ(parse(r + next), complete(r.size(), 101, 0, false));
}

TEST(ResponseParser, HeadResponseHasNoBody) {
  const std::string r = "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n";
  expect_every_split(r, complete(r.size(), 200, 0, true), /*head=*/true);
  const std::string chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  EXPECT_EQ(parse(chunked + kContentLength, {}, /*head=*/true),
            complete(chunked.size(), 200, 0, true));
  // Without the HEAD flag the same bytes wait for the body.
  EXPECT_EQ(parse(r).state, State::kNeedMore);
}

TEST(ResponseParser, NoContentAndNotModifiedHaveNoBody) {
  const std::string no_content = "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n";
  expect_every_split(no_content, complete(no_content.size(), 204, 0, true));
  const std::string not_modified =
      "HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n";
  expect_every_split(not_modified, complete(not_modified.size(), 304, 0, true));
}

TEST(ResponseParser, EofMidResponseIsAnError) {
  const std::string truncated_body = kContentLength.substr(0, kContentLength.size() - 1);
  EXPECT_EQ(error(truncated_body, {}, false, /*eof=*/true).error, "EOF mid-response");
  EXPECT_EQ(error(kChunked.substr(0, 60), {}, false, true).error, "EOF mid-response");
  EXPECT_EQ(error(kChunked.substr(0, kChunked.size() - 2), {}, false, true).error,
            "EOF mid-response");
  EXPECT_EQ(error("HTTP/1.1 200 OK\r\nContent-Le", {}, false, true).error, "EOF mid-response");
  EXPECT_EQ(error("", {}, false, true).error, "EOF before any response byte");
}

TEST(ResponseParser, EofAfterCompleteKeepsTheResult) {
  ResponseParser p;
  p.reset();
  p.feed(kContentLength.data(), kContentLength.size());
  EXPECT_EQ(p.on_eof(), State::kComplete);
  EXPECT_TRUE(p.keep_alive());
}

TEST(ResponseParser, ReceivedAnyTracksBytesSinceReset) {
  ResponseParser p;
  p.reset();
  EXPECT_FALSE(p.received_any());
  p.feed("H", 0);
  EXPECT_FALSE(p.received_any());
  p.feed("H", 1);
  EXPECT_TRUE(p.received_any());
  p.reset();
  EXPECT_FALSE(p.received_any());
  EXPECT_EQ(p.status_code(), 0);
  EXPECT_EQ(p.state(), State::kNeedMore);
}

TEST(ResponseParser, KeepAliveRules) {
  auto keep_alive = [](std::string_view version, std::string_view headers) {
    const std::string r =
        std::string(version) + " 200 OK\r\n" + std::string(headers) + "Content-Length: 0\r\n\r\n";
    const Outcome o = parse(r);
    EXPECT_EQ(o.state, State::kComplete) << r;
    return o.keep_alive;
  };
  EXPECT_TRUE(keep_alive("HTTP/1.1", ""));
  EXPECT_FALSE(keep_alive("HTTP/1.1", "Connection: close\r\n"));
  EXPECT_FALSE(keep_alive("HTTP/1.1", "connection: CLOSE\r\n"));
  EXPECT_FALSE(keep_alive("HTTP/1.1", "Connection: keep-alive, close\r\n"));
  EXPECT_FALSE(keep_alive("HTTP/1.1", "Connection: Upgrade\r\nConnection: close\r\n"));
  EXPECT_TRUE(keep_alive("HTTP/1.1", "Connection: closed\r\n"));
  EXPECT_TRUE(keep_alive("HTTP/1.1", "X-Connection: close\r\n"));
  EXPECT_FALSE(keep_alive("HTTP/1.0", ""));
  EXPECT_TRUE(keep_alive("HTTP/1.0", "Connection: Keep-Alive\r\n"));
  EXPECT_FALSE(keep_alive("HTTP/1.0", "Connection: keep-alive, close\r\n"));
  // Close-delimited bodies end the connection whatever the headers say.
  EXPECT_FALSE(
      parse("HTTP/1.1 200 OK\r\nConnection: keep-alive\r\n\r\nx", {}, false, true).keep_alive);
}

TEST(ResponseParser, ObsFoldContinuesTheValue) {
  const std::string r =
      "HTTP/1.1 200 OK\r\nConnection: keep-alive,\r\n close\r\nX-A: 1\r\n\tmore\r\n"
      "Content-Length: 1\r\n\r\nx";
  expect_every_split(r, complete(r.size(), 200, 1, false));
}

TEST(ResponseParser, HeaderNamesAreCaseInsensitive) {
  const std::string r = "HTTP/1.1 200 OK\r\ncOnTeNt-LeNgTh: 3\r\n\r\nabc";
  EXPECT_EQ(parse(r), complete(r.size(), 200, 3, true));
  const std::string c = "HTTP/1.1 200 OK\r\nTRANSFER-ENCODING: CHUNKED\r\n\r\n1\r\nx\r\n0\r\n\r\n";
  EXPECT_EQ(parse(c), complete(c.size(), 200, 1, true));
}

TEST(ResponseParser, LongIrrelevantHeadersAreSkipped) {
  const std::string r = "HTTP/1.1 200 OK\r\nX-" + std::string(5000, 'n') + ": " +
                        std::string(20000, 'v') + "\r\nContent-Length: 1\r\n\r\nx";
  EXPECT_EQ(parse(r), complete(r.size(), 200, 1, true));
}

TEST(ResponseParser, EqualDuplicateContentLengthsAreAccepted) {
  const std::string dup = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length:2 \r\n\r\nok";
  EXPECT_EQ(parse(dup), complete(dup.size(), 200, 2, true));
  const std::string list = "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok";
  EXPECT_EQ(parse(list), complete(list.size(), 200, 2, true));
}

TEST(ResponseParser, RejectsBadContentLength) {
  EXPECT_EQ(error("HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n").error,
            "conflicting Content-Length values");
  EXPECT_EQ(error("HTTP/1.1 200 OK\r\nContent-Length: 2, 3\r\n\r\n").error,
            "conflicting Content-Length values");
  for (const char* value : {"", "-1", "+1", "1a", "0x10", "1 2", "1,", ",1", "1.0"}) {
    const std::string r = std::string("HTTP/1.1 200 OK\r\nContent-Length: ") + value + "\r\n\r\n";
    EXPECT_EQ(error(r).error, "bad Content-Length") << value;
  }
  EXPECT_EQ(error("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n").error,
            "Content-Length too large");
  const Outcome max = parse("HTTP/1.1 200 OK\r\nContent-Length: 18446744073709551615\r\n\r\n");
  EXPECT_EQ(max.state, State::kNeedMore);
}

TEST(ResponseParser, TransferEncodingOverridesContentLengthAndCloses) {
  const std::string r =
      "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n"
      "2\r\nok\r\n0\r\n\r\n";
  expect_every_split(r, complete(r.size(), 200, 2, false));
  const std::string http10 =
      "HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
  EXPECT_EQ(parse(http10), complete(http10.size(), 200, 0, false));
}

TEST(ResponseParser, ChunkedMustBeTheFinalCoding) {
  const std::string gzip_chunked =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
  EXPECT_EQ(parse(gzip_chunked), complete(gzip_chunked.size(), 200, 3, true));
  const std::string split_headers =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n";
  EXPECT_EQ(parse(split_headers), complete(split_headers.size(), 200, 0, true));
  // chunked not last: the body runs until close (RFC 9112 §6.3 item 4).
  const std::string chunked_gzip =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n0\r\n\r\n";
  EXPECT_EQ(parse(chunked_gzip, {}, false, true), complete(chunked_gzip.size(), 200, 5, false));
}

TEST(ResponseParser, ChunkSizesAreHexAndMayBeLarge) {
  const std::string body(0x1ff, 'z');
  const std::string r =
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1Ff\r\n" + body + "\r\n000\r\n\r\n";
  EXPECT_EQ(parse(r), complete(r.size(), 200, 0x1ff, true));
}

TEST(ResponseParser, RejectsBadChunks) {
  const std::string head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
  for (const char* chunk : {"zz\r\n", "\r\n", ";ext\r\n", " 5\r\n", "5 5\r\n", "-1\r\n"}) {
    EXPECT_EQ(error(head + chunk).error, "bad chunk size") << chunk;
  }
  EXPECT_EQ(error(head + "10000000000000000\r\n").error, "chunk size too large");
  EXPECT_EQ(error(head + "2\r\nokX\r\n").error, "missing CRLF after chunk data");
  EXPECT_EQ(error(head + "2\r\nok\rX").error, "CR not followed by LF");
}

TEST(ResponseParser, RejectsGarbageStatusLines) {
  const char* bad[] = {
      "garbage\r\n\r\n",          "HTTP/1.1 abc OK\r\n\r\n",  "HTTP/1.1 2x0 OK\r\n\r\n",
      "HTTP/1.1 20 OK\r\n\r\n",   "HTTP/1.1 2000 OK\r\n\r\n", "HTTP/1.1 099 Low\r\n\r\n",
      "HTTP/1.1  200 OK\r\n\r\n", "HTTP/1.1200 OK\r\n\r\n",   "HTTP/2 200\r\n\r\n",
      "HTTP/1.x 200 OK\r\n\r\n",  "http/1.1 200 OK\r\n\r\n",  "\r\nHTTP/1.1 200 OK\r\n\r\n",
      "HTTP/1.1 200OK\r\n\r\n",
  };
  for (const char* r : bad) {
    error(r);
    EXPECT_EQ(parse(r), parse(r, every_offset(r))) << r;
  }
  EXPECT_EQ(error("HTTP/2 200\r\n\r\n").error, "unsupported HTTP version (expected HTTP/1.x)");
  EXPECT_EQ(error("HTTP/1.1 2x0 OK\r\n\r\n").error, "non-digit in status code");
}

TEST(ResponseParser, RejectsMalformedHeaderLines) {
  EXPECT_EQ(error("HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n").error, "malformed header field name");
  EXPECT_EQ(error("HTTP/1.1 200 OK\r\nNoColon\r\n\r\n").error, "header line without ':'");
  EXPECT_EQ(error("HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\nx").error,
            "malformed header field name");
  EXPECT_EQ(error("HTTP/1.1 200 OK\r\n: empty\r\n\r\n").error, "malformed header field name");
  EXPECT_EQ(error("HTTP/1.1 200 OK\r\n folded\r\n\r\n").error,
            "whitespace before the first header field");
  EXPECT_EQ(error("HTTP/1.1 200 OK\rX: 1\r\n\r\n").error, "CR not followed by LF");
}

TEST(ResponseParser, RejectsOverlongHeads) {
  const std::string status = "HTTP/1.1 200 " + std::string(ResponseParser::kMaxHeadBytes, 'r');
  EXPECT_EQ(error(status, {1000, 30000}).error, "status line longer than 64 KiB");

  std::string headers = "HTTP/1.1 200 OK\r\n";
  while (headers.size() <= ResponseParser::kMaxHeadBytes) headers += "X-Filler: 0123456789\r\n";
  EXPECT_EQ(error(headers).error, "header section longer than 64 KiB");
  // Exactly at the limit is fine.
  std::string at_limit = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nX: ";
  at_limit += std::string(ResponseParser::kMaxHeadBytes - at_limit.size() - 4, 'v') + "\r\n\r\n";
  ASSERT_EQ(at_limit.size(), ResponseParser::kMaxHeadBytes);
  EXPECT_EQ(parse(at_limit), complete(at_limit.size(), 200, 0, true));

  const std::string chunk_ext = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;" +
                                std::string(ResponseParser::kMaxHeadBytes, 'e');
  EXPECT_EQ(error(chunk_ext).error, "chunk-size line longer than 64 KiB");
  std::string trailers = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n";
  for (int i = 0; i < 4000; ++i) trailers += "X-Trailer: abcdefgh\r\n";
  EXPECT_EQ(error(trailers).error, "trailer section longer than 64 KiB");
}

// The status line's start, a whole field line, a single-element value, a field name and a
// skipped line with its CRLF are taken in one step when whole in the buffer; where one crosses
// the head's limit, or is malformed, the outcome (bytes consumed included) is the byte loop's.
TEST(ResponseParser, RunsTakenInOneStepEndWhereTheByteLoopWould) {
  const std::string nginx =
      "HTTP/1.1 200 OK\r\nServer: nginx/1.22.1\r\nDate: Thu, 03 Dec 2026 05:35:00 GMT\r\n"
      "Content-Type: application/octet-stream\r\nContent-Length: 3\r\nConnection: "
      "keep-alive\r\n\r\nok\n";
  expect_every_split(nginx, complete(nginx.size(), 200, 3, true));

  const std::string start = "HTTP/1.1 200 OK\r\n";
  const size_t room = ResponseParser::kMaxHeadBytes - start.size();
  for (size_t over = 0; over <= 8; ++over) {
    // A field name, then a skipped value's CRLF, reaching just past the limit.
    const std::string name = start + std::string(room - 1 + over, 'n') + ": v\r\n\r\n";
    const std::string value = start + "X: " + std::string(room - 5 + over, 'v') + "\r\n\r\n";
    for (const std::string& r : {name, value}) {
      EXPECT_EQ(parse(r), parse(r, every_offset(r))) << "over " << over;
    }
  }
  std::string at_limit = start + "Content-Length: 0\r\nX: ";
  at_limit += std::string(ResponseParser::kMaxHeadBytes - at_limit.size() - 4, 'v') + "\r\n\r\n";
  EXPECT_EQ(parse(at_limit), complete(at_limit.size(), 200, 0, true));
  at_limit.insert(start.size(), "Y");  // one byte more: the last LF crosses the limit
  EXPECT_EQ(error(at_limit).error, "header section longer than 64 KiB");

  // Values that matter, simple or not, whole or byte by byte: the same outcome.
  for (const std::string fields :
       {"Content-Length:  5 \r\n", "Content-Length: 0000000000005\r\n", "Content-Length: 5 5\r\n",
        "Content-Length: 5, 5\r\n", "Content-Length: 5\r\n 5\r\n",
        "Content-Length: 99999999999999999999\r\n", "Connection: Close \r\n",
        "Connection: keep-alive, close\r\n", "Connection: close;x=y\r\n",
        "Connection: keep-alive\r\n close\r\n", "Connection: averyveryverylongtoken\r\n",
        "Transfer-Encoding: Chunked\r\n", "Transfer-Encoding: gzip\r\n",
        "CONTENT-LENGTH: 5\r\nConnection:close\r\n"}) {
    const std::string r = "HTTP/1.1 200 OK\r\n" + fields + "\r\n0\r\n\r\nhello";
    EXPECT_EQ(parse(r, {}, false, true), parse(r, every_offset(r), false, true)) << fields;
  }
  const std::string closing = start + "Connection: Close \r\nContent-Length: 2\r\n\r\nok";
  EXPECT_EQ(parse(closing), complete(closing.size(), 200, 2, false));

  // A status code below 100 in the usual layout still fails as the byte loop says.
  EXPECT_EQ(error("HTTP/1.1 099 Low\r\n\r\n").error, "status code below 100");
  // A bare CR right after a skipped value: not taken as a line end.
  EXPECT_EQ(error(start + "Server: x\rY\r\n\r\n").error, "CR not followed by LF");
  // A long name that matters only by its first 20 bytes matches nothing.
  const std::string long_name = start + "Content-Length-And-More: 5\r\n\r\n";
  EXPECT_EQ(parse(long_name, {}, false, true), complete(long_name.size(), 200, 0, false));
}

TEST(ResponseParser, ResetAllowsReuse) {
  ResponseParser p;
  p.reset();
  p.feed("garbage", 7);
  EXPECT_EQ(p.state(), State::kError);
  p.reset();
  EXPECT_TRUE(p.error().empty());
  EXPECT_EQ(run(p, kChunked, {}), complete(kChunked.size(), 200, 31, true));
  p.reset(/*head_request=*/true);
  const std::string head = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n";
  EXPECT_EQ(run(p, head, {}), complete(head.size(), 200, 0, true));
}

std::vector<size_t> random_cuts(std::mt19937_64& rng, size_t size) {
  std::vector<size_t> cuts;
  if (size == 0) return cuts;
  const size_t n = rng() % 8;
  for (size_t i = 0; i < n; ++i) cuts.push_back(rng() % size);
  std::sort(cuts.begin(), cuts.end());
  return cuts;
}

TEST(ResponseParser, RandomBytesNeverCompleteOrCrash) {
  std::mt19937_64 rng(20240601);
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string data(rng() % 300, '\0');
    for (char& c : data) c = static_cast<char>(rng() & 0xff);
    if (iteration % 2 == 0) data = "HTTP/1.1 " + data;  // get past the version now and then
    ResponseParser p;
    p.reset(rng() % 2 == 0);
    const Outcome o = run(p, data, random_cuts(rng, data.size()));
    EXPECT_LE(o.consumed, data.size());
    EXPECT_TRUE(o.state == State::kError || o.state == State::kNeedMore ||
                (o.state == State::kComplete && iteration % 2 == 0))
        << iteration;
    if (o.state == State::kError) {
      EXPECT_FALSE(o.error.empty());
    }
  }
}

TEST(ResponseParser, MutatedResponsesNeverCrash) {
  const std::string samples[] = {kContentLength, kChunked, kCloseDelimited,
                                 "HTTP/1.1 100 Continue\r\n\r\n" + kContentLength};
  // Bytes that steer the state machine: separators, hex, framing words.
  const std::string alphabet = "\r\n :;,\t0123456789abcdefABCDEF\x00\xff-chunked";
  std::mt19937_64 rng(7);
  for (int iteration = 0; iteration < 20000; ++iteration) {
    std::string data = samples[rng() % std::size(samples)];
    const size_t edits = 1 + rng() % 4;
    for (size_t e = 0; e < edits; ++e) {
      const size_t at = rng() % data.size();
      const char c =
          rng() % 2 == 0 ? alphabet[rng() % alphabet.size()] : static_cast<char>(rng() & 0xff);
      switch (rng() % 3) {
        case 0:
          data[at] = c;
          break;
        case 1:
          data.insert(at, 1, c);
          break;
        default:
          data.erase(at, 1 + rng() % 8);
          break;
      }
      if (data.empty()) data = "H";
    }
    ResponseParser p;
    p.reset(rng() % 4 == 0);
    const Outcome o = run(p, data, random_cuts(rng, data.size()), /*eof=*/rng() % 2 == 0);
    EXPECT_LE(o.consumed, data.size());
    if (o.state == State::kError) {
      EXPECT_FALSE(o.error.empty());
    }
    if (o.state == State::kComplete) {
      EXPECT_TRUE(o.error.empty());
    }
  }
}

}  // namespace
}  // namespace knee::http
