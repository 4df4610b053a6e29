// SPDX-License-Identifier: BSD-3-Clause
// fscore's populate builds from the SourceTree it is handed, not from the
// host: a tree held in memory (a nested directory, a file with a hole, a
// hard link, a symlink, a FIFO, entries listed out of order, files for
// lost+found) goes into an image, and e2fsprogs' e2fsck and debugfs read it
// back. The host's own directories (HostTree) are tested through
// fs-populate= in the kernel and mkfs tests.
#include <catch2/catch.hpp>

#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "fscore/ext4/image_builder.h"
#include "fscore/ext4/populate.h"
#include "fscore/ext4/source_tree.h"
#include "server_fixture.h"
#include "tests/support/sparse_image.h"
#include "tools/nvj/host/processes/process.h"

namespace populate_test {

namespace ext4 = fscore::ext4;

namespace {

constexpr std::uint64_t kMiB = std::uint64_t{1} << 20;

struct Node {
  ext4::SourceEntry entry;
  std::string content;             // a file's bytes (holes are zeros), a symlink's target
  std::vector<ext4::ByteRange> data;  // a file's data ranges
  std::vector<std::string> children;  // a directory's entries, by path
};

// A tree in memory: nodes by path, the root is "".
class MemoryTree final : public ext4::SourceTree {
 public:
  std::map<std::string, Node> nodes;

  ext4::Attributes root_attributes() override { return attributes(0700); }
  std::unique_ptr<ext4::SourceDirectory> open_root() override { return std::make_unique<Dir>(*this, ""); }

  static ext4::Attributes attributes(std::uint16_t permissions) {
    ext4::Attributes a;
    a.permissions = permissions;
    a.uid = 1000;
    a.gid = 100;
    a.atime = a.mtime = a.ctime = a.crtime = {1700000000, 42};
    return a;
  }

  void add(const std::string& parent, const std::string& name, ext4::FileType type, std::string content = {},
           std::vector<ext4::ByteRange> data = {}) {
    Node n;
    n.entry.name = name;
    n.entry.path = parent + "/" + name;
    n.entry.type = type;
    n.entry.attributes = attributes(type == ext4::FileType::kDirectory ? 0750 : 0640);
    n.entry.size = content.size();
    n.content = std::move(content);
    n.data = std::move(data);
    nodes[parent].children.insert(nodes[parent].children.begin(), n.entry.path);  // newest first: out of order
    nodes[n.entry.path] = std::move(n);
  }

 private:
  class File final : public ext4::SourceFile {
   public:
    explicit File(const Node& n) : n_(n) {}
    std::vector<ext4::ByteRange> data_ranges() override { return n_.data; }
    void read(std::uint64_t offset, std::span<std::uint8_t> buffer) override {
      REQUIRE(offset + buffer.size() <= n_.content.size());
      std::copy_n(n_.content.begin() + static_cast<std::ptrdiff_t>(offset), buffer.size(), buffer.begin());
    }

   private:
    const Node& n_;
  };

  class Dir final : public ext4::SourceDirectory {
   public:
    Dir(MemoryTree& tree, std::string path) : tree_(tree), path_(std::move(path)) {}
    std::vector<ext4::SourceEntry> entries() override {
      std::vector<ext4::SourceEntry> out;
      for (const std::string& child : tree_.nodes[path_].children) out.push_back(tree_.nodes.at(child).entry);
      return out;
    }
    std::unique_ptr<ext4::SourceDirectory> open_directory(const ext4::SourceEntry& e) override {
      return std::make_unique<Dir>(tree_, e.path);
    }
    std::unique_ptr<ext4::SourceFile> open_file(const ext4::SourceEntry& e) override {
      return std::make_unique<File>(tree_.nodes.at(e.path));
    }
    std::string read_link(const ext4::SourceEntry& e) override { return tree_.nodes.at(e.path).content; }

