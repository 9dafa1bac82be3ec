// The Colosseum's page, one self-contained HTML document (CSS and JavaScript inline, no external
// fetch), built from web/colosseum/ in the pages' shared frame (web/shared/) and compiled into the
// binary (cmake/EmbedWeb.cmake defines the function). Every value from the server is inserted as
// text, never as HTML.
//   colosseum_page_html(): /zeus/colosseum — the duel: one prompt, two anonymous answers
//     streamed side by side (POST /prompt per side), the vote (POST /response_vote), then the
//     names and energies revealed, the "worth it" vote (POST /energy_vote), the leaderboard
//     (GET /zeus/leaderboard).
// Thread-safety: immutable data. Failure: none.
#pragma once

#include <string_view>

namespace zeus::proxy {

std::string_view colosseum_page_html();

}  // namespace zeus::proxy
