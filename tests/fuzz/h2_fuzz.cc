// Fuzz target: both HTTP/2 input paths, framed by libnghttp2 with knee's callbacks around it:
// http::H2Client (what a server under test sends the load engine) and lab::H2ServerSession
// (what a client sends the lab server).
//
// Input: byte 0 picks the side (bit 0: 0 client, 1 server) and the split (bits 1-7: receive in
// pieces of 1..128 bytes); the rest is the peer's bytes. The client side first submits three
// requests; the server side is given the client preface first and answers every request it
// hears. After every piece the session's output is pulled, as a connection would write it.
// Checks (abort on failure): a receive() or pull() error ends the connection and says why; the
// client hears of each stream it started at most once, and of no other; the server's handler
// is never given a request on a stream it was told had closed; and nothing crashes, leaks or
// reads out of bounds (ASan, UBSan).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "http/h2_client.h"
#include "http/url.h"
#include "lab/h2_session.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

struct ClientListener final : knee::http::H2Client::Listener {
  std::set<uint32_t> heard;
  void on_response(uint32_t lane, int, uint64_t, uint64_t) override {
    check(heard.insert(lane).second);
  }
  void on_reset(uint32_t lane, uint32_t, bool, uint64_t) override {
    check(heard.insert(lane).second);
  }
};

const knee::http::H2Request& request() {
  static const knee::http::H2Request r = [] {
    knee::http::RequestSpec spec;
    spec.url = *knee::http::parse_url("http://127.0.0.1:8080/fast");
    return *knee::http::H2Request::compile(spec);
  }();
  return r;
}

void fuzz_client(std::string_view bytes, size_t piece) {
  ClientListener listener;
  auto client = knee::http::H2Client::create(listener);
  check(client.has_value());
  for (uint32_t lane = 0; lane < 3; ++lane) check((*client)->submit(lane, request()).has_value());
  std::string out;
  if (!(*client)->pull(out)) return;
  for (size_t pos = 0; pos < bytes.size(); pos += piece) {
    if (knee::core::Status s = (*client)->receive(bytes.substr(pos, piece)); !s) {
      check(!s.message().empty());
      return;
    }
    out.clear();
    if (knee::core::Status s = (*client)->pull(out); !s) {
      check(!s.message().empty());
      return;
    }
  }
  for (uint32_t lane : listener.heard) check(lane < 3);
}

struct ServerHandler final : knee::lab::H2ServerSession::Handler {
  knee::lab::H2ServerSession* session = nullptr;
  std::vector<int32_t> pending;
  std::set<int32_t> closed;
  std::set<int32_t> delivered;
  void on_request(int32_t stream_id, std::string_view, std::string_view, size_t,
                  uint64_t) override {
    check(closed.count(stream_id) == 0);
    check(delivered.insert(stream_id).second);  // once, complete or over the body limit
    pending.push_back(stream_id);
  }
  void on_stream_closed(int32_t stream_id) override { closed.insert(stream_id); }
};

void fuzz_server(std::string_view bytes, size_t piece) {
  ServerHandler handler;
  auto session = knee::lab::H2ServerSession::create(handler, 16, /*max_body_bytes=*/64);
  check(session.has_value());
  handler.session = session->get();
  std::string input(knee::lab::H2ServerSession::kClientPreface);
  input.append(bytes);
  const std::string_view all(input);
  std::string out;
  for (size_t pos = 0; pos < all.size(); pos += piece) {
    if (knee::core::Status s = (*session)->receive(all.substr(pos, piece)); !s) {
      check(!s.message().empty());
      return;
    }
    for (int32_t id : handler.pending) {
      (*session)->respond(id, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", false);
    }
    handler.pending.clear();
    out.clear();
    if (knee::core::Status s = (*session)->pull(out); !s) {
      check(!s.message().empty());
      return;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const size_t piece = 1 + (data[0] >> 1);
  const std::string_view rest(reinterpret_cast<const char*>(data + 1), size - 1);
  if ((data[0] & 1) == 0) {
    fuzz_client(rest, piece);
  } else {
    fuzz_server(rest, piece);
  }
  return 0;
}
