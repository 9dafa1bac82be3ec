// Upstream's BSO server settings (ZEUS_BSO_*) as `zeus serve` reads them: precedence (flags,
// environment, .env), SQLAlchemy's URL forms, the port and log level checks, and passwords never
// shown (issue 37).
#include "server/bso_settings.h"

#include <gtest/gtest.h>

namespace zeus::server {
namespace {

TEST(BsoSettingsTest, UpstreamDockerSettingsFromTheEnvironmentWithTheirOrigins) {
  BsoSettingsInput in;
  in.environment = {{"ZEUS_BSO_DATABASE_URL", "postgresql+asyncpg://me:secret@db:5432/Zeus"},
                    {"ZEUS_BSO_SERVER_PORT", "8000"},
                    {"ZEUS_BSO_LOG_LEVEL", "WARN"}};
  auto s = resolve_bso_settings(in);
  ASSERT_TRUE(s.has_value()) << s.error().to_string();
  ASSERT_TRUE(s->database_url);
  EXPECT_EQ(s->database_url->value, "postgresql://me:secret@db:5432/Zeus");
  EXPECT_EQ(s->database_url->origin, "ZEUS_BSO_DATABASE_URL");
  EXPECT_EQ(s->database_url->shown,
            "postgresql+asyncpg://me:***@db:5432/Zeus, here postgresql://me:***@db:5432/Zeus");
  EXPECT_EQ(s->port, 8000);
  EXPECT_EQ(s->log_level, LogLevel::kWarning);
  EXPECT_TRUE(s->notes.empty());
}

TEST(BsoSettingsTest, TheEnvironmentWinsOverDotenvAndFlagsWinOverBoth) {
  BsoSettingsInput in;
  in.dotenv = {{"ZEUS_BSO_SERVER_PORT", "9000"}, {"ZEUS_BSO_DATABASE_URL", "sqlite:///a.db"}};
  in.dotenv_path = "/srv/bso/.env";
  in.environment = {{"ZEUS_BSO_SERVER_PORT", "8000"}};
  auto s = resolve_bso_settings(in);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->port, 8000);
  EXPECT_EQ(s->port_origin->origin, "ZEUS_BSO_SERVER_PORT");
  EXPECT_EQ(s->database_url->origin, "ZEUS_BSO_DATABASE_URL in /srv/bso/.env");
  in.db_flag = in.port_flag = true;
  s = resolve_bso_settings(in);
  ASSERT_TRUE(s.has_value());
  EXPECT_FALSE(s->database_url);
  EXPECT_FALSE(s->port);
  ASSERT_EQ(s->notes.size(), 2u);
  EXPECT_NE(s->notes[0].find("--db was given"), std::string::npos) << s->notes[0];
}

TEST(BsoSettingsTest, SqlalchemyUrlsBecomeTheStoreFactorysForms) {
  EXPECT_EQ(store_url_from_sqlalchemy("sqlite+aiosqlite:///dummy.db").value(), "sqlite://dummy.db");
  EXPECT_EQ(store_url_from_sqlalchemy("sqlite:////var/lib/zeus/bso.db").value(),
            "sqlite:///var/lib/zeus/bso.db");
  EXPECT_EQ(store_url_from_sqlalchemy("sqlite+aiosqlite:///:memory:").value(), "memory://");
  EXPECT_EQ(store_url_from_sqlalchemy("postgres://u@h/d").value(), "postgresql://u@h/d");
  EXPECT_EQ(store_url_from_sqlalchemy("mysql+asyncmy://me:pw@db:3306/Zeus").value(),
            "mysql://me:pw@db:3306/Zeus");
  for (const char* bad : {"oracle+cx://u:pw@h/d", "no-scheme", "sqlite://relative.db"}) {
    auto r = store_url_from_sqlalchemy(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().message.find("pw@"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("upstream's forms"), std::string::npos);
  }
}

TEST(BsoSettingsTest, AWrongSettingIsAnErrorNamingItAndNeverShowsThePassword) {
  BsoSettingsInput in;
  in.environment = {{"ZEUS_BSO_DATABASE_URL", "oracle://me:hunter2@db/Zeus"}};
  auto s = resolve_bso_settings(in);
  ASSERT_FALSE(s.has_value());
  EXPECT_NE(s.error().message.find("ZEUS_BSO_DATABASE_URL"), std::string::npos);
  EXPECT_EQ(s.error().message.find("hunter2"), std::string::npos) << s.error().message;
  for (const char* port : {"80x", "-1", "65536", ""}) {
    in.environment = {{"ZEUS_BSO_SERVER_PORT", port}};
    s = resolve_bso_settings(in);
    ASSERT_FALSE(s.has_value()) << port;
    EXPECT_NE(s.error().message.find("ZEUS_BSO_SERVER_PORT"), std::string::npos);
  }
}

TEST(BsoSettingsTest, LogLevelsAsUpstreamReadsThemAndOthersSaid) {
  BsoSettingsInput in;
  in.environment = {{"ZEUS_BSO_LOG_LEVEL", "debug"}, {"ZEUS_BSO_ECHO_SQL", "True"}};
  auto s = resolve_bso_settings(in);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->log_level, LogLevel::kDebug);
  ASSERT_EQ(s->notes.size(), 1u);  // echo_sql: read, said, not done
  EXPECT_NE(s->notes[0].find("ZEUS_BSO_ECHO_SQL"), std::string::npos);
  in.environment = {{"ZEUS_BSO_LOG_LEVEL", "LOUD"}};
  s = resolve_bso_settings(in);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->log_level, LogLevel::kInfo);
  ASSERT_EQ(s->notes.size(), 1u);
  in.log_level_env = true;  // ZEUS_LOG_LEVEL set: ours wins
  s = resolve_bso_settings(in);
  EXPECT_FALSE(s->log_level);
}

TEST(BsoSettingsTest, DotenvFilesAsPythonDotenvReadsThem) {
  auto vars = parse_dotenv(
      "# upstream's example\n"
      "ZEUS_BSO_DB_USER=\"me\" \n"
      "export ZEUS_BSO_SERVER_PORT=8000\n"
      "\n"
      "ZEUS_BSO_DATABASE_URL='mysql+asyncmy://me:se#cret@localhost:3306/Zeus'\n"
      "ZEUS_BSO_LOG_LEVEL=INFO # a comment\n"
      "QUOTED=\"a \\\"b\\\"\\n\"\r\n");
  ASSERT_TRUE(vars.has_value()) << vars.error().to_string();
  EXPECT_EQ(vars->at("ZEUS_BSO_DB_USER"), "me");
  EXPECT_EQ(vars->at("ZEUS_BSO_SERVER_PORT"), "8000");
  EXPECT_EQ(vars->at("ZEUS_BSO_DATABASE_URL"), "mysql+asyncmy://me:se#cret@localhost:3306/Zeus");
  EXPECT_EQ(vars->at("ZEUS_BSO_LOG_LEVEL"), "INFO");
  EXPECT_EQ(vars->at("QUOTED"), "a \"b\"\n");
  for (const char* bad : {"NOEQUALS\n", "A=\"open\n", "1 2=x\n", "A='x' y\n"}) {
    auto r = parse_dotenv(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_NE(r.error().message.find(".env line 1"), std::string::npos) << r.error().message;
  }
}

}  // namespace
}  // namespace zeus::server
