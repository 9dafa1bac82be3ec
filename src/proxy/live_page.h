// The proxy's live page, one self-contained HTML document (CSS and JavaScript inline, charts in
// inline SVG, no external fetch), built from web/live/ in the pages' shared frame (web/shared/)
// and compiled into the binary (cmake/EmbedWeb.cmake defines the function). Every value from
// the server is inserted as text, never as HTML.
//   live_page_html(): /zeus/ — requests in flight, energy per answer and J/token by model, the
//     GPUs' power timeline (one line per source) with the requests' spans drawn under it, and the
//     latest requests; live from the Server-Sent Events of /zeus/events (live_feed.h).
// Thread-safety: immutable data. Failure: none.
#pragma once

#include <string_view>

namespace zeus::proxy {

std::string_view live_page_html();

}  // namespace zeus::proxy
