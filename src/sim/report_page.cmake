# web/report/, the frame and stylesheet of the HTML report (`zeus simulate --report`), into
# libzeus as zeus::sim::report_frame_html() for ReportWriter (src/sim/report_writer.cc). Included
# by the root CMakeLists.txt once libzeus is defined.
include(${PROJECT_SOURCE_DIR}/cmake/EmbedWeb.cmake)
zeus_embed_frame(zeus report FUNCTION zeus::sim::report_frame_html HEADER sim/report_writer.h)
