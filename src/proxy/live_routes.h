// The live page's routes, shared by `zeus proxy` and its Colosseum: GET /zeus/ (the page,
// live_page.h), GET /zeus/state (the feed's snapshot as JSON), GET /zeus/events (the feed as
// Server-Sent Events; 503 when max_listeners listen already). GET /zeus redirects to /zeus/;
// another method on these paths is 405.
// Thread-safety: from any thread (the feed locks).
//
//   if (serve_live(feed, request, *reply)) return;  // else: the handler's other routes
#pragma once

#include "http/message.h"
#include "http/server.h"
#include "proxy/live_feed.h"

namespace zeus::proxy {

// True when `request` is one of the routes above (then it was answered).
bool serve_live(LiveFeed& feed, const http::HttpRequest& request, http::Reply& reply);

// A page as an answer: HTML, never cached.
http::HttpResponse html_page(std::string_view html);
// 200 with a JSON body.
http::HttpResponse json_answer(std::string body);
// A redirect (`status` 301 or 302) to `location`.
http::HttpResponse redirect(int status, std::string location);

}  // namespace zeus::proxy
