// Tests of labeldp/io/csv.hpp and io/atomic_file.hpp: prior files, numeric columns, line-per-label input and atomic
// writes. Every rejected input has its own test checking the exception type and that the
// message names the file, the line and the offending value.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bit>
#include <catch2/catch.hpp>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <labeldp/io/atomic_file.hpp>
#include <labeldp/io/csv.hpp>
#include <random>
#include <sstream>
#include <string>

using Catch::Matchers::Contains;
using labeldp::io::parse_double;
using labeldp::io::read_column_csv;
using labeldp::io::read_prior_csv;
namespace fs = std::filesystem;

namespace {

// A scratch directory per test program run, removed at exit.
struct ScratchDir {
  fs::path dir;
  ScratchDir() {
    dir = fs::temp_directory_path() / ("labeldp_test_csv_" + std::to_string(::getpid()));
    fs::create_directories(dir);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
};

const fs::path& scratch() {
  static ScratchDir d;
  return d.dir;
}

// Writes `text` (bytes as given) to a scratch file and returns its path.
std::string write(const std::string& name, const std::string& text) {
  const fs::path p = scratch() / name;
  std::ofstream(p, std::ios::binary) << text;
  return p.string();
}

}  // namespace

// Oracle for parse_double's exact fast path (plain decimals of at most 15 digits): the value
// is bit for bit std::from_chars's on 200,000 random decimals around the 15-digit limit (signs,
// leading zeros, dots anywhere, "5." and ".5"), and whatever from_chars rejects is rejected.
TEST_CASE("parse_double: the fast decimal path equals std::from_chars bit for bit", "[csv]") {
  std::mt19937_64 rng(20261127);
  for (int t = 0; t < 200000; ++t) {
    std::string s;
    if (rng() % 4 == 0) s += '-';
    const int digits = 1 + int(rng() % 18);
    const int dot = int(rng() % std::uint64_t(digits + 2)) - 1;  // -1: no dot
    for (int i = 0; i < digits; ++i) {
      if (i == dot) s += '.';
      s += char('0' + rng() % 10);
    }
    if (dot == digits) s += '.';
    if (rng() % 50 == 0) s += '.';  // sometimes a second dot: not a number
    INFO(s);
    double expected = 0;
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), expected);
    const auto got = parse_double(s);
    if (ec != std::errc{} || ptr != s.data() + s.size()) {
      CHECK_FALSE(got);
      continue;
    }
    REQUIRE(got);
    CHECK(std::bit_cast<std::uint64_t>(*got) == std::bit_cast<std::uint64_t>(expected));
  }
}

TEST_CASE("parse_double: strict whole-field numbers", "[csv]") {
  CHECK(parse_double("1e3") == 1000.0);
  CHECK(parse_double(" -0.5\t") == -0.5);
  CHECK(parse_double("+2") == 2.0);
  CHECK(parse_double("354.94") == 354.94);
  CHECK(parse_double(".5") == 0.5);
  CHECK_FALSE(parse_double("abc"));
  CHECK_FALSE(parse_double(""));
  CHECK_FALSE(parse_double("   "));
  CHECK_FALSE(parse_double("1.2.3"));
  CHECK_FALSE(parse_double("1,5"));
  CHECK_FALSE(parse_double("12abc"));
  CHECK_FALSE(parse_double("+-1"));
  CHECK_FALSE(parse_double("0x10"));
  CHECK_FALSE(parse_double("1 2"));
  REQUIRE(parse_double("1e400"));
  CHECK(std::isinf(*parse_double("1e400")));
  CHECK(*parse_double("-1e400") < 0);
  CHECK(*parse_double("1e-400") == 0.0);
  REQUIRE(parse_double("nan"));
  CHECK(std::isnan(*parse_double("nan")));
}

TEST_CASE("read_prior_csv: probabilities, any order, CRLF, blanks, quotes, trailing blank lines", "[csv]") {
  const auto path =
      write("ok_prob.csv", "\xEF\xBB\xBFvalue,prob\r\n 2 , 0.15\r\n0,0.6\r\n\"1\",\"0.25\"\r\n\r\n  \r\n");
  const auto prior = read_prior_csv(path);
  REQUIRE(prior.size() == 3);
  CHECK(prior.value(0) == 0.0);
  CHECK(prior.value(1) == 1.0);
  CHECK(prior.value(2) == 2.0);
  CHECK(prior.probability(0) == Approx(0.6).epsilon(1e-15));
  CHECK(prior.probability(1) == Approx(0.25).epsilon(1e-15));
  CHECK(prior.probability(2) == Approx(0.15).epsilon(1e-15));
}

