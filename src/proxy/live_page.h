// The proxy's pages, each one self-contained HTML document (CSS and JavaScript inline, charts in
// inline SVG, no external fetch), built from web/live/ and web/colosseum/ in the pages' shared
// frame (web/shared/) and compiled into the binary (cmake/EmbedWeb.cmake defines these
// functions). Every value from the server is inserted as text, never as HTML.
//   live_page_html(): /zeus/ — requests in flight, energy per answer and J/token by model, the
//     GPUs' power timeline (one line per source) with the requests' spans drawn under it, and the
//     latest requests; live from the Server-Sent Events of /zeus/events (live_feed.h).
//   colosseum_page_html(): /zeus/colosseum — the duel: one prompt, two anonymous answers
//     streamed side by side (POST /prompt per side), the vote (POST /response_vote), then the
//     names and energies revealed, the "worth it" vote (POST /energy_vote), the leaderboard
//     (GET /zeus/leaderboard).
// Thread-safety: immutable data. Failure: none.
#pragma once

#include <string_view>

namespace zeus::proxy {

std::string_view live_page_html();
std::string_view colosseum_page_html();

}  // namespace zeus::proxy
