// tcp_counters() (net/socket.h) apart from socket.cc: glibc's <netinet/tcp.h> struct tcp_info
// stops before tcpi_segs_out, and it cannot be included beside <linux/tcp.h>, whose struct has
// every field the running kernel fills.
#include <linux/tcp.h>
#include <sys/socket.h>

#include <cstddef>

#include "net/socket.h"

namespace knee::net {

TcpCounters tcp_counters(int fd) {
  tcp_info info{};
  socklen_t len = sizeof info;
  if (::getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) != 0) return {};
  TcpCounters c;
  c.retransmits = info.tcpi_total_retrans;
  // Kernels older than 4.6 return a shorter struct without the field.
  if (len >= offsetof(tcp_info, tcpi_segs_out) + sizeof info.tcpi_segs_out) {
    c.segments_out = info.tcpi_segs_out;
  }
  return c;
}

}  // namespace knee::net
