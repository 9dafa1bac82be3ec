#include "sim/report_writer.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

namespace zeus::sim {
namespace {

namespace fs = std::filesystem;

int count(std::string_view text, std::string_view part) {
  int n = 0;
  for (auto at = text.find(part); at != std::string_view::npos; at = text.find(part, at + part.size())) ++n;
  return n;
}

TEST(ReportWriterTest, TheEmbeddedFrameHasItsStyleAndOneTitleAndOneBodyMarker) {
  const std::string_view frame = report_frame_html();
  EXPECT_TRUE(frame.starts_with("<!DOCTYPE html>\n"));
  EXPECT_EQ(count(frame, "@TITLE@"), 1);
  EXPECT_EQ(count(frame, "@BODY@"), 1);
  EXPECT_LT(frame.find("@TITLE@"), frame.find("@BODY@"));
  EXPECT_EQ(count(frame, "@STYLE@"), 0);  // web/report/report.css is in its place
  EXPECT_NE(frame.find("border-collapse: collapse"), std::string_view::npos);
}

TEST(ReportWriterTest, TheHtmlIsTheFrameWithTheEscapedTitleAndTheElements) {
  const fs::path dir = fs::temp_directory_path() / ("zeus_report_writer_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  auto writer = ReportWriter::create(dir, "none");
  ASSERT_TRUE(writer.has_value()) << writer.error().to_string();
  writer->heading("Energy & time");
  writer->paragraph("a < b, \"quoted\", @BODY@ and @TITLE@ stay text");
  writer->table({"policy", "J"}, {{"Zeus", "1.5"}, {"<none>", "2"}});
  ASSERT_TRUE(writer->figure("energy", "set output 'energy.svg'\n", "Energy <per> run").has_value());
  auto finished = writer->finish("Report <1> & \"more\"");
  ASSERT_TRUE(finished.has_value()) << finished.error().to_string();

  std::ifstream in(dir / "index.html", std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string html = buffer.str();
  const std::string title = "Report &lt;1&gt; &amp; &quot;more&quot;";
  const std::string body =
      "<h1>" + title + "</h1>\n"
      "<p><em>The figures were not rendered: gnuplot was not found (or was disabled). Render them "
      "in this folder with `for f in *.gp; do gnuplot &quot;$f&quot;; done` (Debian package "
      "gnuplot-nox).</em></p>\n"
      "<h2>Energy &amp; time</h2>\n"
      "<p>a &lt; b, &quot;quoted&quot;, @BODY@ and @TITLE@ stay text</p>\n"
      "<table>\n<tr><th>policy</th><th>J</th></tr>\n<tr><td>Zeus</td><td>1.5</td></tr>\n"
      "<tr><td>&lt;none&gt;</td><td>2</td></tr>\n</table>\n"
      "<figure><img src=\"energy.svg\" alt=\"Energy &lt;per&gt; run\"><figcaption>Energy &lt;per&gt; "
      "run (script: energy.gp)</figcaption></figure>\n";
  // The frame with the title and the body in place of its markers, the rest unchanged.
  std::string expected(report_frame_html());
  expected.replace(expected.find("@BODY@"), 6, body);
  expected.replace(expected.find("@TITLE@"), 7, title);
  EXPECT_EQ(html, expected);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace zeus::sim
