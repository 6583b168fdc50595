// H2Request and H2Client: the client side of HTTP/2 (RFC 9113) for the load engine, framed by
// libnghttp2 (the library h2load and curl use); knee keeps the I/O, the timing and the counting.
//
// H2Request is a RequestSpec as HTTP/2 fields: the pseudo-header fields :method, :scheme,
// :authority, :path (RFC 9113 §8.3.1) and then the spec's headers with lower-case names, minus
// the connection-specific ones HTTP/2 forbids (Connection, Keep-Alive, Proxy-Connection,
// Transfer-Encoding, Upgrade: §8.2.2) and Host (sent as :authority); a user-agent unless the spec
// has one; content-length when the body is not empty. {conn} and {seq} expand as in request.h.
//
// H2Client is one connection's session without a socket: receive() takes the bytes read,
// pull() hands over the bytes to write, submit() starts a request on a new stream. What happens
// to a stream comes back through the Listener during receive() or pull(), keyed by the caller's
// lane number:
//   on_response  the stream ended cleanly: :status, body bytes, frame bytes received
//   on_reset     the server reset it (RST_STREAM with its error code), or refused it: streams
//                above a GOAWAY's last stream id are reported with REFUSED_STREAM (§6.8)
// The session's own SETTINGS ask for no server push and flow-control windows of 2^30 - 1 bytes
// for every stream and for the connection (h2load's defaults), so a 16 MiB body never waits for
// a WINDOW_UPDATE. Streams beyond the server's SETTINGS_MAX_CONCURRENT_STREAMS wait inside the
// session until one closes (nghttp2 queues them), so their latency includes that wait.
//
// Ownership and thread-safety: an H2Client belongs to its connection's thread; the Listener must
// outlive it. H2Request is a plain value.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/status.h"
#include "http/request.h"

struct nghttp2_session;

namespace knee::http {

struct H2Request {
  std::vector<std::pair<std::string, std::string>> fields;  // pseudo-header fields first
  std::string body;
  bool has_placeholders = false;
  bool uses_shipment = false;  // holds {shipment}: the caller draws an id per rendering
  bool is_head = false;
  // Made by render(): its strings change with every rendering, so a session may not keep
  // pointers to them past the stream (H2Client caches the fields of a template only).
  bool rendered = false;

  // Errors (kInvalidArgument): a header value with CR, LF or NUL, a Transfer-Encoding or
  // Content-Length field that contradicts the body (as RequestTemplate::compile).
  static core::Result<H2Request> compile(const RequestSpec& spec);
  // `out` = this request with {conn} -> conn, {seq} -> seq and {shipment} -> the tracking
  // number of `shipment` (RequestTemplate::render).
  void render(uint64_t conn, uint64_t seq, H2Request& out, uint64_t shipment = 1) const;
};

class H2Client {
 public:
  class Listener {
   public:
    virtual ~Listener() = default;
    // `frame_bytes`: the stream's HEADERS and DATA frames, 9-byte frame headers included.
    virtual void on_response(uint32_t lane, int status, uint64_t body_bytes,
                             uint64_t frame_bytes) = 0;
    // `error_code` is RFC 9113 §7's; `after_goaway` when the stream was refused by a GOAWAY.
    virtual void on_reset(uint32_t lane, uint32_t error_code, bool after_goaway,
                          uint64_t frame_bytes) = 0;
  };

  // Flow-control window asked for, bytes: 2^30 - 1 per stream and for the connection.
  static constexpr int32_t kWindowBytes = (1 << 30) - 1;

  // A session with its connection preface and SETTINGS queued for pull(). Errors: kIoError when
  // nghttp2 cannot allocate it.
  static core::Result<std::unique_ptr<H2Client>> create(Listener& listener);
  ~H2Client();
  H2Client(const H2Client&) = delete;
  H2Client& operator=(const H2Client&) = delete;

  struct Stream;  // one request's stream, owned by the session
  // Starts `request` on a new stream for `lane`; `request` must stay alive until the stream ends
  // or is cancelled. Returns the stream, valid until the Listener hears of it or cancel().
  // Errors: kUnavailable once a GOAWAY arrived, kIoError for nghttp2's refusal (its reason, e.g.
  // stream ids used up): the connection should be closed.
  core::Result<Stream*> submit(uint32_t lane, const H2Request& request);
  // Ends `stream` from this side (RST_STREAM CANCEL, a timed-out request), also one still
  // queued behind the server's stream limit; no Listener call follows for it.
  void cancel(Stream* stream);
  // Feeds bytes read from the connection. Errors: kIoError with nghttp2's reason when the
  // server broke the protocol; the connection must then be closed.
  core::Status receive(std::string_view bytes);
  // Appends the bytes the session has to send to `out`. Errors as receive().
  core::Status pull(std::string& out);

  // The server's first SETTINGS frame arrived: requests may start.
  bool ready() const { return settings_seen_; }
  // The session has nothing left to read or write (both sides done).
  bool finished() const;
  bool goaway_received() const { return goaway_received_; }
  uint32_t goaway_error() const { return goaway_error_; }
  // The GOAWAY's last stream id: streams above it were not processed (RFC 9113 §6.8).
  int32_t goaway_last_stream() const { return goaway_last_stream_; }
  // The stream id submit() got for `stream` (odd, >= 1); 0 for null.
  static int32_t id_of(const Stream* stream);
  // The server's SETTINGS_MAX_CONCURRENT_STREAMS; 0 before its SETTINGS arrived or when it set
  // none (unlimited).
  uint32_t server_max_streams() const { return server_max_streams_; }

  // RFC 9113 §7's name of an error code ("REFUSED_STREAM"), "0x1f" for an unknown one.
  static std::string error_name(uint32_t error_code);

 private:
  struct NvList;  // the last template's fields as nghttp2_nv, reused while it is the same
  explicit H2Client(Listener& listener);
  Stream* find(int32_t stream_id);
  void on_frame(int32_t stream_id, uint8_t type, uint8_t flags, size_t length, uint32_t error_code,
                int32_t last_stream_id);

  Listener& listener_;
  nghttp2_session* session_ = nullptr;
  // Streams are nghttp2's stream user data, taken from and returned to a pool: no allocation
  // per request once the pool holds as many as are in flight.
  std::vector<std::unique_ptr<Stream>> owned_;  // every Stream made, open or free
  std::vector<Stream*> free_;
  Stream* take_stream();
  void give_back(Stream* s);
  bool settings_seen_ = false;
  bool goaway_received_ = false;
  uint32_t goaway_error_ = 0;
  int32_t goaway_last_stream_ = 0;
  uint32_t server_max_streams_ = 0;
  std::unique_ptr<NvList> nva_;

  friend struct H2Callbacks;
};

}  // namespace knee::http
