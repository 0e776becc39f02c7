#include "database.hpp"

#include <SQLiteCpp/Database.h>
#include <SQLiteCpp/Statement.h>
#include <fmt/format.h>

#include <regex>
#include <stdexcept>

#if GPULAB_HAVE_POSTGRESQL
#include <pqxx/pqxx>
#endif

namespace gpulab::server {

namespace {

class SqliteConnection : public Connection {
 public:
  explicit SqliteConnection(const std::filesystem::path& file)
      : db_(file, SQLite::OPEN_READWRITE | SQLite::OPEN_CREATE) {
    // WAL: readers (the web pages) do not wait for a worker's write; a busy database is waited for.
    db_.exec("PRAGMA journal_mode=WAL");
    db_.exec("PRAGMA foreign_keys=ON");
    db_.setBusyTimeout(10000);
  }
  bool postgresql() const override { return false; }
  void begin() override { db_.exec("BEGIN IMMEDIATE"); }
  void commit() override { db_.exec("COMMIT"); }
  void rollback() override { db_.exec("ROLLBACK"); }
  void script(const std::string& sql) override { db_.exec(sql); }
  std::vector<Row> query(const std::string& sql, const std::vector<std::string>& params) override {
    // $N as SQLite's ?N: the same parameter however often, and in any order, it appears.
    static const std::regex dollar(R"(\$(\d+))");
    SQLite::Statement q(db_, std::regex_replace(sql, dollar, "?$1"));
    for (std::size_t i = 0; i < params.size(); ++i) q.bind(static_cast<int>(i + 1), params[i]);
    std::vector<Row> rows;
    while (q.executeStep()) {
      Row row;
      for (int c = 0; c < q.getColumnCount(); ++c)
        row.push_back(q.getColumn(c).isNull() ? Cell{} : Cell{q.getColumn(c).getString()});
      rows.push_back(std::move(row));
    }
    return rows;
  }

 private:
  SQLite::Database db_;
};

#if GPULAB_HAVE_POSTGRESQL
class PostgresConnection : public Connection {
 public:
  explicit PostgresConnection(const std::string& url) : db_(url) {}
  bool postgresql() const override { return true; }
  void begin() override { tx_ = std::make_unique<pqxx::work>(db_); }
  void commit() override {
    tx_->commit();
    tx_.reset();
  }
  void rollback() override {
    if (tx_) tx_->abort();
    tx_.reset();
  }
  void script(const std::string& sql) override {
    pqxx::work w(db_);
    w.exec(sql);
    w.commit();
  }
  std::vector<Row> query(const std::string& sql, const std::vector<std::string>& params) override {
    if (!tx_) throw std::logic_error("a PostgreSQL query outside a transaction");
    const pqxx::result r = tx_->exec_params(sql, pqxx::prepare::make_dynamic_params(params));
    std::vector<Row> rows;
    for (const auto& record : r) {
      Row row;
      for (const auto& field : record) row.push_back(field.is_null() ? Cell{} : Cell{field.c_str()});
      rows.push_back(std::move(row));
    }
    return rows;
  }

 private:
  pqxx::connection db_;
  std::unique_ptr<pqxx::work> tx_;
};
#endif

}  // namespace

std::unique_ptr<Connection> open_sqlite(const std::filesystem::path& file) {
  return std::make_unique<SqliteConnection>(file);
}

std::unique_ptr<Connection> open_postgresql(const std::string& url) {
#if GPULAB_HAVE_POSTGRESQL
  try {
    return std::make_unique<PostgresConnection>(url);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("cannot connect to the PostgreSQL database {}: {}", url, e.what()));
  }
#else
  throw std::runtime_error(fmt::format(
      "this build has no PostgreSQL client for {}: install libpqxx-dev and configure the build again", url));
#endif
}

}  // namespace gpulab::server
