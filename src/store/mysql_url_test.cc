// parse_mysql_url(): the MySQL/MariaDB URL forms taken apart, and every malformed one refused
// with the problem named and the password hidden (no server needed).
#include "store/mysql_url.h"

#include <gtest/gtest.h>

namespace zeus {
namespace {

using store::MysqlUrl;
using store::parse_mysql_url;

TEST(MysqlUrl, TheUsualFormInEveryScheme) {
  for (const std::string scheme :
       {"mysql", "mariadb", "mysql+asyncmy", "mysql+pymysql", "mariadb+mariadbconnector"}) {
    Result<MysqlUrl> u = parse_mysql_url(scheme + "://me:secret@db.internal:3307/Zeus");
    ASSERT_TRUE(u.has_value()) << scheme << ": " << u.error().to_string();
    EXPECT_EQ(u->host, "db.internal");
    EXPECT_EQ(u->port, 3307u);
    EXPECT_EQ(u->user, "me");
    EXPECT_EQ(u->password, "secret");
    EXPECT_EQ(u->database, "Zeus");
    EXPECT_EQ(u->unix_socket, "");
    EXPECT_EQ(u->shown, scheme + "://me:***@db.internal:3307/Zeus");
    EXPECT_TRUE(store::is_mysql_url(scheme + "://me:secret@db.internal:3307/Zeus"));
  }
  for (const std::string other : {"postgresql://u@h/d", "mysql+://u@h/d", "mysql+a-b://u@h/d",
                                  "sqlite:///x.db", "MYSQL://u@h/d", "mysqlx://u@h/d"}) {
    EXPECT_FALSE(store::is_mysql_url(other)) << other;
  }
}

TEST(MysqlUrl, DefaultsAndOptionalParts) {
  Result<MysqlUrl> u = parse_mysql_url("mysql://db/zeus");
  ASSERT_TRUE(u.has_value()) << u.error().to_string();
  EXPECT_EQ(u->host, "db");
  EXPECT_EQ(u->port, 3306u);
  EXPECT_FALSE(u->user.has_value());
  EXPECT_FALSE(u->password.has_value());
  EXPECT_EQ(u->connect_timeout_s, 10u);
  u = parse_mysql_url("mysql://me@db/zeus");
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->user, "me");
  EXPECT_FALSE(u->password.has_value());
  u = parse_mysql_url("mysql://me:@db/zeus");  // an empty password is a password
  ASSERT_TRUE(u.has_value());
  EXPECT_EQ(u->password, "");
}

TEST(MysqlUrl, PercentEncodingAndAnUnencodedAt) {
  Result<MysqlUrl> u = parse_mysql_url("mysql://m%C3%A9:p%40ss%3Aw%2Frd%25@h/my%2Ddb");
  ASSERT_TRUE(u.has_value()) << u.error().to_string();
  EXPECT_EQ(u->user, "m\xc3\xa9");
  EXPECT_EQ(u->password, "p@ss:w/rd%");
  EXPECT_EQ(u->database, "my-db");
  // SQLAlchemy users often leave '@' unencoded: the userinfo ends at the last '@'.
  u = parse_mysql_url("mysql://me:p@ss@h:3306/db");
  ASSERT_TRUE(u.has_value()) << u.error().to_string();
  EXPECT_EQ(u->password, "p@ss");
  EXPECT_EQ(u->host, "h");
  EXPECT_EQ(u->shown, "mysql://me:***@h:3306/db");
}

// SQLAlchemy accepts '/', '?', '#' and '@' in a password as they are (a base64 password often
// holds '/'): the same URL is read here, and no message shows any part of that password.
TEST(MysqlUrl, PasswordsWithSlashQuestionHashAreReadAndNeverShown) {
  const std::string passwords[] = {"S3cr#tPw", "Ab/cd+ef==", "wh?at", "a/b?c#d@e", "x@/y"};
  for (const std::string& pw : passwords) {
    Result<MysqlUrl> u = parse_mysql_url("mysql+asyncmy://zeus:" + pw + "@127.0.0.1:18720/zeus");
    ASSERT_TRUE(u.has_value()) << pw << ": " << u.error().to_string();
    EXPECT_EQ(u->password, pw);
    EXPECT_EQ(u->host, "127.0.0.1");
    EXPECT_EQ(u->port, 18720u);
    EXPECT_EQ(u->database, "zeus");
    EXPECT_EQ(u->shown, "mysql+asyncmy://zeus:***@127.0.0.1:18720/zeus") << pw;
    // Refused for another reason: the message still hides the password, whole and in parts.
    Result<MysqlUrl> bad = parse_mysql_url("mysql://zeus:" + pw + "@127.0.0.1:0/zeus");
    ASSERT_FALSE(bad.has_value()) << pw;
    EXPECT_EQ(bad.error().message.find(pw), std::string::npos) << bad.error().message;
    EXPECT_NE(bad.error().message.find("zeus:***@127.0.0.1:0/zeus"), std::string::npos)
        << bad.error().message;
  }
  // A '@' in a parameter after the path is not userinfo.
  Result<MysqlUrl> u = parse_mysql_url("mysql://u:pw@/db?unix_socket=/run/a@b.sock");
  ASSERT_TRUE(u.has_value()) << u.error().to_string();
  EXPECT_EQ(u->password, "pw");
  EXPECT_EQ(u->unix_socket, "/run/a@b.sock");
}

TEST(MysqlUrl, TlsParameters) {
  Result<MysqlUrl> u = parse_mysql_url(
      "mysql://u:p@db:3306/z?ssl_mode=VERIFY_IDENTITY&ssl_ca=/etc/ca.pem&ssl_cert=/c.pem&"
      "ssl_key=/k.pem");
  ASSERT_TRUE(u.has_value()) << u.error().to_string();
  EXPECT_EQ(u->ssl_mode, "verify_identity");
  EXPECT_EQ(u->ssl_ca, "/etc/ca.pem");
  EXPECT_EQ(u->ssl_cert, "/c.pem");
  EXPECT_EQ(u->ssl_key, "/k.pem");
  EXPECT_EQ(parse_mysql_url("mysql://u@db/z?ssl_ca=/ca.pem")->ssl_mode, "verify_ca");
  EXPECT_EQ(parse_mysql_url("mysql://u@db/z?ssl=true")->ssl_mode, "required");
  EXPECT_EQ(parse_mysql_url("mysql://u@db/z?sslmode=require")->ssl_mode, "required");
  EXPECT_EQ(parse_mysql_url("mysql://u@db/z")->ssl_mode, "");
}

TEST(MysqlUrl, SocketsIpv6AndParameters) {
  Result<MysqlUrl> u =
      parse_mysql_url("mysql://me:pw@/zeus?unix_socket=/run/mysqld/mysqld.sock&charset=utf8mb4");
  ASSERT_TRUE(u.has_value()) << u.error().to_string();
  EXPECT_EQ(u->host, "");
  EXPECT_EQ(u->unix_socket, "/run/mysqld/mysqld.sock");
  u = parse_mysql_url("mariadb://me@localhost/zeus?unix_socket=%2Ftmp%2Fa%20b.sock");
  ASSERT_TRUE(u.has_value()) << u.error().to_string();
  EXPECT_EQ(u->host, "localhost");
  EXPECT_EQ(u->unix_socket, "/tmp/a b.sock");
  u = parse_mysql_url("mysql://me@[::1]:3310/zeus?connect_timeout=3&charset=utf8");
  ASSERT_TRUE(u.has_value()) << u.error().to_string();
  EXPECT_EQ(u->host, "::1");
  EXPECT_EQ(u->port, 3310u);
  EXPECT_EQ(u->connect_timeout_s, 3u);
  u = parse_mysql_url("mysql://me@[fe80::1]/zeus");
  ASSERT_TRUE(u.has_value()) << u.error().to_string();
  EXPECT_EQ(u->host, "fe80::1");
  EXPECT_EQ(u->port, 3306u);
}

TEST(MysqlUrl, MalformedUrlsAreRefusedByNameWithoutThePassword) {
  const std::pair<std::string, std::string> cases[] = {
      {"mysql://me:hunter2@h:3306", "names no database"},
      {"mysql://me:hunter2@h:3306/", "names no database"},
      {"mysql://me:hunter2@h:0/db", "port '0'"},
      {"mysql://me:hunter2@h:65536/db", "port '65536'"},
      {"mysql://me:hunter2@h:33o6/db", "port '33o6'"},
      {"mysql://me:hunter2@h:/db", "port ''"},
      {"mysql://me:hunter2@/db", "names no host"},
      {"mysql://me:hunter2@h/db?unix_socket=relative.sock", "absolute path"},
      {"mysql://me:hunter2@h/db?charset=latin1", "charset 'latin1'"},
      {"mysql://me:hunter2@h/db?connect_timeout=0", "connect_timeout '0'"},
      {"mysql://me:hunter2@h/db?connect_timeout", "no valid value"},
      {"mysql://me:hunter2@h/db?tls=true", "unknown parameter 'tls'"},
      {"mysql://me:hunter2@h/db?ssl=maybe", "ssl 'maybe'"},
      {"mysql://me:hunter2@h/db?ssl_mode=strict", "ssl_mode 'strict'"},
      {"mysql://me:hunter2@h/db?ssl_ca=ca.pem", "absolute path"},
      {"mysql://me:hunter2@h/db?ssl_cert=/c.pem", "go together"},
      {"mysql://me:hunter2@h/db?password=x", "unknown parameter 'password'"},
      {"mysql://me:hunter2@[::1/db", "closing ']'"},
      {"mysql://me:hunter2%@h/db", "bad %-escape"},
      {"mysql://me:hunter2@h/d%zzb", "database name"},
      {"mysql://me:hunter2@h/a/b", "database name"},
      {"oracle://me:hunter2@h/db", "not a MySQL or MariaDB URL"},
  };
  for (const auto& [url, why] : cases) {
    Result<MysqlUrl> u = parse_mysql_url(url);
    ASSERT_FALSE(u.has_value()) << url;
    EXPECT_EQ(u.error().code, ErrorCode::kInvalidArgument) << url;
    EXPECT_NE(u.error().message.find(why), std::string::npos) << url << ": " << u.error().message;
    EXPECT_EQ(u.error().message.find("hunter2"), std::string::npos) << u.error().message;
    EXPECT_NE(u.error().message.find("mysql://user:password@host:port/database"), std::string::npos)
        << u.error().message;
  }
}

}  // namespace
}  // namespace zeus