TEST_CASE("read_prior_csv: counts are normalized", "[csv]") {
  const auto prior = read_prior_csv(write("ok_count.csv", "value,count\n10,1\n-5,3\n7.5,0\n"));
  REQUIRE(prior.size() == 3);
  CHECK(prior.value(0) == -5.0);
  CHECK(prior.probability(0) == Approx(0.75).epsilon(1e-15));
  CHECK(prior.probability(1) == 0.0);  // value 7.5 kept with probability 0
  CHECK(prior.probability(2) == Approx(0.25).epsilon(1e-15));
}

TEST_CASE("read_prior_csv: probabilities summing to 1 within 1e-9 are accepted", "[csv]") {
  const auto prior = read_prior_csv(write("ok_tol.csv", "value,prob\n0,0.5\n1,0.5000000005\n"));
  CHECK(prior.probabilities().sum() == Approx(1.0).epsilon(1e-15));
}

TEST_CASE("read_prior_csv rejects a missing file", "[csv]") {
  const std::string path = (scratch() / "does_not_exist.csv").string();
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ": cannot open file"));
}

TEST_CASE("read_prior_csv rejects a directory", "[csv]") {
  const std::string path = scratch().string();
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains("cannot open file") && Contains("directory"));
}

TEST_CASE("read_prior_csv rejects an empty file", "[csv]") {
  const auto path = write("empty.csv", "");
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":1: file is empty"));
}

TEST_CASE("read_prior_csv rejects a file with only blank lines", "[csv]") {
  const auto path = write("blank.csv", "\n  \n\r\n");
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":1: file is empty"));
}

TEST_CASE("read_prior_csv rejects a bad header", "[csv]") {
  const auto path = write("bad_header.csv", "value,probability\n0,1\n");
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":1: header 'value,probability' is not"));
}

TEST_CASE("read_prior_csv rejects a header with three columns", "[csv]") {
  const auto path = write("bad_header3.csv", "value,prob,extra\n0,1,2\n");
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":1: header 'value,prob,extra'"));
}

TEST_CASE("read_prior_csv rejects a header only", "[csv]") {
  const auto path = write("header_only.csv", "value,prob\n");
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":2: no data rows"));
}

TEST_CASE("read_prior_csv rejects a row with too many fields", "[csv]") {
  const auto path = write("fields3.csv", "value,prob\n0,0.5\n1,0.5,7\n");
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":3: expected 2 fields") && Contains("'1,0.5,7'"));
}

TEST_CASE("read_prior_csv rejects a row with one field", "[csv]") {
  const auto path = write("fields1.csv", "value,prob\n0,0.5\n1\n");
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":3: expected 2 fields") && Contains("got 1"));
}

TEST_CASE("read_prior_csv rejects a non-numeric value", "[csv]") {
  const auto path = write("nonnum_value.csv", "value,prob\n0,0.5\nabc,0.5\n");
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":3: value 'abc' is not a number"));
}

TEST_CASE("read_prior_csv rejects an empty probability", "[csv]") {
  const auto path = write("empty_prob.csv", "value,prob\n0,\n1,1\n");
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":2: probability '' is not a number"));
}

TEST_CASE("read_prior_csv rejects a probability like 1.2.3", "[csv]") {
  const auto path = write("dots.csv", "value,prob\n0,1.2.3\n");
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":2: probability '1.2.3' is not a number"));
}

TEST_CASE("read_prior_csv rejects an infinite value", "[csv]") {
  const auto path = write("inf_value.csv", "value,prob\ninf,1\n");
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":2: value inf is not finite"));
}

TEST_CASE("read_prior_csv rejects a NaN probability", "[csv]") {
  const auto path = write("nan_prob.csv", "value,prob\n0,nan\n1,1\n");
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":2: probability nan is not finite"));
}

TEST_CASE("read_prior_csv rejects an out-of-range count", "[csv]") {
  const auto path = write("huge_count.csv", "value,count\n0,1e400\n");
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":2: count 1e400 is not finite"));
}

