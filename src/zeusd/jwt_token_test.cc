#include "zeusd/jwt_token.h"

#include <jwt.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

namespace zeus::zeusd {
namespace {

const std::string kKey = "a-32-byte-signing-key-for-tests\n";  // the newline is part of the key
constexpr int64_t kNow = 1'800'000'000;

TokenIdentity alice(std::optional<int64_t> exp = std::nullopt) {
  return TokenIdentity{"alice", {Capability::kGpuRead, Capability::kCpuRead}, exp};
}

// A token signed by libjwt with any algorithm and raw claims (what a forger or another issuer
// would send).
std::string forge(jwt_alg_t alg, const std::string& key, const std::string& claims) {
  jwt_t* jwt = nullptr;
  EXPECT_EQ(jwt_new(&jwt), 0);
  EXPECT_EQ(jwt_add_grants_json(jwt, claims.c_str()), 0);
  EXPECT_EQ(jwt_set_alg(
                jwt, alg,
                alg == JWT_ALG_NONE ? nullptr : reinterpret_cast<const unsigned char*>(key.data()),
                alg == JWT_ALG_NONE ? 0 : static_cast<int>(key.size())),
            0);
  char* text = jwt_encode_str(jwt);
  std::string token = text ? text : "";
  std::free(text);
  jwt_free(jwt);
  return token;
}

TEST(JwtToken, IssuedTokenVerifiesWithItsClaims) {
  auto token = issue_token(kKey, alice(kNow + 3600));
  ASSERT_TRUE(token) << token.error().message;
  auto who = verify_token(kKey, *token, kNow);
  ASSERT_TRUE(who) << who.error().message;
  EXPECT_EQ(who->subject, "alice");
  EXPECT_EQ(who->scopes, (std::vector<Capability>{Capability::kGpuRead, Capability::kCpuRead}));
  EXPECT_EQ(who->expires_unix_s, kNow + 3600);
  EXPECT_TRUE(who->grants(Capability::kCpuRead));
  EXPECT_FALSE(who->grants(Capability::kGpuControl));
}

TEST(JwtToken, NoExpiryNeverExpires) {
  auto token = issue_token(kKey, alice());
  ASSERT_TRUE(token);
  auto who = verify_token(kKey, *token, kNow * 10);
  ASSERT_TRUE(who);
  EXPECT_FALSE(who->expires_unix_s);
}

TEST(JwtToken, ExpiryHasSixtySecondsOfLeeway) {
  auto token = issue_token(kKey, alice(kNow));
  ASSERT_TRUE(token);
  EXPECT_TRUE(verify_token(kKey, *token, kNow + kTokenLeewaySeconds));
  auto late = verify_token(kKey, *token, kNow + kTokenLeewaySeconds + 1);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().message, "Token has expired.");
}

TEST(JwtToken, AnotherKeyOrTheKeyWithoutItsNewlineFails) {
  auto token = issue_token(kKey, alice());
  ASSERT_TRUE(token);
  EXPECT_FALSE(verify_token("another key", *token, kNow));
  EXPECT_FALSE(verify_token(kKey.substr(0, kKey.size() - 1), *token, kNow));
}

TEST(JwtToken, AlgNoneAndHs512AreRefused) {
  const std::string claims = R"({"sub": "mallory", "scopes": ["gpu-control"]})";
  const std::string none = forge(JWT_ALG_NONE, "", claims);
  ASSERT_FALSE(none.empty());
  auto refused = verify_token(kKey, none, kNow);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("Invalid token"), std::string::npos);
  // Signed with the right key, but HS512: zeusd takes HS256 only.
  auto hs512 = verify_token(kKey, forge(JWT_ALG_HS512, kKey, claims), kNow);
  ASSERT_FALSE(hs512);
  EXPECT_NE(hs512.error().message.find("HS512"), std::string::npos);
  // The control: the same claims as HS256 verify.
  EXPECT_TRUE(verify_token(kKey, forge(JWT_ALG_HS256, kKey, claims), kNow));
}

TEST(JwtToken, MalformedTokensAndClaimsAreRefused) {
  for (const std::string& token :
       std::vector<std::string>{"", "abc", "a.b.c", "a.b", "....", std::string("x\0y", 3)}) {
    EXPECT_FALSE(verify_token(kKey, token, kNow)) << token;
  }
  // An unknown scope fails the whole token, as upstream's strict enum does.
  EXPECT_FALSE(
      verify_token(kKey, forge(JWT_ALG_HS256, kKey, R"({"sub":"a","scopes":["root"]})"), kNow));
  EXPECT_FALSE(
      verify_token(kKey, forge(JWT_ALG_HS256, kKey, R"({"sub":"a","scopes":"gpu-read"})"), kNow));
  EXPECT_FALSE(verify_token(kKey, forge(JWT_ALG_HS256, kKey, R"({"scopes":["gpu-read"]})"), kNow));
  EXPECT_FALSE(verify_token(kKey, forge(JWT_ALG_HS256, kKey, R"({"sub":7,"scopes":[]})"), kNow));
  EXPECT_FALSE(verify_token(
      kKey, forge(JWT_ALG_HS256, kKey, R"({"sub":"a","scopes":[],"exp":"soon"})"), kNow));
  EXPECT_FALSE(
      verify_token(kKey, forge(JWT_ALG_HS256, kKey, R"({"sub":"a","scopes":[],"exp":-5})"), kNow));
  // A signature changed by one character.
  std::string token = *issue_token(kKey, alice());
  token.back() = token.back() == 'A' ? 'B' : 'A';
  EXPECT_FALSE(verify_token(kKey, token, kNow));
}

