// The HTML report's web assets, embedded into the binary at build time by
// cmake/embed_file.cmake (see src/report/CMakeLists.txt): uPlot's minified script and style sheet
// from npm (version pinned by web/package-lock.json, installed with `npm ci` in the build folder)
// and our own web/report.js and web/report.css. Each returns the file's bytes, unchanged; the
// views point at static storage. Thread-safety: constant data.
#pragma once

#include <string_view>

namespace knee::report::web {

std::string_view uplot_js();     // node_modules/uplot/dist/uPlot.iife.min.js (defines uPlot)
std::string_view uplot_css();    // node_modules/uplot/dist/uPlot.min.css
std::string_view report_js();    // web/report.js: draws the charts of the knee-data block
std::string_view report_css();   // web/report.css: the page's own style
std::string_view sim_js();       // web/sim.js: the Traffic Lab's simulation (KneeSim), no DOM
std::string_view sim_page_js();  // web/sim_page.js: the Traffic Lab's controls and charts

}  // namespace knee::report::web