TEST_CASE("read_prior_csv rejects a negative probability", "[csv]") {
  const auto path = write("prior.csv", "value,prob\n0,0.5\n1,0.3\n2,0.3\n3,0\n4,0\n5,-0.1\n");
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), path + ":7: probability -0.1 is negative");
}

TEST_CASE("read_prior_csv rejects a negative count", "[csv]") {
  const auto path = write("neg_count.csv", "value,count\n0,3\n1,-2\n");
  REQUIRE_THROWS_WITH(read_prior_csv(path), path + ":3: count -2 is negative");
}

TEST_CASE("read_prior_csv rejects a duplicate value, naming both lines", "[csv]") {
  const auto path = write("dup.csv", "value,prob\n1,0.25\n0,0.5\n1.0,0.25\n");
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), path + ":4: duplicate value 1 (also on line 2)");
}

TEST_CASE("read_prior_csv rejects all-zero probabilities", "[csv]") {
  const auto path = write("zero.csv", "value,prob\n0,0\n1,0\n");
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":2-3: all probability values are 0"));
}

TEST_CASE("read_prior_csv rejects all-zero counts", "[csv]") {
  const auto path = write("zero_count.csv", "value,count\n0,0\n");
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":2-2: all counts are 0"));
}

TEST_CASE("read_prior_csv rejects probabilities not summing to 1", "[csv]") {
  const auto path = write("sum.csv", "value,prob\n0,0.5\n1,0.4\n");
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":2-3: probabilities sum to 0.9") && Contains("not 1"));
}

TEST_CASE("read_prior_csv rejects probabilities summing to 1 + 2e-9", "[csv]") {
  const auto path = write("sum2.csv", "value,prob\n0,0.5\n1,0.500000002\n");
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains("probabilities sum to 1.000000002"));
}

TEST_CASE("read_prior_csv rejects a blank line inside the data", "[csv]") {
  const auto path = write("blank_mid.csv", "value,prob\n0,0.5\n\n1,0.5\n");
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":3: blank line inside the data"));
}

TEST_CASE("read_prior_csv rejects an unterminated quote", "[csv]") {
  const auto path = write("quote.csv", "value,prob\n0,\"0.5\n1,0.5\n");
  REQUIRE_THROWS_AS(read_prior_csv(path), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":2: quoted field is not closed"));
}

TEST_CASE("read_prior_csv rejects text after a closing quote", "[csv]") {
  const auto path = write("quote2.csv", "value,prob\n\"0\"x,1\n");
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":2: unexpected text after a closing quote: 'x,1'"));
}

TEST_CASE("read_prior_csv rejects a stray quote", "[csv]") {
  const auto path = write("quote3.csv", "value,prob\n0,0\"5\n");
  REQUIRE_THROWS_WITH(read_prior_csv(path), Contains(path + ":2: stray quote in unquoted field '0\"5'"));
}

TEST_CASE("read_column_csv: named column, quoted fields with commas and line breaks elsewhere", "[csv]") {
  const auto path = write("col.csv",
                          "name,wage,\"note\"\r\n"
                          "\"Smith, J\",354.94,\"said \"\"hi\"\"\"\r\n"
                          "Doe,1e3,\"two\nlines\"\r\n"
                          "  x  , 12 ,\r\n");
  const auto wages = read_column_csv(path, "wage");
  REQUIRE(wages.size() == 3);
  CHECK(wages[0] == 354.94);
  CHECK(wages[1] == 1000.0);
  CHECK(wages[2] == 12.0);
  // Line numbers count physical lines: the record after the quoted line break starts on line 5.
  std::vector<std::size_t> lines;
  labeldp::io::for_each_column_value(path, "wage", [&](double, std::size_t line) { lines.push_back(line); });
  CHECK(lines == std::vector<std::size_t>{2, 3, 5});
}

TEST_CASE("read_column_csv reads the bundled CPS 1988 wages", "[csv]") {
  const auto wages = read_column_csv(
      (fs::path(__FILE__).parent_path().parent_path().parent_path() / "examples/data/cps1988.csv").string(), "wage");
  REQUIRE(wages.size() == 28155);
  CHECK(wages.front() == 354.94);
  CHECK(*std::min_element(wages.begin(), wages.end()) == 50.05);
  CHECK(*std::max_element(wages.begin(), wages.end()) == 18777.2);
}

