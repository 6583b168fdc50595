// Terminal renderers of the run and sweep documents (document.h). Pure functions: the same
// document gives the same text, byte for byte, whether it was just measured or read back from a
// saved file (`knee report FILE.json`), so they are tested against golden files.
#pragma once

#include <string>
#include <vector>

#include "core/run_stats.h"
#include "report/document.h"

namespace knee::report {

// A human summary of one run, like wrk's: requests, throughput, latency percentiles, errors by
// kind and cause, and N against X * mean R.
std::string render_run_text(const RunDocument& doc);

// The protocol a run spoke, in words, for headers and the HTML page: "HTTP/1.1", "HTTP/1.1
// pipelined, 4 per connection", "HTTP/2 over TLS, 10 streams per connection", with the TLS
// version and cipher from `connects` when known ("... (TLSv1.3 TLS_AES_256_GCM_SHA384)").
std::string protocol_name(const LoadParams& params, const ConnectFigures* connects);

// The heading's line for --io uring ("  requests written through io_uring (--io uring): ...\n"),
// from params.io of a run, sweep or capacity search; "" for epoll (empty: files before it).
std::string io_text(const std::optional<std::string>& io);

// The sweep table with the seed's columns (concurrency, requests, throughput, median, p99) and
// X * mean R (Little's N), followed by the knee verdict with its rule, Little's law and warnings.
std::string render_sweep_text(const SweepDocument& doc);

// Every scenario's run summary under "== scenario NAME ==".
std::string render_scenarios_text(const ScenariosDocument& doc);

// The lines a sweep's report starts with: method and URL, the target when it differs, the
// levels and phases. Printed first by render_sweep_text and, before the sweep runs, above the
// live rows.
std::string sweep_heading(const LoadParams& params, const std::string& target, size_t levels,
                          bool open);

// The sweep's live table on the terminal while it runs: its header, and the row of one finished
// level from its repeats (figures of the median run by throughput), in fixed-width columns.
std::string live_sweep_header(bool by_rate);
std::string live_sweep_row(const std::vector<core::RunResult>& repeats, bool by_rate);

// Any document as the text the command that wrote it printed (`knee report FILE.json`).
std::string render_text(const Document& doc);

// The USL fit's lines ("USL fit: sigma ..., lambda 10218.1 IOPS ...", then its flags), or why
// there is none; "" when no fit was tried. unit: the throughput's ("req/s", "IOPS").
std::string usl_text(const std::optional<UslFigures>& usl, const std::optional<std::string>& error,
                     std::string_view unit);

// Rows of cells as columns two spaces apart, widths from the content, trailing spaces trimmed;
// one line per row. Columns are right-aligned except column c where `left[c]` is true.
std::string render_table(const std::vector<std::vector<std::string>>& rows,
                         const std::vector<bool>& left = {});

}  // namespace knee::report