TEST(JwtToken, FutureNbfOrIatIsRefusedBeyondTheLeeway) {
  // Unlike upstream (nbf off, iat never read): RFC 7519 §4.1.5, a token is not accepted before
  // its nbf; an iat in the future means one of the two clocks is wrong.
  auto claims = [](const std::string& extra) {
    return std::string(R"({"sub":"a","scopes":[],)") + extra + "}";
  };
  // Within the leeway: accepted (the issuer's clock may run a little ahead).
  EXPECT_TRUE(verify_token(
      kKey, forge(JWT_ALG_HS256, kKey, claims(R"("nbf":1800000060,"iat":1800000060)")), kNow));
  EXPECT_TRUE(verify_token(
      kKey, forge(JWT_ALG_HS256, kKey, claims(R"("nbf":1700000000,"iat":1700000000)")), kNow));

  auto nbf = verify_token(kKey, forge(JWT_ALG_HS256, kKey, claims(R"("nbf":1800000061)")), kNow);
  ASSERT_FALSE(nbf);
  EXPECT_EQ(nbf.error().message,
            "Token is not valid before 2027-01-15T08:01:01Z (its `nbf`; this zeusd's clock says "
            "2027-01-15T08:00:00Z); check this machine's and the issuer's clocks");

  auto iat = verify_token(kKey, forge(JWT_ALG_HS256, kKey, claims(R"("iat":9999999999)")), kNow);
  ASSERT_FALSE(iat);
  EXPECT_EQ(iat.error().message,
            "Token was issued in the future, at 2286-11-20T17:46:39Z (its `iat`; this zeusd's "
            "clock says 2027-01-15T08:00:00Z); check this machine's and the issuer's clocks");

  // A fractional NumericDate is a number too; a string is not.
  EXPECT_FALSE(
      verify_token(kKey, forge(JWT_ALG_HS256, kKey, claims(R"("nbf":1800000100.5)")), kNow));
  EXPECT_TRUE(
      verify_token(kKey, forge(JWT_ALG_HS256, kKey, claims(R"("nbf":1799999999.5)")), kNow));
  auto text = verify_token(kKey, forge(JWT_ALG_HS256, kKey, claims(R"("nbf":"tomorrow")")), kNow);
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().message.find("Invalid token: `nbf`"), std::string::npos);
  // A date past year 9999 is still named.
  auto far = verify_token(kKey, forge(JWT_ALG_HS256, kKey, claims(R"("nbf":1e15)")), kNow);
  ASSERT_FALSE(far);
  EXPECT_NE(far.error().message.find("not valid before Unix time 1000000000000000 "),
            std::string::npos)
      << far.error().message;
}

TEST(JwtToken, SigningKeyIsTheFilesRawBytes) {
  const std::string path = ::testing::TempDir() + "/zeusd_key_test";
  { std::ofstream(path, std::ios::binary) << kKey; }
  auto key = read_signing_key(path);
  ASSERT_TRUE(key);
  EXPECT_EQ(*key, kKey);
  { std::ofstream(path, std::ios::binary | std::ios::trunc); }
  auto empty = read_signing_key(path);
  ASSERT_FALSE(empty);
  EXPECT_NE(empty.error().message.find("empty"), std::string::npos);
  EXPECT_FALSE(read_signing_key(path + ".missing"));
}

TEST(JwtToken, LifetimeParsing) {
  EXPECT_EQ(*parse_token_lifetime("1h"), 3600);
  EXPECT_EQ(*parse_token_lifetime("7d"), 7 * 86400);
  EXPECT_EQ(*parse_token_lifetime("30d"), 30 * 86400);
  EXPECT_EQ(*parse_token_lifetime("1h 30m"), 5400);
  EXPECT_EQ(*parse_token_lifetime(" 2W "), 14 * 86400);
  EXPECT_EQ(*parse_token_lifetime("15min"), 900);
  EXPECT_EQ(*parse_token_lifetime("never"), std::nullopt);
  EXPECT_EQ(*parse_token_lifetime("0"), std::nullopt);
  for (const char* bad : {"", "h", "1", "1x", "-1h", "1h-", "0s", "1.5h", "101000d"}) {
    EXPECT_FALSE(parse_token_lifetime(bad)) << bad;
  }
}

}  // namespace
}  // namespace zeus::zeusd