TEST_CASE("read_column_csv rejects a missing column", "[csv]") {
  const auto path = write("nocol.csv", "a,b\n1,2\n");
  REQUIRE_THROWS_AS(read_column_csv(path, "wage"), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_column_csv(path, "wage"), path + ":1: no column 'wage' in header 'a,b'");
}

TEST_CASE("read_column_csv rejects a column named twice", "[csv]") {
  const auto path = write("twice.csv", "wage,wage\n1,2\n");
  REQUIRE_THROWS_WITH(read_column_csv(path, "wage"), path + ":1: column 'wage' appears twice in the header");
}

TEST_CASE("read_column_csv rejects an empty file", "[csv]") {
  const auto path = write("col_empty.csv", "");
  REQUIRE_THROWS_WITH(read_column_csv(path, "wage"), Contains(path + ":1: file is empty"));
}

TEST_CASE("read_column_csv rejects a short row", "[csv]") {
  const auto path = write("short.csv", "wage,x\n1,2\n3\n");
  REQUIRE_THROWS_AS(read_column_csv(path, "wage"), std::invalid_argument);
  REQUIRE_THROWS_WITH(read_column_csv(path, "wage"), Contains(path + ":3: expected 2 fields, got 1 ('3')"));
}

TEST_CASE("read_column_csv rejects a non-numeric entry", "[csv]") {
  const auto path = write("col_nonnum.csv", "x,wage\n1,2\n1,n/a\n");
  REQUIRE_THROWS_WITH(read_column_csv(path, "wage"), path + ":3: wage 'n/a' is not a number");
}

TEST_CASE("read_column_csv rejects a non-finite entry", "[csv]") {
  const auto path = write("col_inf.csv", "wage\n1\n-inf\n");
  REQUIRE_THROWS_WITH(read_column_csv(path, "wage"), path + ":3: wage -inf is not finite");
}

TEST_CASE("read_column_csv: header only gives no values", "[csv]") {
  CHECK(read_column_csv(write("col_header.csv", "wage\r\n"), "wage").empty());
}

TEST_CASE("read_prior_csv and for_each_column_value read a stream as they read a file", "[csv]") {
  const std::string prior_text = "\xEF\xBB\xBFvalue,prob\r\n2,0.25\n\"0\",0.75\n";
  std::istringstream prior_in(prior_text);
  const auto from_stream = read_prior_csv(prior_in, "<prior>");
  const auto from_file = read_prior_csv(write("prior_stream.csv", prior_text));
  CHECK(from_stream.values() == from_file.values());
  CHECK(from_stream.probabilities() == from_file.probabilities());
  std::istringstream bad_prior("value,prob\n1,0.5\n1,0.5\n");
  REQUIRE_THROWS_WITH(read_prior_csv(bad_prior, "<prior>"), "<prior>:3: duplicate value 1 (also on line 2)");

  std::istringstream column_in("a,output\n1,2.5\n\"x,y\",-1\n");
  labeldp::io::CsvReader reader(column_in, "<outputs>");
  std::vector<double> v;
  std::vector<std::size_t> lines;
  labeldp::io::for_each_column_value(reader, "output", [&](double x, std::size_t line) {
    v.push_back(x);
    lines.push_back(line);
  });
  CHECK(v == std::vector<double>{2.5, -1.0});
  CHECK(lines == std::vector<std::size_t>{2, 3});
  std::istringstream no_column("a,b\n1,2\n");
  labeldp::io::CsvReader reader2(no_column, "<outputs>");
  REQUIRE_THROWS_WITH(labeldp::io::for_each_column_value(reader2, "output", [](double, std::size_t) {}),
                      "<outputs>:1: no column 'output' in header 'a,b'");
}

TEST_CASE("for_each_line_value: labels one per line", "[csv]") {
  std::istringstream in("1.5\r\n -2 \n1e2\n\n");
  std::vector<double> v;
  labeldp::io::for_each_line_value(in, "<stdin>", [&](double y, std::size_t) { v.push_back(y); });
  CHECK(v == std::vector<double>{1.5, -2.0, 100.0});
}

TEST_CASE("for_each_line_value rejects a non-numeric label", "[csv]") {
  std::istringstream in("1\n2\nabc\n");
  auto run = [&] { labeldp::io::for_each_line_value(in, "<stdin>", [](double, std::size_t) {}); };
  REQUIRE_THROWS_AS(run(), std::invalid_argument);
}

