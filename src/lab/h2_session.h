// H2ServerSession: the lab server's side of one HTTP/2 connection (RFC 9113), framed by
// libnghttp2 without a socket, as http::H2Client is for the load engine. receive() takes the
// bytes read (the client's connection preface first), pull() hands over the bytes to write.
// Each complete request (HEADERS, and DATA, with END_STREAM) reaches the Handler with its
// :method and :path; the worker answers it like an HTTP/1.1 request and gives the HTTP/1.1
// response it wrote to respond(), which sends its status, Content-Type, Content-Length and Date
// as HEADERS and its body as DATA. So every endpoint is the same code over HTTP/1.1 and HTTP/2.
//
// Ownership and thread-safety: belongs to its connection's worker thread; the Handler must
// outlive it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "core/clock.h"
#include "core/status.h"

struct nghttp2_session;

namespace knee::lab {

class H2ServerSession {
 public:
  class Handler {
   public:
    virtual ~Handler() = default;
    // A complete request on `stream_id`, or one whose body went over the session's
    // `max_body_bytes` (then at once, its DATA still coming); the views are valid during the
    // call only. `field_bytes`: its header fields' size as HPACK counts it (name + value + 32
    // each, RFC 9113 §6.5.2), for the same 8 KiB limit as an HTTP/1.1 header section.
    // `body_bytes`: the bytes of its DATA frames (counted, not kept), or its content-length
    // when that is larger, for the same limit as an HTTP/1.1 Content-Length.
    virtual void on_request(int32_t stream_id, std::string_view method, std::string_view path,
                            size_t field_bytes, uint64_t body_bytes) = 0;
    // `stream_id` closed before or after its answer (the client reset it, or it was answered):
    // work still pending for it can be dropped.
    virtual void on_stream_closed(int32_t stream_id) = 0;
  };

  // The preface a client with prior knowledge sends first (RFC 9113 §3.4), 24 bytes.
  static constexpr std::string_view kClientPreface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

  // A session whose SETTINGS (at most `max_streams` concurrent streams) are queued for pull().
  // A request whose content-length or DATA goes over `max_body_bytes` reaches the Handler then,
  // not at its end; once its answer is sent the stream is reset with NO_ERROR, which asks the
  // client to stop sending the body (RFC 9113 §8.1), so the rest is never read.
  // Errors: kIoError when nghttp2 cannot allocate it.
  static core::Result<std::unique_ptr<H2ServerSession>> create(
      Handler& handler, uint32_t max_streams, uint64_t max_body_bytes = UINT64_MAX);
  ~H2ServerSession();
  H2ServerSession(const H2ServerSession&) = delete;
  H2ServerSession& operator=(const H2ServerSession&) = delete;

  // Errors: kIoError with nghttp2's reason when the client broke the protocol.
  // `now`: when the bytes were read; the streams they begin are stamped with it, for
  // oldest_incomplete().
  core::Status receive(std::string_view bytes, core::TimePoint now = {});
  core::Status pull(std::string& out);
  // Answers `stream_id` with `http1`, a whole HTTP/1.1 response as the lab writes it
  // (response.h); `head_only` for HEAD (no DATA). A stream the client has closed meanwhile is
  // skipped. Connection-specific fields (Connection, Keep-Alive) are dropped (RFC 9113 §8.2.2).
  void respond(int32_t stream_id, std::string_view http1, bool head_only);
  // A graceful GOAWAY (no new streams; those begun are answered).
  void goaway();
  // Streams begun and not yet closed.
  size_t open_streams() const;
  // When the oldest stream whose request is not complete yet (HEADERS without END_STREAM, or its
  // DATA still coming) began, by receive()'s `now`; nullopt when every open stream's request is
  // complete. For the lab server's header_timeout.
  std::optional<core::TimePoint> oldest_incomplete() const;
  // Answers every stream whose request began at or before `began_by` and is not complete yet
  // (HEADERS without END_STREAM, or its DATA still coming) with `http1` (as respond(); the lab's
  // 408), as HTTP/1.1 answers a head that took too long. Returns how many it answered.
  size_t answer_incomplete(core::TimePoint began_by, std::string_view http1);
  // Nothing left to read or write.
  bool finished() const;

 private:
  struct Stream {
    std::string method, path;
    size_t field_bytes = 0;
    uint64_t request_body_bytes = 0;  // DATA received, for on_request()
    uint64_t content_length = 0;      // as the client declared it (0: none)
    core::TimePoint begun{};          // receive()'s `now` when its HEADERS began
    bool complete = false;            // the request reached the Handler
    bool client_done = false;         // END_STREAM received
    std::string body;                 // the response body being sent
    size_t body_sent = 0;
  };
  struct Callbacks;
  H2ServerSession(Handler& handler, uint64_t max_body_bytes)
      : handler_(handler), max_body_bytes_(max_body_bytes) {}
  // Hands stream `id`'s request to the Handler once (complete, or its body over the limit).
  void deliver(int32_t id);

  Handler& handler_;
  uint64_t max_body_bytes_;
  nghttp2_session* session_ = nullptr;
  std::map<int32_t, Stream> streams_;
  core::TimePoint now_{};  // receive()'s `now`, during the call
};

}  // namespace knee::lab
