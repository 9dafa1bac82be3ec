// The service's dashboard (GET /): one self-contained HTML page — CSS and JavaScript inline, no
// external fetches — built from web/dashboard/ in the pages' shared frame (web/shared/) and
// compiled into the binary (cmake/EmbedWeb.cmake defines dashboard_html()). It reads the JSON
// routes GET /jobs and GET /jobs/{job_id} and shows the jobs list and, for the selected job
// (#<job_id> in the URL, or the first), the trial timeline (batch size, stage, status, cost), each
// batch size's belief (mean cost ± spread, J) and a chart of the cost of each recurrence.
// Refreshes every 5 s. Every value from the server is inserted as text, never as HTML.
// Thread-safety: immutable data. Failure: none.
//
//   ApiResponse r;  r.body = std::string(dashboard_html());
//   r.content_type = "text/html; charset=utf-8";
#pragma once

#include <string_view>

namespace zeus::server {

// The page, as served.
std::string_view dashboard_html();

}  // namespace zeus::server