TEST_CASE("for_each_line_value names the line of a non-numeric label", "[csv]") {
  std::istringstream in("1\n2\nabc\n");
  REQUIRE_THROWS_WITH(labeldp::io::for_each_line_value(in, "<stdin>", [](double, std::size_t) {}),
                      "<stdin>:3: label 'abc' is not a number");
}

TEST_CASE("for_each_line_value rejects two fields on a line", "[csv]") {
  std::istringstream in("1\n2,3\n");
  REQUIRE_THROWS_WITH(labeldp::io::for_each_line_value(in, "labels.txt", [](double, std::size_t) {}),
                      Contains("labels.txt:2: expected one label per line, got 2 fields ('2,3')"));
}

TEST_CASE("write_file_atomically writes, replaces and leaves no temporary file", "[csv]") {
  const fs::path dir = scratch() / "atomic";
  fs::create_directories(dir);
  const std::string path = (dir / "out.txt").string();
  labeldp::io::write_file_atomically(path, "old\n");
  labeldp::io::write_file_atomically(path, "new content\n");
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "new content\n");
  int files = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    INFO(e.path().string());
    ++files;
  }
  CHECK(files == 1);
}

TEST_CASE("AtomicFileWriter: an uncommitted writer leaves the old file untouched", "[csv]") {
  const fs::path dir = scratch() / "atomic2";
  fs::create_directories(dir);
  const std::string path = (dir / "out.txt").string();
  labeldp::io::write_file_atomically(path, "keep\n");
  {
    labeldp::io::AtomicFileWriter w(path);
    w.write("partial");
    // destroyed without commit(), as when an error interrupts the output
  }
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "keep\n");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);
}

TEST_CASE("write_file_atomically rejects a missing directory", "[csv]") {
  const std::string path = (scratch() / "no_such_dir" / "out.txt").string();
  REQUIRE_THROWS_AS(labeldp::io::write_file_atomically(path, "x"), std::invalid_argument);
  REQUIRE_THROWS_WITH(labeldp::io::write_file_atomically(path, "x"), Contains(path + ": cannot write file"));
}

TEST_CASE("write_file_atomically rejects a directory as the target", "[csv]") {
  const std::string path = scratch().string();
  REQUIRE_THROWS_WITH(labeldp::io::write_file_atomically(path, "x"), Contains("it is a directory"));
}

TEST_CASE("CsvReader refuses a line longer than its limit, naming the line and the limit", "[csv]") {
  using labeldp::io::CsvReader;
  std::string text = "label\n1\n";
  text.append(CsvReader::max_record_bytes + 1, 'q');
  text += "\n2\n";
  std::istringstream in(text);
  CsvReader reader(in, "big.csv");
  std::vector<std::string> fields;
  REQUIRE(reader.next(fields));
  REQUIRE(reader.next(fields));
  CHECK(fields == std::vector<std::string>{"1"});
  try {
    reader.next(fields);
    FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    const std::string msg = e.what();
    CHECK(msg.rfind("big.csv:3: line is longer than 16777216 bytes", 0) == 0);
    CHECK(msg.find("qqq") == std::string::npos);  // the line itself is not echoed
  }
  // A line of exactly the limit is read.
  std::string ok(CsvReader::max_record_bytes, '5');
  std::istringstream in2(ok + "\n");
  CsvReader reader2(in2, "edge.csv");
  REQUIRE(reader2.next(fields));
  CHECK(fields.at(0).size() == CsvReader::max_record_bytes);
  CHECK_FALSE(reader2.next(fields));
}

TEST_CASE("CsvReader refuses a quoted record spanning lines beyond the limit", "[csv]") {
  using labeldp::io::CsvReader;
  std::string line(CsvReader::max_record_bytes / 2, 'x');
  std::istringstream in("\"" + line + "\n" + line + "\n" + line + "\"\n");
  CsvReader reader(in, "q.csv");
  std::vector<std::string> fields;
  REQUIRE_THROWS_WITH(reader.next(fields), Contains("q.csv:1: record is longer than 16777216 bytes"));
}