   private:
    MemoryTree& tree_;
    std::string path_;
  };
};

std::string debugfs(const std::string& image, const std::string& request) {
  const auto r = nvj::cli::run({"debugfs", "-R", request, image});
  REQUIRE(r.status == 0);
  return r.output;
}

}  // namespace

TEST_CASE("populate builds the tree it is handed, and e2fsck and debugfs read it back", "[populate]") {
  MemoryTree tree;
  std::string sparse(3 * 4096 + 100, '\0');  // data, a hole of two blocks, data
  std::fill_n(sparse.begin(), 4096, 'a');
  std::fill_n(sparse.begin() + 3 * 4096, 100, 'z');
  tree.add("", "dir", ext4::FileType::kDirectory);
  tree.add("/dir", "sparse", ext4::FileType::kRegular, sparse, {{0, 4096}, {3 * 4096, 100}});
  tree.add("/dir", "link", ext4::FileType::kSymlink, "sparse");
  tree.add("", "fifo", ext4::FileType::kFifo);
  tree.add("", "first", ext4::FileType::kRegular, "one file, two names\n", {{0, 20}});
  tree.add("/dir", "second", ext4::FileType::kRegular, "one file, two names\n", {{0, 20}});
  tree.nodes["/first"].entry.link_identity = tree.nodes["/dir/second"].entry.link_identity = std::pair{7u, 9u};
  tree.add("", "lost+found", ext4::FileType::kDirectory);
  tree.add("/lost+found", "orphan", ext4::FileType::kRegular, "x", {{0, 1}});
  tree.nodes["/first"].entry.xattrs = 2;

  ext4::ImageOptions o;
  o.device_bytes = 16 * kMiB;
  o.block_size = 4096;
  o.journal = ext4::JournalKind::kInternal;
  o.now = {1700000000, 0};
  nvj::test::SparseImage image(o.device_bytes);
  ext4::ImageBuilder builder(o, &image);
  const ext4::PopulateCounts counts = ext4::populate(builder, tree);
  builder.finish();
  CHECK(counts.directories == 1);  // lost+found is the image's own
  CHECK(counts.files == 3);
  CHECK(counts.hard_links == 1);
  CHECK(counts.symlinks == 1);
  CHECK(counts.specials == 1);
  CHECK(counts.data_bytes == 4096 + 100 + 20 + 1);
  CHECK(counts.xattrs_not_copied == 2);

  nvj::test::TempDir dir;
  const std::string file = dir.file("populated.img");
  {
    std::ofstream out(file, std::ios::binary);
    std::vector<std::uint8_t> block(4096);
    for (std::uint64_t at = 0; at < o.device_bytes; at += block.size()) {
      image.read(at, block);
      out.write(reinterpret_cast<const char*>(block.data()), static_cast<std::streamsize>(block.size()));
    }
  }
  const auto fsck = nvj::cli::run({"e2fsck", "-fn", file});
  INFO(fsck.output);
  REQUIRE(fsck.status == 0);

  CHECK(debugfs(file, "cat /dir/sparse").find(sparse) != std::string::npos);
  const std::string sparse_stat = debugfs(file, "stat /dir/sparse");
  CHECK(sparse_stat.find("Size: 12388") != std::string::npos);
  CHECK(sparse_stat.find("Blockcount: 16") != std::string::npos);  // two 4 KiB blocks, in 512-byte units
  CHECK(sparse_stat.find("User:  1000   Group:   100") != std::string::npos);
  CHECK(debugfs(file, "stat /dir/second").find("Links: 2") != std::string::npos);
  CHECK(debugfs(file, "stat /dir/link").find("Fast link dest: \"sparse\"") != std::string::npos);
  CHECK(debugfs(file, "stat /fifo").find("Type: FIFO") != std::string::npos);
  CHECK(debugfs(file, "cat /lost+found/orphan").find('x') != std::string::npos);
  // Entries go in by name, whatever order the tree lists them in.
  const std::string listing = debugfs(file, "ls -p /dir");
  CHECK(listing.find("/link/") < listing.find("/second/"));
  CHECK(listing.find("/second/") < listing.find("/sparse/"));
}

}  // namespace populate_test
