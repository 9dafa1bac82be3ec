#include "proxy/live_routes.h"

#include "proxy/live_page.h"

namespace zeus::proxy {

http::HttpResponse html_page(std::string_view html) {
  http::HttpResponse page;
  page.body = std::string(html);
  page.content_type = "text/html; charset=utf-8";
  page.headers.emplace_back("Cache-Control", "no-store");
  return page;
}

http::HttpResponse json_answer(std::string body) {
  http::HttpResponse answer;
  answer.body = std::move(body);
  return answer;
}

http::HttpResponse redirect(int status, std::string location) {
  http::HttpResponse moved;
  moved.status = status;
  moved.content_type = "text/plain";
  moved.headers.emplace_back("Location", std::move(location));
  return moved;
}

bool serve_live(LiveFeed& feed, const http::HttpRequest& request, http::Reply& reply) {
  const std::string& path = request.path;
  if (path != "/zeus" && path != "/zeus/" && path != "/zeus/state" && path != "/zeus/events") {
    return false;
  }
  if (request.method != "GET" && request.method != "HEAD") {
    http::HttpResponse refused = http::HttpResponse::error(405, path + " answers GET only");
    refused.headers.emplace_back("Allow", "GET, HEAD");
    reply.send(std::move(refused));
    return true;
  }
  if (path == "/zeus") {
    reply.send(redirect(301, "/zeus/"));
  } else if (path == "/zeus/") {
    reply.send(html_page(live_page_html()));
  } else if (path == "/zeus/state") {
    reply.send(json_answer(feed.snapshot_json()));
  } else if (feed.full()) {
    reply.send(http::HttpResponse::error(
        503, "too many live pages open; close one (or poll GET /zeus/state)"));
  } else if (auto events = reply.start_events()) {
    if (!feed.subscribe(events)) events->close();
  }
  return true;
}

}  // namespace zeus::proxy