TEST_CASE("AtomicFileWriter keeps the mode of the file it replaces; a new file gets the umask's", "[csv]") {
  const fs::path dir = scratch() / "mode";
  fs::create_directories(dir);
  const std::string path = (dir / "out.txt").string();
  labeldp::io::write_file_atomically(path, "old\n");
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  labeldp::io::write_file_atomically(path, "new\n");
  CHECK((fs::status(path).permissions() & fs::perms::mask) ==
        (fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read));
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "new\n");
  const mode_t mask = ::umask(022);
  ::umask(mask);
  const std::string fresh = (dir / "fresh.txt").string();
  labeldp::io::write_file_atomically(fresh, "x");
  CHECK(int(fs::status(fresh).permissions() & fs::perms::mask) == int(0666 & ~mask));
}

TEST_CASE("AtomicFileWriter refuses a FIFO and follows a symbolic link to a regular file", "[csv]") {
  const fs::path dir = scratch() / "special";
  fs::create_directories(dir);
  const std::string fifo = (dir / "pipe").string();
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  REQUIRE_THROWS_WITH(labeldp::io::write_file_atomically(fifo, "x"),
                      Contains(fifo + ": cannot write file: it is not a regular file (a FIFO)"));
  CHECK(fs::is_fifo(fifo));
  REQUIRE_THROWS_WITH(labeldp::io::write_file_atomically("/dev/null", "x"),
                      Contains("/dev/null: cannot write file: it is not a regular file (a device)"));
  const fs::path real = dir / "real.txt", link = dir / "link.txt";
  labeldp::io::write_file_atomically(real.string(), "old");
  fs::create_symlink(real.filename(), link);
  labeldp::io::write_file_atomically(link.string(), "via link");
  CHECK(fs::is_symlink(link));
  std::ifstream in(real);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  CHECK(text == "via link");
  CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 3);  // pipe, real, link
}

TEST_CASE("AtomicFileWriter: SIGTERM or SIGINT during a write leaves no temporary file", "[csv]") {
  for (int sig : {SIGTERM, SIGINT}) {
    const fs::path dir = scratch() / ("signal" + std::to_string(sig));
    fs::create_directories(dir);
    const std::string path = (dir / "out.txt").string();
    labeldp::io::write_file_atomically(path, "keep\n");
    int ready[2];
    REQUIRE(::pipe(ready) == 0);
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::close(ready[0]);
      // Catch2 handles these signals; the program under test is one that does not.
      for (int s : {SIGINT, SIGTERM, SIGHUP}) ::signal(s, SIG_DFL);
      labeldp::io::remove_temporaries_on_signals();
      labeldp::io::AtomicFileWriter w(path);
      w.write("partial");
      const char c = 'r';
      if (::write(ready[1], &c, 1) != 1) ::_exit(3);
      for (;;) ::pause();  // killed by the signal
    }
    ::close(ready[1]);
    char c = 0;
    REQUIRE(::read(ready[0], &c, 1) == 1);
    ::close(ready[0]);
    // The temporary exists while the child writes.
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 2);
    ::kill(child, sig);
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    CHECK(WTERMSIG(status) == sig);  // ended by the signal, as without the handler
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator{}) == 1);
    std::ifstream in(path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    CHECK(text == "keep\n");
  }
}

TEST_CASE("read_prior_csv / read_histogram_csv: more than kMaxCsvRows rows are refused on the row past the limit",
          "[csv][limits]") {
  std::string prior = "value,count\n", hist = "lo,hi,mass\n";
  for (std::size_t i = 0; i <= labeldp::io::kMaxCsvRows; ++i) {
    prior += std::to_string(i) + ",1\n";
    hist += std::to_string(i) + "," + std::to_string(i + 1) + ",1\n";
  }
  std::istringstream p(prior), h(hist);
  CHECK_THROWS_WITH(read_prior_csv(p, "big_prior"),
                    "big_prior:4194306: more than 4194304 prior values (the reader's limit)");
  CHECK_THROWS_WITH(labeldp::io::read_histogram_csv(h, "big_hist"),
                    "big_hist:4194306: more than 4194304 histogram cells (the reader's limit)");
}

TEST_CASE("read_prior_csv: the value check runs on every value as it is read, naming its line", "[csv]") {
  std::istringstream in("value,prob\n0,0.5\n-1,0.5\n");
  labeldp::io::CsvReader reader(in, "p.csv");
  int calls = 0;
  CHECK_THROWS_WITH(read_prior_csv(reader,
                                   [&](double v, const labeldp::io::CsvReader& r) {
                                     ++calls;
                                     if (v < 0) r.fail("value is negative");
                                   }),
                    "p.csv:3: value is negative");
  CHECK(calls == 2);
}
