#include <gtest/gtest.h>

#include "store/store.h"

namespace gpurent {
namespace {

TEST(OpenStore, TellsAPostgresUrlFromAFile) {
  EXPECT_TRUE(is_postgres_url("postgresql://app@db.internal/gpurent"));
  EXPECT_TRUE(is_postgres_url("postgres://localhost/gpurent"));
  EXPECT_FALSE(is_postgres_url("var/gpurent.db"));
  EXPECT_FALSE(is_postgres_url("./postgresql://x"));  // a relative file path that merely contains it
  EXPECT_FALSE(is_postgres_url(""));
}

TEST(OpenStore, DescribesADatabaseWithoutItsPassword) {
  EXPECT_EQ(describe_db("var/gpurent.db"), "var/gpurent.db");
  EXPECT_EQ(describe_db("postgresql://app:s3cret@db:5432/gpurent"), "postgresql://app:***@db:5432/gpurent");
  // libpq reads '?' and '#' in a password as part of it (it ends the authority at '/' only).
  EXPECT_EQ(describe_db("postgresql://app:s3cr?t#x@db/gpurent"), "postgresql://app:***@db/gpurent");
  EXPECT_EQ(describe_db("postgresql://app:p@ss@db/gpurent"), "postgresql://app:***@db/gpurent");
  EXPECT_EQ(describe_db("postgresql://db/gpurent?user=app"), "postgresql://db/gpurent?user=app");
  // No path: a query's '@' is not the authority's, and its password is masked as a parameter.
  EXPECT_EQ(describe_db("postgresql://app@db:5432?password=p@ss"), "postgresql://app@db:5432?password=***");
  EXPECT_EQ(describe_db("postgresql://app:pw@db:5432?password=p@ss"), "postgresql://app:***@db:5432?password=***");
  EXPECT_EQ(describe_db("postgresql://app:pa?ss@db"), "postgresql://app:***@db");
  EXPECT_EQ(describe_db("postgresql://app@db/gpurent?password=s3cret&sslmode=require"),
            "postgresql://app@db/gpurent?password=***&sslmode=require");
  EXPECT_EQ(describe_db("postgresql://app@db/gpurent?sslmode=require&password=s3cret"),
            "postgresql://app@db/gpurent?sslmode=require&password=***");
  EXPECT_EQ(describe_db("postgresql:///gpurent?host=/run/postgresql"), "postgresql:///gpurent?host=/run/postgresql");
  // A '@' in the path or query is not the authority's.
  EXPECT_EQ(describe_db("postgresql://db/gpurent?application_name=a@b"), "postgresql://db/gpurent?application_name=a@b");
  // A parameter that merely ends in "password=" is not the password.
  EXPECT_EQ(describe_db("postgresql://db/x?notpassword=1"), "postgresql://db/x?notpassword=1");
}

}  // namespace
}  // namespace gpurent
