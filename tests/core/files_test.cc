// core/files.h: outputs are written whole or not at all, never over an input, with the mode the
// file had.
#include "core/files.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace knee::core {
namespace {

class FilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string t = (std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp");
    t += "/knee-files-XXXXXX";
    dir_ = ::mkdtemp(t.data());
    ASSERT_FALSE(dir_.empty());
  }
  void TearDown() override { std::system(("rm -rf '" + dir_ + "'").c_str()); }

  std::string path(const std::string& name) const { return dir_ + "/" + name; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    if (DIR* d = ::opendir(dir_.c_str())) {
      while (dirent* e = ::readdir(d)) {
        const std::string n = e->d_name;
        if (n != "." && n != "..") out.push_back(n);
      }
      ::closedir(d);
    }
    return out;
  }
  static std::string contents(const std::string& p) {
    std::ifstream in(p);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static void put(const std::string& p, const std::string& text) { std::ofstream(p) << text; }

  std::string dir_;
};

TEST_F(FilesTest, AWrittenFileIsWholeAndNoTemporaryIsLeft) {
  OutputFile out;
  ASSERT_TRUE(out.open("--json", path("r.json")));
  // Opened, not yet written: only the temporary exists, the path does not.
  ASSERT_EQ(names().size(), 1u);
  EXPECT_EQ(names()[0].rfind(".r.json.", 0), 0u) << names()[0];
  ASSERT_TRUE(out.write("{\"kind\": \"run\"}\n"));
  EXPECT_EQ(contents(path("r.json")), "{\"kind\": \"run\"}\n");
  EXPECT_EQ(names(), std::vector<std::string>{"r.json"});
}

// An interrupted or failed command (the file is never written) leaves the old file as it was.
TEST_F(FilesTest, AFileNeverWrittenLeavesTheOldOneAsItWas) {
  put(path("r.json"), "earlier\n");
  {
    OutputFile out;
    ASSERT_TRUE(out.open("--json", path("r.json")));
    out.stream() << "half a resu";
  }
  EXPECT_EQ(contents(path("r.json")), "earlier\n");
  EXPECT_EQ(names(), std::vector<std::string>{"r.json"});
}

// Regression (issue 11): `knee report a.json -o a.json` overwrote its own input.
TEST_F(FilesTest, AnOutputThatIsAnInputIsRefusedWhateverItsSpelling) {
  put(path("a.json"), "input\n");
  for (const std::string& out_path : {path("a.json"), dir_ + "/./a.json"}) {
    OutputFile out;
    const Status s = out.open("-o", out_path, {path("a.json")});
    ASSERT_FALSE(s) << out_path;
    EXPECT_EQ(s.code(), Status::Code::kInvalidArgument);
    EXPECT_NE(s.message().find("-o: '" + out_path + "' is also an input"), std::string::npos)
        << s.message();
  }
  EXPECT_EQ(contents(path("a.json")), "input\n");
  EXPECT_EQ(names(), std::vector<std::string>{"a.json"});
}

TEST_F(FilesTest, ADirectoryOrAnUnwritablePathIsRefusedBeforeAnythingHappens) {
  OutputFile dir;
  const Status d = dir.open("--html", dir_);
  ASSERT_FALSE(d);
  EXPECT_NE(d.message().find("is a directory"), std::string::npos) << d.message();
  OutputFile missing;
  const Status m = missing.open("--html", path("no/such/dir/r.html"));
  ASSERT_FALSE(m);
  EXPECT_EQ(m.message().rfind("--html: cannot write '", 0), 0u) << m.message();
}

// Regression (found by a new user): the rename put a regular file in place of a device, a FIFO
// or a symbolic link.
TEST_F(FilesTest, ADeviceOrPipeIsRefusedAndALinkIsWrittenThrough) {
  ASSERT_EQ(::mkfifo(path("fifo").c_str(), 0600), 0);
  for (const std::string& p : {path("fifo"), std::string("/dev/null")}) {
    OutputFile out;
    const Status s = out.open("-o", p);
    ASSERT_FALSE(s) << p;
    EXPECT_NE(s.message().find("is not a regular file"), std::string::npos) << s.message();
  }
  struct stat st {};
  ASSERT_EQ(::lstat(path("fifo").c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
  ASSERT_EQ(::lstat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));

  put(path("target.html"), "old\n");
  ASSERT_EQ(::symlink("target.html", path("link.html").c_str()), 0);
  OutputFile out;
  ASSERT_TRUE(out.open("-o", path("link.html")));
  ASSERT_TRUE(out.write("new\n"));
  ASSERT_EQ(::lstat(path("link.html").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode)) << "the link itself was replaced";
  EXPECT_EQ(contents(path("target.html")), "new\n");
}

TEST_F(FilesTest, AnExistingFileKeepsItsMode) {
  put(path("r.json"), "old\n");
  ASSERT_EQ(::chmod(path("r.json").c_str(), 0640), 0);
  OutputFile out;
  ASSERT_TRUE(out.open("--json", path("r.json")));
  ASSERT_TRUE(out.write("new\n"));
  struct stat st {};
  ASSERT_EQ(::stat(path("r.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST_F(FilesTest, ReadingAMissingFileNamesTheFlagAndThePath) {
  auto r = read_text_file("--from", path("none.json"));
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().message(),
            "--from: cannot read '" + path("none.json") + "': No such file or directory");
  put(path("x"), "abc");
  EXPECT_EQ(*read_text_file("--from", path("x")), "abc");
}

}  // namespace
}  // namespace knee::core
